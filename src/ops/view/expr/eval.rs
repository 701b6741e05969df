//! The evaluator: each node (a run of [`Program`] steps) writes its result into a value slot
//! exactly as htslib's
//! `hts_expr.c` does. The leftmost operand of an operator is evaluated into the operator's own
//! slot and the others into a fresh one (shared along a `* / %`, `+ -` or bitwise chain), and a
//! node touches only the fields the C code touches. That keeps htslib's three-state logic and
//! its corner cases (`[XX] % 5` is true, `qname == length("r1")` compares the stale string).
//!
//! There is no short-circuit: both sides of `&&` and `||` are always evaluated, so an error on
//! either side is an error.

use std::borrow::Cow;

use super::fields::{load_aux, load_field};
use super::program::{Op, Program};
use super::syntax::{BitOp, CmpOp, Func, GENERIC_ERROR, LogicOp, MulOp, Pattern};
use super::value::{Value, c_double_to_i64};
use crate::ops::posix_regex;
use crate::record::{Header, RecordRef};

/// What the variables of an expression read from.
pub struct Context<'r> {
    pub record: RecordRef<'r>,
    pub header: &'r Header,
}

fn type_error() -> String {
    GENERIC_ERROR.to_string()
}

/// One value slot, and whether a bitwise chain sharing it met an undefined operand (the
/// whole chain is then undefined, though its later operands still run and can still fail).
#[derive(Default)]
struct Slot<'r> {
    value: Value<'r>,
    chain_undefined: bool,
}

/// Slots an expression of ordinary depth needs: held in an array, so that evaluating it
/// allocates nothing (a `Vec` per record cost a debug build 25 % more time on `view -e`).
const INLINE_SLOTS: usize = 8;

/// Runs `program`: the value its expression leaves in the result slot.
pub fn run<'r>(program: &'r Program, cx: &Context<'r>) -> Result<Value<'r>, String> {
    if program.max_slots <= INLINE_SLOTS {
        let mut slots: [Slot<'r>; INLINE_SLOTS] = Default::default();
        run_in(program, cx, &mut slots)
    } else {
        let mut slots: Vec<Slot<'r>> = (0..program.max_slots).map(|_| Slot::default()).collect();
        run_in(program, cx, &mut slots)
    }
}

/// [`run`] over `slots`, enough for the program's deepest point; `top` indexes the top slot.
fn run_in<'r>(
    program: &'r Program,
    cx: &Context<'r>,
    slots: &mut [Slot<'r>],
) -> Result<Value<'r>, String> {
    let mut top = 0;
    for op in &program.ops {
        let res = &mut slots[top].value;
        match op {
            Op::Number(value) => res.set_number(*value),
            Op::Text(text) => res.set_text(Cow::Borrowed(text)),
            Op::Field(field) => load_field(*field, &cx.record, cx.header, res),
            Op::Aux(tag) => load_aux(*tag, &cx.record, res)?,
            Op::Call(func) => call(*func, res)?,
            Op::Sign { negate } => sign(*negate, res)?,
            Op::Not => not(res),
            Op::BitNot => bit_not(res)?,
            Op::Match { negate, pattern } => {
                // A literal pattern: a defined string, compiled (or found invalid) at parse time.
                let mut val = Value::fresh();
                val.set_text(Cow::Borrowed(&[]));
                regex_match(*negate, Some(pattern), &val, res)?;
            }
            Op::Push => {
                top += 1;
                slots[top] = Slot::default();
            }
            Op::Default
            | Op::Pow
            | Op::Compare(_)
            | Op::Equal { .. }
            | Op::Logic(_)
            | Op::MatchDynamic { .. } => {
                let val = std::mem::take(&mut slots[top].value);
                top -= 1;
                let res = &mut slots[top].value;
                match op {
                    Op::Default if !res.exists_or_true() => *res = val,
                    Op::Default => {}
                    Op::Pow => pow(res, &val)?,
                    Op::Compare(cmp) => compare(*cmp, res, &val),
                    Op::Equal { negate } => equal(*negate, res, &val),
                    Op::Logic(logic_op) => logic(*logic_op, res, &val),
                    Op::MatchDynamic { negate } => {
                        if !val.is_str {
                            return Err(type_error());
                        }
                        regex_match(*negate, None, &val, res)?;
                    }
                    _ => unreachable!("a step that pops"),
                }
            }
            Op::Mul(_) | Op::Add { .. } | Op::Bits(_) => {
                let (below, above) = slots.split_at_mut(top);
                let (res, shared) = (&mut below[top - 1].value, &mut above[0]);
                match op {
                    Op::Mul(mul_op) => multiply(*mul_op, res, &shared.value)?,
                    Op::Add { subtract } => add(*subtract, res, &shared.value)?,
                    Op::Bits(bit_op) => {
                        shared.chain_undefined |= bits(*bit_op, res, &shared.value)?;
                    }
                    _ => unreachable!("a chain step"),
                }
            }
            Op::EndChain => {
                let shared = std::mem::take(&mut slots[top]);
                top -= 1;
                if shared.chain_undefined {
                    slots[top].value.set_undefined();
                }
            }
        }
    }
    Ok(std::mem::take(&mut slots[0].value))
}

fn pow(res: &mut Value<'_>, val: &Value<'_>) -> Result<(), String> {
    if !res.exists() || !val.exists() {
        res.set_undefined();
    } else if res.is_str || val.is_str {
        return Err(type_error());
    } else {
        res.set_number(res.number.powf(val.number));
    }
    if res.number.is_nan() {
        res.set_undefined();
    }
    Ok(())
}

/// Unary `+` / `-`.
fn sign(negate: bool, res: &mut Value<'_>) -> Result<(), String> {
    if !res.exists() {
        res.set_undefined();
    } else if res.is_str {
        return Err(type_error());
    } else {
        if negate {
            res.number = -res.number;
        }
        res.is_true = res.number != 0.0;
    }
    Ok(())
}

/// `~`.
fn bit_not(res: &mut Value<'_>) -> Result<(), String> {
    if !res.exists() {
        res.set_undefined();
    } else if res.is_str {
        return Err(type_error());
    } else {
        res.number = !c_double_to_i64(res.number) as f64;
        res.is_true = res.number != 0.0;
    }
    Ok(())
}

/// One step of a `+ -` chain.
fn add(subtract: bool, res: &mut Value<'_>, val: &Value<'_>) -> Result<(), String> {
    let undefined = !val.exists() || !res.exists();
    if !undefined && (val.is_str || res.is_str) {
        return Err(type_error());
    }
    if undefined {
        res.set_undefined();
    } else {
        res.number += if subtract { -val.number } else { val.number };
        // No exists() check here in htslib: `inf - inf` is NaN yet true.
        res.is_true = res.number != 0.0;
    }
    Ok(())
}

/// One step of a bitwise chain; true when an operand is undefined. The left side is then left
/// as it is, as htslib leaves it, until the chain ends.
fn bits(op: BitOp, res: &mut Value<'_>, val: &Value<'_>) -> Result<bool, String> {
    if !val.exists() || !res.exists() {
        return Ok(true);
    }
    if res.is_str || val.is_str {
        return Err(type_error());
    }
    let (a, b) = (c_double_to_i64(res.number), c_double_to_i64(val.number));
    let bits = match op {
        BitOp::And => a & b,
        BitOp::Xor => a ^ b,
        BitOp::Or => a | b,
    };
    res.number = bits as f64;
    res.is_true = bits != 0;
    Ok(false)
}

/// Applies a one-argument function to the value already in `res`.
fn call(func: Func, res: &mut Value<'_>) -> Result<(), String> {
    let string_only = matches!(func, Func::Length | Func::Min | Func::Max | Func::Avg);
    if string_only && !res.is_str {
        return Err(type_error());
    }
    // The string functions see the whole buffer (NULs included); a NULL string is empty.
    let bytes: &[u8] = res.text.as_deref().unwrap_or(&[]);
    // `is_true` is left alone throughout, so `min([XZ])` of an empty but present tag is true.
    match func {
        Func::Length => res.set_number(bytes.len() as f64),
        Func::Min => res.set_number(bytes.iter().min().map_or(f64::NAN, |&b| b as f64)),
        Func::Max => res.set_number(bytes.iter().max().map_or(f64::NAN, |&b| b as f64)),
        Func::Avg => {
            let sum: u64 = bytes.iter().map(|&b| b as u64).sum();
            let avg = if bytes.is_empty() { 0.0 } else { sum as f64 / bytes.len() as f64 };
            res.set_number(avg);
        }
        Func::Exists => {
            let exists = res.exists_or_true();
            res.set_bool(exists);
            res.is_str = false;
        }
        Func::Exp | Func::Log | Func::Sqrt => {
            // On a string this uses the slot's stale number, as htslib does (`log(qname)` is
            // log(0) = -inf, which is true).
            let x = res.number;
            let y = match func {
                Func::Exp => x.exp(),
                Func::Log => x.ln(),
                _ => x.sqrt(),
            };
            res.set_number(y);
            if y.is_nan() {
                res.set_undefined();
            }
        }
    }
    Ok(())
}

/// `!`: a forced-true value becomes false, an undefined one true, a string false.
fn not(res: &mut Value<'_>) {
    if res.is_true {
        res.set_bool(false);
    } else if !res.exists() {
        res.set_bool(true);
    } else if res.is_str {
        let null = res.text.is_none();
        res.set_bool(null);
    } else {
        res.number = if c_double_to_i64(res.number) == 0 { 1.0 } else { 0.0 };
        res.is_true = res.number != 0.0;
    }
    res.is_str = false;
}

/// One step of a `* / %` chain.
fn multiply(op: MulOp, res: &mut Value<'_>, val: &Value<'_>) -> Result<(), String> {
    if !val.exists() || !res.exists() {
        res.set_undefined();
    } else if val.is_str || res.is_str {
        return Err(type_error());
    }
    match op {
        MulOp::Mul => res.number *= val.number,
        MulOp::Div => res.number /= val.number,
        // htslib tests the double (NaN counts as non-zero) and then divides the truncated
        // integers, with NaN becoming i64::MIN: so `[XX] % 5` is -3, a defined true value.
        MulOp::Rem if val.number != 0.0 => {
            let (a, b) = (c_double_to_i64(res.number), c_double_to_i64(val.number));
            // Where samtools dies of SIGFPE (`5 % 0.5`), report an error instead.
            let rem = a.checked_rem(b).ok_or_else(|| {
                "Integer division by zero in filter expression (samtools crashes here)".to_string()
            })?;
            res.number = rem as f64;
        }
        MulOp::Rem => res.set_undefined(),
    }
    res.is_true = res.exists() && res.number != 0.0;
    Ok(())
}

/// `>= > <= <`: strings compare bytewise (as C strings), numbers numerically, mixed is false.
fn compare(op: CmpOp, res: &mut Value<'_>, val: &Value<'_>) {
    if !res.exists() || !val.exists() {
        res.set_undefined();
        return;
    }
    let ordering = match (res.is_str, val.is_str, res.c_str(), val.c_str()) {
        (true, true, Some(a), Some(b)) => Some(a.cmp(b)),
        (false, false, ..) => res.number.partial_cmp(&val.number),
        _ => None,
    };
    let holds = ordering.is_some_and(|o| match op {
        CmpOp::Ge => o.is_ge(),
        CmpOp::Gt => o.is_gt(),
        CmpOp::Le => o.is_le(),
        CmpOp::Lt => o.is_lt(),
    });
    res.set_bool(holds);
    res.is_str = false;
}

/// `==` / `!=`. A string on the left compares against the right side's string buffer even when
/// the right side has become a number (htslib reads `val.s` unconditionally).
fn equal(negate: bool, res: &mut Value<'_>, val: &Value<'_>) {
    if !res.exists() || !val.exists() {
        res.set_undefined();
        return;
    }
    let result = if res.is_str {
        match (res.c_str(), val.c_str()) {
            (Some(a), Some(b)) => (a == b) != negate,
            _ => negate,
        }
    } else if negate {
        val.is_str || res.number != val.number
    } else {
        !val.is_str && res.number == val.number
    };
    res.set_bool(result);
    res.is_str = false;
}

/// `=~` / `!~` with the left side already in `res` and the pattern's value in `val`: the
/// compiled `literal`, or (`None`) the string `val` itself. Both sides must be strings (a
/// missing tag is one); a NULL on either side is false and, where it makes the slot undefined,
/// undefined.
fn regex_match(
    negate: bool,
    literal: Option<&Pattern>,
    val: &Value<'_>,
    res: &mut Value<'_>,
) -> Result<(), String> {
    if !res.is_str {
        return Err(type_error());
    }
    match (res.c_str(), val.c_str()) {
        (Some(subject), Some(dynamic_pattern)) => {
            let matched = match literal {
                Some(Pattern::Compiled(regex)) => regex.is_match(subject),
                Some(Pattern::Invalid(message)) => return Err(message.clone()),
                None => posix_regex::compile(dynamic_pattern)?.is_match(subject),
            };
            res.set_bool(matched != negate);
        }
        _ => res.is_true = false,
    }
    res.is_str = false;
    if !val.exists() || !res.exists() {
        res.set_undefined();
    }
    Ok(())
}

/// `&&` / `||` on defined-or-forced values; anything undefined makes a defined false
/// (`number` 0, so a later `!` of it is true).
fn logic(op: LogicOp, res: &mut Value<'_>, val: &Value<'_>) {
    let (left_known, right_known) = (res.exists_or_true(), val.exists_or_true());
    let result = match op {
        LogicOp::And if left_known && right_known => Some(res.truthy() && val.truthy()),
        LogicOp::And => None,
        LogicOp::Or if !left_known && !right_known => None,
        LogicOp::Or if !left_known && !val.truthy() => None,
        LogicOp::Or if !right_known && !res.truthy() => None,
        LogicOp::Or => Some(res.truthy() || val.truthy()),
    };
    match result {
        Some(value) => {
            res.set_bool(value);
            res.is_str = false;
        }
        None => {
            res.set_undefined();
            res.number = 0.0;
        }
    }
}
