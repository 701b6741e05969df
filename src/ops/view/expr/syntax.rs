//! The parser: expression text to [`Node`]s, following the recursive descent of htslib's
//! `hts_expr.c` function for function, so precedence, associativity and the odd corners (a comma
//! must follow a function argument directly, unary `-` takes only a primary) come out the same.
//!
//! htslib parses while it evaluates; the syntax never depends on the data, so parsing once up
//! front accepts and rejects exactly the same texts.

use regex::bytes::Regex;

use super::fields::{Field, Symbol, parse_symbol};
use super::number::parse_c_double;
use crate::ops::posix_regex;

/// One-argument functions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Func {
    /// Length of a string.
    Length,
    /// Smallest byte of a string (NaN when empty).
    Min,
    /// Largest byte of a string (NaN when empty).
    Max,
    /// Mean byte value of a string (0 when empty).
    Avg,
    /// Whether the argument is defined or forced true.
    Exists,
    Exp,
    Log,
    Sqrt,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MulOp {
    Mul,
    Div,
    Rem,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BitOp {
    And,
    Xor,
    Or,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CmpOp {
    Ge,
    Gt,
    Le,
    Lt,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LogicOp {
    And,
    Or,
}

/// A string-literal right-hand side of `=~`, compiled once.
#[derive(Clone, Debug)]
pub enum Pattern {
    Compiled(Regex),
    /// A literal that does not compile. htslib only compiles (and so only fails) when it first
    /// matches two non-NULL strings, so the error waits for evaluation.
    Invalid(String),
}

/// `!` and `~`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PrefixOp {
    Not,
    BitNot,
}

/// `==` / `!=` and `=~` / `!~`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EqualOp {
    Equal { negate: bool },
    Match { negate: bool },
}

/// An operand of an `==`-level chain: an expression, or the compiled literal of a final `=~`.
#[derive(Clone, Debug)]
pub enum Operand {
    Node(Node),
    Pattern(Pattern),
}

/// An expression tree. Chains of one precedence level are flat lists, which keeps the tree (and
/// the recursion that walks it) shallow however long they are: left-associative chains keep
/// their operands in order because htslib reuses one value slot across a chain, and the
/// comparison and equality chains nest to the right (`a < b < c` is `a < (b < c)`).
#[derive(Clone, Debug)]
pub enum Node {
    Number(f64),
    Text(Box<[u8]>),
    Field(Field),
    Aux([u8; 2]),
    Call(Func, Box<Node>),
    Default(Box<Node>, Box<Node>),
    Pow(Box<Node>, Box<Node>),
    /// Unary `+` / `-` (on a primary only, as in htslib).
    Sign {
        negate: bool,
        operand: Box<Node>,
    },
    /// A run of `!` and `~`, in text order (the last applies first).
    Prefix(Vec<PrefixOp>, Box<Node>),
    Mul(Box<Node>, Vec<(MulOp, Node)>),
    /// `+` / `-` chain: `true` marks subtraction.
    Add(Box<Node>, Vec<(bool, Node)>),
    Bits(BitOp, Box<Node>, Vec<Node>),
    /// `>= > <= <`, nesting to the right.
    Comparison(Box<Node>, Vec<(CmpOp, Node)>),
    /// `== != =~ !~`, nesting to the right; only the last operand can be a [`Operand::Pattern`].
    Equality(Box<Node>, Vec<(EqualOp, Operand)>),
    Logic(Box<Node>, Vec<(LogicOp, Node)>),
}

/// htslib's message when it has nothing more specific to say.
pub const GENERIC_ERROR: &str = "Couldn't process filter expression";
const MISSING_PAREN: &str = "Missing ')'";
/// The deepest nesting of parentheses, function calls, unary operators and right-nested `==` or
/// `<` chains, counted together. samtools takes 130,000 `!`s (its unary operators loop), so the
/// limit is above anything one command-line argument can hold (Linux's `MAX_ARG_STRLEN`, 128
/// KiB); [`super::Expr::parse`] runs the parser on a stack sized for its text.
pub const MAX_DEPTH: usize = 1 << 17;
const TOO_DEEP: &str = "Filter expression is nested too deeply";

type Parsed = Result<(Node, usize), String>;

/// Parses a whole expression; trailing text other than blanks is an error, as in htslib.
pub fn parse(text: &str) -> Result<Node, String> {
    // The C code sees a NUL-terminated string.
    let bytes = text.as_bytes();
    let bytes = &bytes[..memchr::memchr(0, bytes).unwrap_or(bytes.len())];
    let (node, end) = Parser { text: bytes, depth: 0 }.expression(0)?;
    if skip_blanks(bytes, end) < bytes.len() {
        return Err(format!("Unable to parse expression at {}", String::from_utf8_lossy(bytes)));
    }
    Ok(node)
}

/// htslib's `ws()`: spaces and tabs only.
fn skip_blanks(text: &[u8], mut at: usize) -> usize {
    while matches!(text.get(at), Some(b' ' | b'\t')) {
        at += 1;
    }
    at
}

struct Parser<'t> {
    text: &'t [u8],
    depth: usize,
}

impl Parser<'_> {
    fn at(&self, i: usize) -> u8 {
        self.text.get(i).copied().unwrap_or(0)
    }

    /// One level deeper: a parenthesis or call, a prefix operator or a right-nesting operator.
    /// The caller steps back up once the level is read.
    fn descend(&mut self) -> Result<(), String> {
        if self.depth >= MAX_DEPTH {
            return Err(TOO_DEEP.to_string());
        }
        self.depth += 1;
        Ok(())
    }

    /// A whole expression, the one place the parser recurses (`(`, function arguments).
    fn expression(&mut self, start: usize) -> Parsed {
        self.descend()?;
        let parsed = self.logic(start);
        self.depth -= 1;
        parsed
    }

    /// `&&` and `||`: one level, left to right.
    fn logic(&mut self, start: usize) -> Parsed {
        let (first, mut end) = self.equality(start)?;
        let mut rest = Vec::new();
        loop {
            let op_at = skip_blanks(self.text, end);
            let op = match (self.at(op_at), self.at(op_at + 1)) {
                (b'&', b'&') => LogicOp::And,
                (b'|', b'|') => LogicOp::Or,
                _ => break,
            };
            let (operand, operand_end) = self.equality(op_at + 2)?;
            rest.push((op, operand));
            end = operand_end;
        }
        Ok((chain(first, rest, Node::Logic), end))
    }

    /// `== != =~ !~`: a chain nesting to the right, read in a loop.
    fn equality(&mut self, start: usize) -> Parsed {
        let (first, mut end) = self.comparison(start)?;
        let mut rest = Vec::new();
        loop {
            let op_at = skip_blanks(self.text, end);
            let op = match (self.at(op_at), self.at(op_at + 1)) {
                (b'=', b'=') => EqualOp::Equal { negate: false },
                (b'!', b'=') => EqualOp::Equal { negate: true },
                (b'=', b'~') => EqualOp::Match { negate: false },
                (b'!', b'~') => EqualOp::Match { negate: true },
                _ => break,
            };
            self.descend()?;
            let (operand, operand_end) = self.comparison(op_at + 2)?;
            rest.push((op, Operand::Node(operand)));
            end = operand_end;
        }
        self.depth -= rest.len();
        // `=~` compiles its right side once when that is a string literal, and only the last
        // operand stands alone on the right.
        if let Some((EqualOp::Match { .. }, operand)) = rest.last_mut()
            && let Operand::Node(Node::Text(pattern)) = operand
        {
            *operand = Operand::Pattern(match posix_regex::compile(pattern) {
                Ok(regex) => Pattern::Compiled(regex),
                Err(message) => Pattern::Invalid(message),
            });
        }
        Ok((chain(first, rest, Node::Equality), end))
    }

    /// `>= > <= <`: a chain nesting to the right, read in a loop.
    fn comparison(&mut self, start: usize) -> Parsed {
        let (first, mut end) = self.bits(BitOp::Or, start)?;
        let mut rest = Vec::new();
        loop {
            let op_at = skip_blanks(self.text, end);
            let (op, width) = match (self.at(op_at), self.at(op_at + 1)) {
                (b'>', b'=') => (CmpOp::Ge, 2),
                (b'>', _) => (CmpOp::Gt, 1),
                (b'<', b'=') => (CmpOp::Le, 2),
                (b'<', _) => (CmpOp::Lt, 1),
                _ => break,
            };
            self.descend()?;
            let (operand, operand_end) = self.bits(BitOp::Or, op_at + width)?;
            rest.push((op, operand));
            end = operand_end;
        }
        self.depth -= rest.len();
        Ok((chain(first, rest, Node::Comparison), end))
    }

    /// `|`, then `^`, then `&` (three levels, tighter in that order; never `||` or `&&`).
    fn bits(&mut self, op: BitOp, start: usize) -> Parsed {
        let (symbol, tighter) = match op {
            BitOp::Or => (b'|', Some(BitOp::Xor)),
            BitOp::Xor => (b'^', Some(BitOp::And)),
            BitOp::And => (b'&', None),
        };
        let operand = |p: &mut Self, at: usize| match tighter {
            Some(next) => p.bits(next, at),
            None => p.additive(at),
        };
        let (first, mut end) = operand(self, start)?;
        let mut rest = Vec::new();
        loop {
            let op_at = skip_blanks(self.text, end);
            if self.at(op_at) != symbol || (op != BitOp::Xor && self.at(op_at + 1) == symbol) {
                break;
            }
            let (next, next_end) = operand(self, op_at + 1)?;
            rest.push(next);
            end = next_end;
        }
        Ok((chain(first, rest, |first, rest| Node::Bits(op, first, rest)), end))
    }

    fn additive(&mut self, start: usize) -> Parsed {
        let (first, mut end) = self.multiplicative(start)?;
        let mut rest = Vec::new();
        loop {
            let op_at = skip_blanks(self.text, end);
            let subtract = match self.at(op_at) {
                b'+' => false,
                b'-' => true,
                _ => break,
            };
            let (operand, operand_end) = self.multiplicative(op_at + 1)?;
            rest.push((subtract, operand));
            end = operand_end;
        }
        Ok((chain(first, rest, Node::Add), end))
    }

    fn multiplicative(&mut self, start: usize) -> Parsed {
        let (first, mut end) = self.unary(start)?;
        let mut rest = Vec::new();
        loop {
            let op_at = skip_blanks(self.text, end);
            let op = match self.at(op_at) {
                b'*' => MulOp::Mul,
                b'/' => MulOp::Div,
                b'%' => MulOp::Rem,
                _ => break,
            };
            let (operand, operand_end) = self.unary(op_at + 1)?;
            rest.push((op, operand));
            end = operand_end;
        }
        Ok((chain(first, rest, Node::Mul), end))
    }

    /// `+x` and `-x` take a primary; `!x` and `~x` take another unary expression (read in a
    /// loop: samtools takes 130,000 of them).
    fn unary(&mut self, start: usize) -> Parsed {
        let mut at = skip_blanks(self.text, start);
        let mut prefix = Vec::new();
        while let op @ (b'!' | b'~') = self.at(at) {
            self.descend()?;
            prefix.push(if op == b'!' { PrefixOp::Not } else { PrefixOp::BitNot });
            at = skip_blanks(self.text, at + 1);
        }
        let (operand, end) = match self.at(at) {
            sign @ (b'+' | b'-') => {
                let (operand, end) = self.primary(at + 1)?;
                (Node::Sign { negate: sign == b'-', operand: Box::new(operand) }, end)
            }
            _ => self.primary(at)?,
        };
        self.depth -= prefix.len();
        if prefix.is_empty() {
            return Ok((operand, end));
        }
        Ok((Node::Prefix(prefix, Box::new(operand)), end))
    }

    /// `( expr )`, a number, a string, a variable or aux tag, or a function call — tried in that
    /// order, as htslib's `simple_expr` does.
    fn primary(&mut self, start: usize) -> Parsed {
        let at = skip_blanks(self.text, start);
        if self.at(at) == b'(' {
            let (inner, end) = self.expression(at + 1)?;
            return Ok((inner, self.close_paren(end)?));
        }
        // The number reader also skips newlines and other C whitespace, as strtod does.
        if let Some((value, used)) = parse_c_double(&self.text[at..]) {
            return Ok((Node::Number(value), at + used));
        }
        if self.at(at) == b'"' {
            let (text, end) = string_literal(self.text, at)?;
            return Ok((Node::Text(text), end));
        }
        match parse_symbol(&self.text[at..]) {
            Ok(Some((Symbol::Field(field), used))) => Ok((Node::Field(field), at + used)),
            Ok(Some((Symbol::Aux(tag), used))) => Ok((Node::Aux(tag), at + used)),
            Ok(None) => self.call(at),
            Err(flag_error) => Err(flag_error),
        }
    }

    /// `name(args)`: the `(` must follow the name directly.
    fn call(&mut self, at: usize) -> Parsed {
        const ONE_ARG: &[(&str, Func)] = &[
            ("avg(", Func::Avg),
            ("exists(", Func::Exists),
            ("exp(", Func::Exp),
            ("length(", Func::Length),
            ("log(", Func::Log),
            ("min(", Func::Min),
            ("max(", Func::Max),
            ("sqrt(", Func::Sqrt),
        ];
        let rest = &self.text[at..];
        if let Some(&(name, func)) =
            ONE_ARG.iter().find(|(name, _)| rest.starts_with(name.as_bytes()))
        {
            let (arg, end) = self.expression(at + name.len())?;
            return Ok((Node::Call(func, Box::new(arg)), self.close_paren(end)?));
        }
        for (name, is_pow) in [("default(", false), ("pow(", true)] {
            if rest.starts_with(name.as_bytes()) {
                let (first, end) = self.expression(at + name.len())?;
                // The comma must come right after the first argument: `pow(2 ,3)` fails.
                if self.at(end) != b',' {
                    return Err(GENERIC_ERROR.to_string());
                }
                let (second, end) = self.expression(skip_blanks(self.text, end + 1))?;
                let (first, second) = (Box::new(first), Box::new(second));
                let node =
                    if is_pow { Node::Pow(first, second) } else { Node::Default(first, second) };
                return Ok((node, self.close_paren(end)?));
            }
        }
        Err(GENERIC_ERROR.to_string())
    }

    fn close_paren(&self, end: usize) -> Result<usize, String> {
        let at = skip_blanks(self.text, end);
        if self.at(at) == b')' { Ok(at + 1) } else { Err(MISSING_PAREN.to_string()) }
    }
}

/// A chain node, or its only operand when there is no operator.
fn chain<T>(first: Node, rest: Vec<T>, build: impl FnOnce(Box<Node>, Vec<T>) -> Node) -> Node {
    if rest.is_empty() { first } else { build(Box::new(first), rest) }
}

/// A `"..."` literal starting at `text[at]`. `\"`, `\\`, `\t`, `\n` and `\r` are escapes; any
/// other backslash is kept with the character after it.
fn string_literal(text: &[u8], at: usize) -> Result<(Box<[u8]>, usize), String> {
    let mut out = Vec::new();
    let mut i = at + 1;
    loop {
        match text.get(i) {
            None => return Err(GENERIC_ERROR.to_string()),
            Some(b'"') => return Ok((out.into_boxed_slice(), i + 1)),
            Some(b'\\') => {
                let Some(&next) = text.get(i + 1) else { return Err(GENERIC_ERROR.to_string()) };
                match next {
                    b'"' | b'\\' => out.push(next),
                    b't' => out.push(b'\t'),
                    b'n' => out.push(b'\n'),
                    b'r' => out.push(b'\r'),
                    _ => out.extend_from_slice(&[b'\\', next]),
                }
                i += 2;
            }
            Some(&b) => {
                out.push(b);
                i += 1;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shape(text: &str) -> String {
        fn show(n: &Node) -> String {
            match n {
                Node::Number(v) => format!("{v}"),
                Node::Text(t) => format!("{:?}", String::from_utf8_lossy(t)),
                Node::Field(f) => format!("{f:?}"),
                Node::Aux(t) => format!("[{}]", String::from_utf8_lossy(t)),
                Node::Call(f, a) => format!("{f:?}({})", show(a)),
                Node::Default(a, b) => format!("default({}, {})", show(a), show(b)),
                Node::Pow(a, b) => format!("pow({}, {})", show(a), show(b)),
                Node::Sign { negate, operand } => {
                    format!("{}{}", if *negate { "-" } else { "+" }, show(operand))
                }
                Node::Prefix(ops, a) => {
                    let ops: String =
                        ops.iter().map(|op| if *op == PrefixOp::Not { '!' } else { '~' }).collect();
                    format!("{ops}{}", show(a))
                }
                Node::Mul(a, rest) => {
                    rest.iter().fold(show(a), |acc, (op, b)| format!("({acc} {op:?} {})", show(b)))
                }
                Node::Add(a, rest) => rest.iter().fold(show(a), |acc, (sub, b)| {
                    format!("({acc} {} {})", if *sub { "-" } else { "+" }, show(b))
                }),
                Node::Bits(op, a, rest) => {
                    rest.iter().fold(show(a), |acc, b| format!("({acc} {op:?} {})", show(b)))
                }
                Node::Comparison(a, rest) => right_nested(a, rest, |op| format!("{op:?}")),
                Node::Equality(a, rest) => {
                    let operands: Vec<(EqualOp, Node)> = rest
                        .iter()
                        .map(|(op, o)| match o {
                            Operand::Node(n) => (*op, n.clone()),
                            Operand::Pattern(_) => (*op, Node::Text(b"re".to_vec().into())),
                        })
                        .collect();
                    right_nested(a, &operands, |op| match op {
                        EqualOp::Equal { negate: false } => "==".into(),
                        EqualOp::Equal { negate: true } => "!=".into(),
                        EqualOp::Match { negate: false } => "=~".into(),
                        EqualOp::Match { negate: true } => "!~".into(),
                    })
                }
                Node::Logic(a, rest) => {
                    rest.iter().fold(show(a), |acc, (op, b)| format!("({acc} {op:?} {})", show(b)))
                }
            }
        }
        /// `a op1 (b op2 c)` for a chain nesting to the right.
        fn right_nested<Op: Copy>(
            first: &Node,
            rest: &[(Op, Node)],
            name: impl Fn(Op) -> String,
        ) -> String {
            let mut operands: Vec<&Node> = vec![first];
            operands.extend(rest.iter().map(|(_, n)| n));
            let mut shown = show(operands[rest.len()]);
            for (i, (op, _)) in rest.iter().enumerate().rev() {
                shown = format!("({} {} {shown})", show(operands[i]), name(*op));
            }
            shown
        }
        show(&parse(text).unwrap())
    }

    #[test]
    fn precedence_follows_htslib_table() {
        assert_eq!(shape("1 + 2 * 3"), "(1 + (2 Mul 3))");
        assert_eq!(shape("7 & 3 == 3"), "((7 And 3) == 3)");
        assert_eq!(shape("1 | 2 ^ 3 & 4"), "(1 Or (2 Xor (3 And 4)))");
        assert_eq!(shape("1 < 2 == 1"), "((1 Lt 2) == 1)");
        assert_eq!(shape("1 || 0 && 0"), "((1 Or 0) And 0)");
        assert_eq!(shape("!(flag & 128) && (flag & 2)"), "(!(Flag And 128) And (Flag And 2))");
    }

    #[test]
    fn equality_and_comparison_nest_to_the_right() {
        assert_eq!(shape("2 == 2 == 2"), "(2 == (2 == 2))");
        assert_eq!(shape("3 < 2 < 1"), "(3 Lt (2 Lt 1))");
        assert_eq!(shape("2 - 3 - 4"), "((2 - 3) - 4)");
    }

    #[test]
    fn unary_sign_takes_only_a_primary() {
        assert_eq!(shape("--5"), "--5");
        assert_eq!(shape("!-5"), "!-5");
        assert!(parse("-~5").is_err());
        assert!(parse("---5").is_err());
    }

    #[test]
    fn names_match_as_prefixes() {
        assert_eq!(shape("flag.mreverse"), "FlagBit(32)");
        assert_eq!(shape("pnext + mpos"), "(MatePos + MatePos)");
        assert_eq!(parse("flags").unwrap_err(), "Unable to parse expression at flags");
        assert_eq!(parse("flag.bogus").unwrap_err(), "Unrecognised flag string");
        assert_eq!(shape("[X1]"), "[X1]");
    }

    #[test]
    fn function_syntax_is_strict_about_spacing() {
        assert_eq!(shape("length( qname )"), "Length(QueryName)");
        assert_eq!(shape("pow(2, 3 )"), "pow(2, 3)");
        assert_eq!(shape("default( [XX],1)"), "default([XX], 1)");
        assert!(parse("length (qname)").is_err());
        assert!(parse("pow(2 ,3)").is_err());
        assert!(parse("default([XX] ,1)").is_err());
        assert!(parse("sqrt(4").is_err());
    }

    #[test]
    fn string_escapes() {
        assert_eq!(shape(r#""a\"b\\c\td""#), r#""a\"b\\c\td""#);
        assert_eq!(shape(r#""a\qb""#), r#""a\\qb""#);
        assert!(parse(r#""abc"#).is_err());
    }

    #[test]
    fn syntax_errors_use_htslib_messages() {
        assert_eq!(parse("(1").unwrap_err(), "Missing ')'");
        assert_eq!(parse("1)").unwrap_err(), "Unable to parse expression at 1)");
        assert_eq!(parse("mapq\n==255").unwrap_err(), "Unable to parse expression at mapq\n==255");
        assert_eq!(parse("mapq = 5").unwrap_err(), "Unable to parse expression at mapq = 5");
        for bad in ["", " ", "1 ==", "1 +", "foo", "2 ** 3", "\"abc"] {
            assert_eq!(parse(bad).unwrap_err(), GENERIC_ERROR, "{bad:?}");
        }
        assert!(matches!(
            parse(r#"qname =~ "a{""#),
            Ok(Node::Equality(_, rest))
                if matches!(&rest[0].1, Operand::Pattern(Pattern::Invalid(m)) if m.starts_with("Failed regex"))
        ));
        // Deep nesting is tested through `Expr::parse`, which gives the parser the stack it needs.
        let deep = format!("{}1{}", "(".repeat(60), ")".repeat(60));
        assert_eq!(shape(&deep), "1");
    }

    #[test]
    fn blanks_and_numbers_follow_c() {
        assert_eq!(shape("\n255"), "255");
        assert_eq!(shape("mapq\t==\t255"), "(Mapq == 255)");
        assert_eq!(shape("0x10"), "16");
        assert_eq!(shape("5-3"), "(5 - 3)");
    }
}
