//! The value slot every expression node writes into: htslib's `hts_expr_val_t`.
//!
//! htslib's language has three states: number, string and *undefined*. Undefined is either a NaN
//! number or a NULL string (a missing aux tag); both count as false, but `is_true` can force an
//! undefined or zero value to be true (an aux tag that is present is true even when it is 0).
//!
//! The evaluator writes into slots the way htslib's C does: a node only sets the fields htslib
//! sets, and leaves the others as they were. A few observable quirks depend on that (a string
//! turned into a number by `length()` still compares equal to it with `==`), so the fields are
//! modelled one for one rather than as a tidy enum.

use std::borrow::Cow;

/// One value: `is_str` picks `text` or `number`, as in `hts_expr_val_t`.
#[derive(Clone, Debug, Default)]
pub struct Value<'r> {
    /// Whether the value is a string (`text`) rather than a number (`number`).
    pub is_str: bool,
    /// Forces truth even for zero or undefined values (aux tags that exist).
    pub is_true: bool,
    /// The string buffer; `None` is C's NULL kstring (an undefined string). It survives a
    /// switch to a number, as the C buffer does.
    pub text: Option<Cow<'r, [u8]>>,
    /// The number; NaN means undefined.
    pub number: f64,
}

impl<'r> Value<'r> {
    /// `HTS_EXPR_VAL_INIT`: a zero number with no string buffer.
    pub fn fresh() -> Self {
        Value::default()
    }

    /// `hts_expr_val_exists`: neither a NULL string nor a NaN number.
    pub fn exists(&self) -> bool {
        if self.is_str { self.text.is_some() } else { !self.number.is_nan() }
    }

    /// `hts_expr_val_existsT`: defined, or forced true.
    pub fn exists_or_true(&self) -> bool {
        self.is_true || self.exists()
    }

    /// The truth `&&` and `||` use: forced true, a non-NULL string, or a non-zero number
    /// (NaN included, as in C).
    pub fn truthy(&self) -> bool {
        self.is_true || (self.is_str && self.text.is_some()) || self.number != 0.0
    }

    /// `hts_expr_val_undef`: a NaN number; the string buffer is emptied but kept.
    pub fn set_undefined(&mut self) {
        self.clear_text();
        self.is_true = false;
        self.is_str = false;
        self.number = f64::NAN;
    }

    /// `ks_clear`: empties the buffer without freeing it, so a non-NULL string stays non-NULL.
    pub fn clear_text(&mut self) {
        if self.text.is_some() {
            self.text = Some(Cow::Borrowed(&[]));
        }
    }

    /// Stores a string result (`kputs` into a cleared buffer).
    pub fn set_text(&mut self, text: Cow<'r, [u8]>) {
        self.is_str = true;
        self.text = Some(text);
    }

    /// Stores a number, leaving `is_true` and the string buffer alone as htslib does.
    pub fn set_number(&mut self, number: f64) {
        self.is_str = false;
        self.number = number;
    }

    /// Stores a boolean result into both `number` and `is_true` (C's `is_true = d = cond`).
    pub fn set_bool(&mut self, value: bool) {
        self.is_true = value;
        self.number = if value { 1.0 } else { 0.0 };
    }

    /// The string as C's `strcmp` and `regexec` see it: up to the first NUL.
    pub fn c_str(&self) -> Option<&[u8]> {
        self.text.as_deref().map(|t| match memchr::memchr(0, t) {
            Some(nul) => &t[..nul],
            None => t,
        })
    }
}

/// C's `(int64_t)d` on x86-64: truncation, with NaN and out-of-range values becoming
/// `i64::MIN` (the "integer indefinite" value), which `[XX] % 5` makes observable.
pub fn c_double_to_i64(d: f64) -> i64 {
    const TWO_POW_63: f64 = 9_223_372_036_854_775_808.0;
    // NaN is outside every range, so it takes the first branch too.
    if !(-TWO_POW_63..TWO_POW_63).contains(&d) { i64::MIN } else { d as i64 }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn undefined_states_are_nan_and_null_string() {
        let mut v = Value::fresh();
        assert!(v.exists());
        v.set_undefined();
        assert!(!v.exists() && !v.exists_or_true());
        v.is_str = true;
        v.text = None;
        assert!(!v.exists());
        v.is_true = true;
        assert!(v.exists_or_true() && v.truthy());
    }

    #[test]
    fn undefining_keeps_a_string_buffer_allocated() {
        let mut v = Value::fresh();
        v.set_text(Cow::Borrowed(b"abc"));
        v.set_undefined();
        assert_eq!(v.text.as_deref(), Some(&b""[..]));
        assert!(v.number.is_nan() && !v.is_str);
    }

    #[test]
    fn c_strings_stop_at_nul() {
        let mut v = Value::fresh();
        v.set_text(Cow::Borrowed(b"ab\0cd"));
        assert_eq!(v.c_str(), Some(&b"ab"[..]));
    }

    #[test]
    fn double_to_int_follows_x86_conversion() {
        assert_eq!(c_double_to_i64(-3.7), -3);
        assert_eq!(c_double_to_i64(f64::NAN), i64::MIN);
        assert_eq!(c_double_to_i64(1e30), i64::MIN);
        assert_eq!(c_double_to_i64(-1e30), i64::MIN);
    }
}
