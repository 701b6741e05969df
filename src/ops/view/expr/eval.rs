//! The evaluator: each node writes its result into a value slot exactly as htslib's
//! `hts_expr.c` does. The leftmost operand of an operator is evaluated into the operator's own
//! slot and the others into a fresh one (shared along a `* / %`, `+ -` or bitwise chain), and a
//! node touches only the fields the C code touches. That keeps htslib's three-state logic and
//! its corner cases (`[XX] % 5` is true, `qname == length("r1")` compares the stale string).
//!
//! There is no short-circuit: both sides of `&&` and `||` are always evaluated, so an error on
//! either side is an error.

use std::borrow::Cow;

use super::fields::{load_aux, load_field};
use super::syntax::{BitOp, CmpOp, Func, GENERIC_ERROR, LogicOp, MulOp, Node, Pattern};
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

/// Evaluates `node` into `res`.
pub fn eval_into<'r>(node: &'r Node, cx: &Context<'r>, res: &mut Value<'r>) -> Result<(), String> {
    match node {
        Node::Number(value) => res.set_number(*value),
        Node::Text(text) => res.set_text(Cow::Borrowed(text)),
        Node::Field(field) => load_field(*field, &cx.record, cx.header, res),
        Node::Aux(tag) => load_aux(*tag, &cx.record, res)?,
        Node::Call(func, arg) => {
            eval_into(arg, cx, res)?;
            call(*func, res)?;
        }
        Node::Default(value, fallback) => {
            eval_into(value, cx, res)?;
            let mut alternative = Value::fresh();
            eval_into(fallback, cx, &mut alternative)?;
            if !res.exists_or_true() {
                *res = alternative;
            }
        }
        Node::Pow(base, exponent) => {
            eval_into(base, cx, res)?;
            let mut val = Value::fresh();
            eval_into(exponent, cx, &mut val)?;
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
        }
        Node::Sign { negate, operand } => {
            eval_into(operand, cx, res)?;
            if !res.exists() {
                res.set_undefined();
            } else if res.is_str {
                return Err(type_error());
            } else {
                if *negate {
                    res.number = -res.number;
                }
                res.is_true = res.number != 0.0;
            }
        }
        Node::Not(operand) => {
            eval_into(operand, cx, res)?;
            not(res);
        }
        Node::BitNot(operand) => {
            eval_into(operand, cx, res)?;
            if !res.exists() {
                res.set_undefined();
            } else if res.is_str {
                return Err(type_error());
            } else {
                res.number = !c_double_to_i64(res.number) as f64;
                res.is_true = res.number != 0.0;
            }
        }
        Node::Mul(first, rest) => {
            eval_into(first, cx, res)?;
            let mut val = Value::fresh();
            for (op, operand) in rest {
                eval_into(operand, cx, &mut val)?;
                multiply(*op, res, &val)?;
            }
        }
        Node::Add(first, rest) => {
            eval_into(first, cx, res)?;
            let mut val = Value::fresh();
            for (subtract, operand) in rest {
                eval_into(operand, cx, &mut val)?;
                let undefined = !val.exists() || !res.exists();
                if !undefined && (val.is_str || res.is_str) {
                    return Err(type_error());
                }
                if undefined {
                    res.set_undefined();
                } else {
                    res.number += if *subtract { -val.number } else { val.number };
                    // No exists() check here in htslib: `inf - inf` is NaN yet true.
                    res.is_true = res.number != 0.0;
                }
            }
        }
        Node::Bits(op, first, rest) => {
            eval_into(first, cx, res)?;
            let mut val = Value::fresh();
            // Once an operand is undefined the whole chain is, but later operands still run
            // (and can still raise type errors against the unchanged left side).
            let mut undefined = false;
            for operand in rest {
                eval_into(operand, cx, &mut val)?;
                if !val.exists() || !res.exists() {
                    undefined = true;
                } else if res.is_str || val.is_str {
                    return Err(type_error());
                } else {
                    let (a, b) = (c_double_to_i64(res.number), c_double_to_i64(val.number));
                    let bits = match op {
                        BitOp::And => a & b,
                        BitOp::Xor => a ^ b,
                        BitOp::Or => a | b,
                    };
                    res.number = bits as f64;
                    res.is_true = bits != 0;
                }
            }
            if undefined {
                res.set_undefined();
            }
        }
        Node::Compare(op, lhs, rhs) => {
            eval_into(lhs, cx, res)?;
            let mut val = Value::fresh();
            eval_into(rhs, cx, &mut val)?;
            compare(*op, res, &val);
        }
        Node::Equal { negate, lhs, rhs } => {
            eval_into(lhs, cx, res)?;
            let mut val = Value::fresh();
            eval_into(rhs, cx, &mut val)?;
            equal(*negate, res, &val);
        }
        Node::Match { negate, lhs, pattern } => {
            eval_into(lhs, cx, res)?;
            regex_match(*negate, pattern, cx, res)?;
        }
        Node::Logic(first, rest) => {
            eval_into(first, cx, res)?;
            for (op, operand) in rest {
                let mut val = Value::fresh();
                eval_into(operand, cx, &mut val)?;
                logic(*op, res, &val);
            }
        }
    }
    Ok(())
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

/// `=~` / `!~` with the left side already in `res`. Both sides must be strings (a missing tag is
/// one); a NULL on either side is false and, where it makes the slot undefined, undefined.
fn regex_match<'r>(
    negate: bool,
    pattern: &'r Pattern,
    cx: &Context<'r>,
    res: &mut Value<'r>,
) -> Result<(), String> {
    let mut val = Value::fresh();
    if let Pattern::Dynamic(node) = pattern {
        eval_into(node, cx, &mut val)?;
        if !val.is_str {
            return Err(type_error());
        }
    } else {
        // A literal pattern: a defined string, compiled (or found invalid) at parse time.
        val.set_text(Cow::Borrowed(&[]));
    }
    if !res.is_str {
        return Err(type_error());
    }
    match (res.c_str(), val.c_str()) {
        (Some(subject), Some(dynamic_pattern)) => {
            let matched = match pattern {
                Pattern::Compiled(regex) => regex.is_match(subject),
                Pattern::Invalid(message) => return Err(message.clone()),
                Pattern::Dynamic(_) => posix_regex::compile(dynamic_pattern)?.is_match(subject),
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
