//! C's `%.Pg`, which the coverage reports print with several precisions.

/// `printf("%.{precision}g", x)`.
pub fn g(x: f64, precision: usize) -> String {
    if x.is_nan() {
        return if x.is_sign_negative() { "-nan".into() } else { "nan".into() };
    }
    if x.is_infinite() {
        return if x < 0.0 { "-inf".into() } else { "inf".into() };
    }
    let p = precision.max(1);
    if x == 0.0 {
        return if x.is_sign_negative() { "-0".into() } else { "0".into() };
    }
    // The exponent after rounding to P significant digits decides the style.
    let sci = format!("{x:.prec$e}", prec = p - 1);
    let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    if exp < -4 || exp >= p as i32 {
        let sign = if exp < 0 { '-' } else { '+' };
        format!("{}e{sign}{:02}", strip_zeros(mantissa), exp.abs())
    } else {
        let decimals = (p as i32 - 1 - exp) as usize;
        strip_zeros(&format!("{x:.decimals$}")).to_string()
    }
}

fn strip_zeros(s: &str) -> &str {
    if s.contains('.') { s.trim_end_matches('0').trim_end_matches('.') } else { s }
}

#[cfg(test)]
mod tests {
    use super::g;

    #[test]
    fn matches_c_printf() {
        assert_eq!(g(100.0, 6), "100");
        assert_eq!(g(12.345678, 3), "12.3");
        assert_eq!(g(0.00001234, 3), "1.23e-05");
        assert_eq!(g(1234.5, 3), "1.23e+03");
        assert_eq!(g(99.96, 3), "100");
        assert_eq!(g(999.96, 3), "1e+03");
        assert_eq!(g(66.66666, 4), "66.67");
        assert_eq!(g(0.0, 3), "0");
        assert_eq!(g(-f64::NAN, 3), "-nan");
    }
}
