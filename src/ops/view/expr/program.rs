//! A parsed expression flattened into a list of steps over a stack of value slots, so that
//! evaluating (and cloning, and dropping) a deeply nested expression needs no recursion: an
//! expression samtools accepts can nest thousands of levels deep, past what a worker thread's
//! stack holds when every level is a call.
//!
//! Each step works on the top slot, the slot a node of the tree would have written into; a step
//! that starts an operand's own slot pushes a fresh one, exactly where `eval.rs`' tree walk took
//! a fresh `hts_expr_val_t`, so htslib's slot sharing (and its stale-value quirks) is kept.

use super::fields::Field;
use super::syntax::{
    BitOp, CmpOp, EqualOp, Func, LogicOp, MulOp, Node, Operand, Pattern, PrefixOp,
};

#[derive(Clone, Debug)]
pub enum Op {
    /// Loads a leaf into the top slot.
    Number(f64),
    Text(Box<[u8]>),
    Field(Field),
    Aux([u8; 2]),
    /// Applies a one-argument function or unary operator to the top slot.
    Call(Func),
    Sign {
        negate: bool,
    },
    Not,
    BitNot,
    /// Pushes a fresh slot for the next operand.
    Push,
    /// Combines the top slot into the one below it and pops it.
    Default,
    Pow,
    Compare(CmpOp),
    Equal {
        negate: bool,
    },
    Logic(LogicOp),
    /// `=~` / `!~` against the pattern in the top slot, which is popped.
    MatchDynamic {
        negate: bool,
    },
    /// `=~` / `!~` of the top slot against a literal pattern.
    Match {
        negate: bool,
        pattern: Pattern,
    },
    /// One step of a chain whose operands share the top slot, combined into the one below it;
    /// the shared slot stays until [`Op::EndChain`].
    Mul(MulOp),
    Add {
        subtract: bool,
    },
    Bits(BitOp),
    /// Pops a chain's shared slot; a bitwise chain that met an undefined operand becomes
    /// undefined then.
    EndChain,
}

/// The steps of one expression and the most slots they hold at once.
#[derive(Clone, Debug)]
pub struct Program {
    pub ops: Vec<Op>,
    pub max_slots: usize,
}

impl Program {
    /// Flattens `root`, taking it apart as it goes (the nodes are dropped one level at a time
    /// by the walk itself). Recursive: call it where the parser ran, with the stack it needed.
    pub fn compile(root: Node) -> Program {
        let mut program = Program { ops: Vec::new(), max_slots: 1 };
        program.emit(root, 1);
        program
    }

    /// Appends the steps of `node`, which writes into slot number `slots` (1 is the result).
    fn emit(&mut self, node: Node, slots: usize) {
        self.max_slots = self.max_slots.max(slots);
        let operand = slots + 1;
        match node {
            Node::Number(v) => self.ops.push(Op::Number(v)),
            Node::Text(t) => self.ops.push(Op::Text(t)),
            Node::Field(f) => self.ops.push(Op::Field(f)),
            Node::Aux(tag) => self.ops.push(Op::Aux(tag)),
            Node::Call(func, arg) => {
                self.emit(*arg, slots);
                self.ops.push(Op::Call(func));
            }
            Node::Sign { negate, operand } => {
                self.emit(*operand, slots);
                self.ops.push(Op::Sign { negate });
            }
            Node::Prefix(prefix, arg) => {
                self.emit(*arg, slots);
                // The operator nearest the operand applies first.
                self.ops.extend(prefix.iter().rev().map(|op| match op {
                    PrefixOp::Not => Op::Not,
                    PrefixOp::BitNot => Op::BitNot,
                }));
            }
            Node::Default(value, fallback) => {
                self.emit(*value, slots);
                self.ops.push(Op::Push);
                self.emit(*fallback, operand);
                self.ops.push(Op::Default);
            }
            Node::Pow(base, exponent) => {
                self.emit(*base, slots);
                self.ops.push(Op::Push);
                self.emit(*exponent, operand);
                self.ops.push(Op::Pow);
            }
            Node::Comparison(first, rest) => {
                let rest = rest.into_iter().map(|(op, n)| (Op::Compare(op), Operand::Node(n)));
                self.right_nested(*first, rest, slots);
            }
            Node::Equality(first, rest) => {
                let rest = rest.into_iter().map(|(op, operand)| {
                    // A literal pattern's step becomes `Op::Match` in `right_nested`.
                    let step = match op {
                        EqualOp::Equal { negate } => Op::Equal { negate },
                        EqualOp::Match { negate } => Op::MatchDynamic { negate },
                    };
                    (step, operand)
                });
                self.right_nested(*first, rest, slots);
            }
            Node::Logic(first, rest) => {
                self.emit(*first, slots);
                for (op, node) in rest {
                    self.ops.push(Op::Push);
                    self.emit(node, operand);
                    self.ops.push(Op::Logic(op));
                }
            }
            Node::Mul(first, rest) => {
                self.chain(*first, rest.into_iter().map(|(op, n)| (Op::Mul(op), n)), slots)
            }
            Node::Add(first, rest) => self.chain(
                *first,
                rest.into_iter().map(|(subtract, n)| (Op::Add { subtract }, n)),
                slots,
            ),
            Node::Bits(op, first, rest) => {
                self.chain(*first, rest.into_iter().map(|n| (Op::Bits(op), n)), slots)
            }
        }
    }

    /// A chain nesting to the right, `a op1 (b op2 (c …))`, without recursion: each operand
    /// into a fresh slot above the last, then the steps combine them from the right. A final
    /// literal `=~` pattern takes no slot: its step matches the operand before it in place.
    fn right_nested(
        &mut self,
        first: Node,
        rest: impl Iterator<Item = (Op, Operand)>,
        slots: usize,
    ) {
        self.emit(first, slots);
        let mut steps = Vec::new();
        let mut top = slots;
        for (step, operand) in rest {
            match (step, operand) {
                (Op::MatchDynamic { negate }, Operand::Pattern(pattern)) => {
                    steps.push(Op::Match { negate, pattern });
                }
                (step, Operand::Node(node)) => {
                    top += 1;
                    self.ops.push(Op::Push);
                    self.emit(node, top);
                    steps.push(step);
                }
                (step, Operand::Pattern(pattern)) => {
                    unreachable!("{step:?} with a literal pattern {pattern:?}")
                }
            }
        }
        self.ops.extend(steps.into_iter().rev());
    }

    /// `first` into this slot, then every operand into one fresh slot they share.
    fn chain(&mut self, first: Node, rest: impl Iterator<Item = (Op, Node)>, slots: usize) {
        self.emit(first, slots);
        self.ops.push(Op::Push);
        for (step, node) in rest {
            self.emit(node, slots + 1);
            self.ops.push(step);
        }
        self.ops.push(Op::EndChain);
    }
}
