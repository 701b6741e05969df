//! C `printf` number formats the report uses, where Rust's differ: `%e`, and `nan`/`inf`.

/// `%.{precision}f`.
pub fn fixed(x: f64, precision: usize) -> String {
    if x.is_nan() {
        return if x.is_sign_negative() { "-nan".into() } else { "nan".into() };
    }
    if x.is_infinite() {
        return if x < 0.0 { "-inf".into() } else { "inf".into() };
    }
    format!("{x:.precision$}")
}

/// `%e`: six decimals and an exponent of at least two digits with its sign.
pub fn scientific(x: f64) -> String {
    if !x.is_finite() {
        return fixed(x, 6);
    }
    let text = format!("{x:.6e}");
    let (mantissa, exponent) = text.split_once('e').unwrap_or((&text, "0"));
    let exponent: i32 = exponent.parse().unwrap_or(0);
    let sign = if exponent < 0 { '-' } else { '+' };
    format!("{mantissa}e{sign}{:02}", exponent.abs())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_as_c_printf() {
        assert_eq!(scientific(0.0), "0.000000e+00");
        assert_eq!(scientific(0.0123456789), "1.234568e-02");
        assert_eq!(scientific(1234.5), "1.234500e+03");
        assert_eq!(fixed(0.125, 2), "0.12");
        assert_eq!(fixed(f64::NAN, 1), "nan");
        assert_eq!(fixed(-f64::NAN, 1), "-nan");
    }
}
