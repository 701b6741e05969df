//! SAM filter expressions, as `samtools view -e EXPR` evaluates them: htslib 1.24's expression
//! language (`hts_expr.c`) over the record variables of `sam.c` (`bam_sym_lookup`).
//!
//! # Grammar, tightest first
//!
//! | level | operators | associativity |
//! |-------|-----------|---------------|
//! | primary | `( e )`, number, `"string"`, variable, `[XY]` aux tag, `func(e)` | |
//! | unary | `+p` `-p` (on a primary only), `!u` `~u` | right |
//! | multiplicative | `*` `/` `%` | left |
//! | additive | `+` `-` | left |
//! | bitwise and | `&` | left |
//! | bitwise xor | `^` | left |
//! | bitwise or | `\|` | left |
//! | comparison | `>` `>=` `<` `<=` | right (`a < b < c` is `a < (b < c)`) |
//! | equality | `==` `!=` `=~` `!~` | right |
//! | logical | `&&` `\|\|` (one level) | left |
//!
//! Numbers are doubles read by `strtod` (so `0x1F`, `1e3`, `inf`, `nan` work); integer
//! operators (`%`, bitwise, `~`, `!`) truncate to 64-bit first. Strings take `\" \\ \t \n \r`
//! escapes. Functions: `length min max avg` (of a string's bytes, so `avg(qual)` is the mean
//! Phred score), `exists default pow sqrt log exp`. Only spaces and tabs separate tokens.
//!
//! # Values and truth
//!
//! A value is a number, a string, or undefined (NaN, or a missing aux tag). Arithmetic and
//! comparisons with an undefined operand are undefined; undefined is false, `!undefined` is
//! true. Strings compare with `strcmp`; a string never equals a number. Any string, even `""`,
//! is true; a present aux tag is true even when it is 0 or empty (compare it, as in
//! `[NM] > 0`, to test its value; `exists([NM])` tests only its presence). `=~` needs strings on both sides (POSIX extended regex).
//! There is no short-circuit: both sides of `&&` / `||` are always evaluated.
//!
//! # Variables
//!
//! `cigar endpos flag flag.{paired,proper_pair,unmap,munmap,reverse,mreverse,read1,read2,
//! secondary,qcfail,dup,supplementary} hclen library mapq mpos mrefid mrname ncigar pnext pos
//! qlen qname qual refid rlen rname rnext sclen seq tlen`, and `[XY]` for aux tag `XY` (B-array
//! tags are an evaluation error, as in htslib). See `fields.rs` for their exact meanings.
//!
//! htslib parses the text anew for every record; here it is parsed once, and the evaluator
//! reproduces htslib's slot-by-slot behaviour (see `eval.rs`), quirks included.

mod eval;
mod fields;
pub mod number;
mod program;
mod syntax;
#[cfg(test)]
mod test_records;
mod value;

use crate::record::{Header, RecordRef};
use eval::{Context, run};
use program::Program;

/// A parsed filter expression, flattened so that evaluating it needs no recursion.
#[derive(Clone, Debug)]
pub struct Expr {
    program: Program,
}

/// Stack the parser needs per `(` (a parenthesis or a call: the only nesting it reads by
/// recursion), with room to spare: each descends through the dozen functions of the grammar's
/// levels. Measured in a debug build, where frames are largest: 10-12 KiB a level (65,000
/// nested parentheses, the most one argument holds, took 0.7 GB and 2.7 s there).
const STACK_PER_PAREN: usize = 16 << 10;
const PARSER_STACK_BASE: usize = 1 << 20;

/// Stack enough to parse `text`.
fn parser_stack(text: &str) -> usize {
    let parens = memchr::memchr_iter(b'(', text.as_bytes()).count();
    PARSER_STACK_BASE + parens.min(syntax::MAX_DEPTH) * STACK_PER_PAREN
}

impl Expr {
    /// Parses an htslib filter expression; Err is a one-line message such as htslib's.
    ///
    /// htslib only reports syntax errors when the first record is filtered (an input without
    /// records passes); callers that want that exact timing can hold the error until then. A
    /// regex literal that does not compile is reported by [`Expr::eval`], when first used, as
    /// in htslib.
    pub fn parse(text: &str) -> Result<Expr, String> {
        // Nesting is bounded by the text's length and by the limit, and needs stack in
        // proportion: the parser (and the flattening, which drops the tree) runs on a thread
        // whose stack is sized for it, so no text can overflow the caller's.
        let stack = parser_stack(text);
        let text = text.to_owned();
        let parser = std::thread::Builder::new()
            .name("mdsam-expr-parse".into())
            .stack_size(stack)
            .spawn(move || syntax::parse(&text).map(Program::compile))
            .map_err(|e| format!("cannot start the filter expression parser: {e}"))?;
        let program = parser.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic))?;
        Ok(Expr { program })
    }

    /// Evaluates on one record: Ok(true) keeps it. Err on evaluation errors samtools 1.24 treats
    /// as errors (arithmetic on strings, `=~` on non-strings, B-array tags, ...).
    pub fn eval(&self, record: &RecordRef<'_>, header: &Header) -> Result<bool, String> {
        let cx = Context { record: *record, header };
        let mut res = run(&self.program, &cx)?;
        // hts_filter_eval: a string result is true unless NULL; a number when non-zero.
        if res.is_str {
            res.is_true |= res.text.is_some();
        } else if res.exists() {
            res.is_true |= res.number != 0.0;
        }
        Ok(res.is_true)
    }
}

#[cfg(test)]
mod tests {
    use super::test_records::{Sam, header};
    use super::*;

    /// The record samtools' answers below were taken from:
    /// `r1 99 chr1 10 60 2H3S10M2S1H = 50 45 ACGTACGTACGTACG IIIIIIIIIIIIII!` with aux tags
    /// `NM:i:0 RG:Z:g1 XZ:Z: XF:f:1.5 XA:A:q XB:B:s,1,2 XC:i:3 XI:i:-5 XU:I:4000000000`.
    fn rich() -> Vec<u8> {
        Sam::mapped()
            .tag_i("NM", 0)
            .tag_z("RG", "g1")
            .tag_z("XZ", "")
            .tag_raw(b"XFf")
            .tag_raw(&1.5f32.to_le_bytes())
            .tag_raw(b"XAAq")
            .tag_raw(b"XBBs\x02\0\0\0\x01\0\x02\0")
            .tag_i("XC", 3)
            .tag_i("XI", -5)
            .tag_i("XU", 4_000_000_000)
            .bytes()
    }

    fn eval_on(bytes: &[u8], text: &str) -> Result<bool, String> {
        let expr = Expr::parse(text)?;
        expr.eval(&RecordRef::new(bytes), &header())
    }

    /// Asserts the keep/drop answer samtools 1.24 gives for each expression.
    fn check(bytes: &[u8], cases: &[(&str, bool)]) {
        for &(text, want) in cases {
            assert_eq!(eval_on(bytes, text), Ok(want), "{text}");
        }
    }

    fn check_errors(bytes: &[u8], texts: &[&str]) {
        for text in texts {
            assert!(eval_on(bytes, text).is_err(), "{text} should fail");
        }
    }

    #[test]
    fn samtools_test_suite_expressions() {
        let paired_read1 = Sam::mapped().tag_z("BC", "ACGT").bytes();
        check(
            &paired_read1,
            &[
                ("!(flag & 128) && (flag & 2)", true),
                (r#"[BC] == "ACGT" || [BC] == "AATTCCGG""#, true),
                ("[BC]", true),
                ("mapq >= 50", true),
                ("mapq >= 99", false),
                ("mapq >= 100", false),
            ],
        );
        let read2_no_bc = Sam { flag: 0x83, mapq: 100, ..Sam::mapped() }.bytes();
        check(
            &read2_no_bc,
            &[
                ("!(flag & 128) && (flag & 2)", false),
                (r#"[BC] == "ACGT" || [BC] == "AATTCCGG""#, false),
                ("[BC]", false),
                ("mapq >= 100", true),
            ],
        );
    }

    #[test]
    fn record_variables() {
        check(
            &rich(),
            &[
                ("pos == 10", true),
                ("mpos == 50 && pnext == 50", true),
                ("endpos == 19", true),
                ("hclen == 3", true),
                ("sclen == 5", true),
                ("qlen == 15", true),
                ("rlen == 10", true),
                ("ncigar == 5", true),
                ("tlen == 45", true),
                ("refid == 0 && mrefid == 0", true),
                (r#"rname == "chr1" && mrname == "chr1" && rnext == "chr1""#, true),
                (r#"cigar == "2H3S10M2S1H""#, true),
                (r#"seq == "ACGTACGTACGTACG""#, true),
                (r#"seq =~ "^ACGT""#, true),
                (r#"library == "libA""#, true),
                ("length(qual) == 15 && min(qual) == 0 && max(qual) == 40", true),
                ("avg(qual) > 37.3 && avg(qual) < 37.4", true),
                ("flag.paired && flag.read1 && flag.mreverse && flag.proper_pair", true),
                ("flag.paired == 1 && flag.mreverse == 32", true),
                ("flag.unmap || flag.munmap || flag.reverse || flag.read2", false),
                ("flag.secondary || flag.qcfail || flag.dup || flag.supplementary", false),
            ],
        );
    }

    #[test]
    fn unmapped_record_variables() {
        check(
            &Sam::unmapped().bytes(),
            &[
                (r#"rname == "*" && mrname == "*""#, true),
                (r#"cigar == "*""#, true),
                (r#"library == """#, true),
                ("library", true),
                ("length(seq) == 0", true),
                (r#"seq == """#, true),
                ("endpos == 0", true),
                ("pos == 0 && refid == -1", true),
                ("min(qual)", false),
                ("exists(min(seq))", false),
                ("avg(qual) == 0", true),
            ],
        );
    }

    #[test]
    fn aux_tags_are_true_when_present_even_if_zero_or_empty() {
        check(
            &rich(),
            &[
                ("[NM]", true),
                ("[NM] == 0", true),
                ("![NM]", false),
                ("[XZ]", true),
                ("![XZ]", false),
                ("length([XZ])", true),
                ("min([XZ])", true),
                ("default([NM], 5) == 0", true),
                ("[NM] + 0", false),
                ("[XF] > 1.4", true),
                (r#"[XA] == "q""#, true),
                ("[XA] > 1", false),
                ("[XI] == -5 && ~[XI] == 4", true),
                ("[XU] == 4000000000", true),
                ("[XU] & 1", false),
                ("[XC] * 2 == 6 && [XC] / 2 == 1.5", true),
                ("sqrt([XC]) > 1.7", true),
            ],
        );
    }

    #[test]
    fn b_array_tags_are_evaluation_errors() {
        assert_eq!(
            eval_on(&rich(), "exists([XB])"),
            Err("Aux type 'B not yet supported by filters".to_string())
        );
        check_errors(&rich(), &["[XB]", "[XB] == 1"]);
    }

    #[test]
    fn missing_tags_are_undefined() {
        check(
            &rich(),
            &[
                ("[XX]", false),
                ("![XX]", true),
                ("!![XX]", false),
                ("exists([XX])", false),
                ("!exists([XX])", true),
                ("[XX] == [YY]", false),
                (r#"[XX] == """#, false),
                ("[XX] != 1", false),
                ("qname == [XX]", false),
                ("[XX] + 1", false),
                ("![XX] + 1", true),
                ("-[XX]", false),
                ("exists(-[XX])", false),
                ("~[XX]", false),
                (r#""abc" * [XX]"#, false),
                ("[XX] && 1", false),
                ("[XX] || 1", true),
                ("[XX] || 0", false),
                ("!([XX] || 0)", true),
                ("!([XX] && 1)", true),
                ("[XX] || [YY]", false),
                ("!([XX] || [YY])", true),
                ("!(1 && [XX])", true),
                ("default([XX], 5) == 5", true),
                (r#"default([XX], qname) == "r1""#, true),
                ("length([XX])", false),
                ("exists(length([XX]))", true),
                ("!length([XX])", true),
                ("pow([XX], 2)", false),
                // sqrt of a missing tag reads its zeroed number: defined and 0.
                ("sqrt([XX])", false),
                ("exists(sqrt([XX]))", true),
            ],
        );
    }

    #[test]
    fn modulo_follows_htslib_integer_conversion() {
        check(
            &rich(),
            &[
                // NaN becomes i64::MIN, and i64::MIN % 5 == -3.
                ("[XX] % 5", true),
                ("5 % [XX]", false),
                ("5 % 0", false),
                ("10 % 3 == 1", true),
                ("-7 % 3 == -1", true),
                ("7.9 % 3 == 1", true),
                ("[XC] % 2", true),
            ],
        );
        // samtools dies of SIGFPE here.
        check_errors(&rich(), &["5 % 0.5"]);
    }

    #[test]
    fn division_and_undefined_numbers() {
        check(
            &rich(),
            &[
                ("5/0", true),
                ("0/0", false),
                ("!(0/0)", true),
                ("nan", false),
                ("!nan", true),
                ("exists(nan)", false),
                ("inf", true),
                ("INF > 1", true),
                ("-inf < 0", true),
                ("inf * 0", false),
                ("inf - inf", true),
                ("exists(inf - inf)", true),
                ("nan(1) == 1", false),
            ],
        );
    }

    #[test]
    fn strings_compare_bytewise_and_never_equal_numbers() {
        check(
            &rich(),
            &[
                (r#""""#, true),
                (r#"!"""#, false),
                ("qname", true),
                ("!qname", false),
                ("qname == 5", false),
                ("5 == qname", false),
                ("qname != 5", true),
                ("5 != qname", true),
                ("qname > 5", false),
                (r#""r1" < "r2""#, true),
                (r#"qname < "r2""#, true),
                (r#"qname >= "r2""#, false),
                (r#""ab" > "a""#, true),
                (r#""B" > "a""#, false),
                (r#"qual == "II""#, false),
                // htslib compares the string buffer left behind by length().
                (r#"qname == length("r1")"#, true),
                (r#"qname == length("x")"#, false),
                (r#"qname != length("r1")"#, false),
            ],
        );
        check_errors(
            &rich(),
            &[r#""a" + 1"#, "0 && qname * 2", "pow(qname, 2)", "length(1)", "min(1)"],
        );
    }

    #[test]
    fn regex_matching() {
        let dotted = Sam { name: "a.b", ..Sam::mapped() }.tag_z("RG", "g1").bytes();
        check(
            &dotted,
            &[
                (r#"qname =~ "^a\.b$""#, true),
                (r#"qname =~ "a.b""#, true),
                (r#"qname =~ "A""#, false),
                (r#"qname !~ "b$""#, false),
                (r#"qname =~ "\<b""#, true),
                (r#"qname =~ "[[:alpha:]]\.[[:alpha:]]""#, true),
                (r#"qname =~ "\d""#, false),
                (r#""d" =~ "\d""#, true),
                (r#"qname =~ "(a|x)+""#, true),
                (r#"qname =~ """#, true),
                ("qname =~ [RG]", false),
                ("qname =~ [YY]", false),
                (r#"[RG] =~ "g""#, true),
                (r#"[XX] =~ "a""#, false),
                (r#"!([XX] =~ "a")"#, true),
                ("[XX] =~ [YY]", false),
                (r#""a\tb" =~ "a\tb""#, true),
                (r#""ü" =~ "^.$""#, true),
            ],
        );
        check_errors(&dotted, &["qname =~ 5"]);
        // A bad pattern fails only once it is matched against a string, as in htslib.
        let bad = Expr::parse(r#"[XX] =~ "[" || qname =~ "(""#).unwrap();
        let header = header();
        assert!(
            bad.eval(&RecordRef::new(&dotted), &header).unwrap_err().starts_with("Failed regex")
        );
        let bad_unused = Expr::parse(r#"[XX] =~ "[""#).unwrap();
        assert_eq!(bad_unused.eval(&RecordRef::new(&dotted), &header), Ok(false));
    }

    #[test]
    fn operator_precedence_and_chains() {
        check(
            &rich(),
            &[
                ("1 + 2 * 3 == 7", true),
                ("(1+2)*3 == 9", true),
                ("1 | 2 ^ 3 & 4", true),
                ("(1 | 2 ^ 3 & 4) == 1", false),
                ("7 & 3 == 3", true),
                ("~0 == -1", true),
                ("!5 == 0", true),
                ("1 == 1 == 1", true),
                ("2 == 2 == 2", false),
                ("3 < 2 < 1", false),
                ("1 || 0 && 0", false),
                ("2 - 3 - 4 == -5", true),
                ("12 / 4 / 3 == 1", true),
                ("--5 == 5 && -+5 == -5 && +-5 == -5 && - 5 == -5", true),
                ("5 - -2 == 7 && 3*-2 == -6 && 2--3==5", true),
                ("!-5", false),
                ("~-1", false),
                ("!0.5", true),
                ("!-0.5", false),
                ("(-3.7 | 0) == -3 && ~2.9 == -3", true),
                ("2 ^ 1 == 3", true),
                ("1 ^ 1", false),
                ("0x10 == 16 && 0X1f == 31 && 1e2 == 100 && .5 == 0.5", true),
                (" mapq == 60 ", true),
                ("mapq==60&&pos==10", true),
                ("mapq\t==\t60", true),
            ],
        );
        // The bitwise chain keeps going after an undefined operand and still type-checks.
        check(&rich(), &[(r#"[XX] & 1 & "a""#, false)]);
        check_errors(&rich(), &[r#"1 & [XX] & "a""#]);
    }

    #[test]
    fn functions() {
        check(
            &rich(),
            &[
                ("pow(2, 10) == 1024", true),
                ("pow(2,-1) == 0.5", true),
                ("pow(-1, 0.5)", false),
                ("exists(pow(-1, 0.5))", false),
                ("pow(0,-1)", true),
                ("sqrt(16) == 4 && log(1) == 0 && exp(0) == 1", true),
                ("sqrt(-1)", false),
                ("!sqrt(-1)", true),
                ("log(0) < 0", true),
                // On a string these read the slot's zero number.
                (r#"sqrt("a")"#, false),
                ("log(qname)", true),
                ("exp(qname)", true),
                ("exists(0)", true),
                ("default(nan, 2) == 2 && default(0, 2) == 0", true),
                (r#"min("")"#, false),
                (r#"exists(min(""))"#, false),
                (r#"avg("") == 0 && avg("ab") == 97.5 && max("ab") == 98"#, true),
                (r#"length("a\tb") == 3"#, true),
                ("length(qname) == 2", true),
            ],
        );
    }

    #[test]
    fn syntax_errors_are_reported_at_parse() {
        for bad in [
            "mapq >",
            "flags",
            "flag.bogus",
            "(1",
            "1)",
            "foo",
            "length (qname)",
            "pow(2 ,3)",
            "-~5",
        ] {
            let err = Expr::parse(bad).unwrap_err();
            assert!(!err.contains('\n'), "{bad}: {err}");
        }
    }

    #[test]
    fn expr_is_send_and_sync() {
        fn assert_send_sync<T: Send + Sync>() {}
        assert_send_sync::<Expr>();
    }

    #[test]
    fn nesting_counts_against_one_limit() {
        let too_deep = Some("Filter expression is nested too deeply".to_string());
        // The whole expression is the first level. (`.err()`: a parsed program is too long to
        // print in a failure message.)
        let nots = format!("{}1", "!".repeat(syntax::MAX_DEPTH - 1));
        assert_eq!(Expr::parse(&nots).err(), None);
        assert_eq!(Expr::parse(&format!("!{nots}")).err(), too_deep);
        let equalities = vec!["1"; syntax::MAX_DEPTH + 1].join("==");
        assert_eq!(Expr::parse(&equalities).err(), too_deep);
        // Parentheses and the operators inside them add up.
        let mixed = format!("(({}1 < 2))", "~".repeat(syntax::MAX_DEPTH - 2));
        assert_eq!(Expr::parse(&mixed).err(), too_deep);
        let fits = format!("(({}1 < 2))", "~".repeat(syntax::MAX_DEPTH - 3));
        assert_eq!(Expr::parse(&fits).err(), None);
    }

    #[test]
    fn long_chains_evaluate_without_recursion() {
        let bytes = Sam::mapped().bytes();
        // 1 < (1 < (... (1 < 1))) is 0; 1 == (1 == ...) is 1; !!...!1 with an even count is 1.
        assert_eq!(eval_on(&bytes, &vec!["1"; 50_000].join("<")), Ok(false));
        assert_eq!(eval_on(&bytes, &vec!["1"; 50_000].join("==")), Ok(true));
        assert_eq!(eval_on(&bytes, &format!("{}1", "!".repeat(100_000))), Ok(true));
        let negations = format!("{}5{}", "-(".repeat(20_000), ")".repeat(20_000));
        assert_eq!(eval_on(&bytes, &format!("{negations} == 5")), Ok(true));
        let nested_sums = format!("{}1{}", "1+(".repeat(20_000), ")".repeat(20_000));
        assert_eq!(eval_on(&bytes, &format!("{nested_sums} == 20001")), Ok(true));
    }
}
