//! The checks htslib makes when it parses header text into its records (`header.c`), with its
//! messages: a line added to a header (`sam_hdr_add_lines`) and the `@SQ` lines of a header
//! whose text it parses only when a command first edits it (a BAM's `@SQ LN:0` passes until then).

/// htslib's `MAX_ERROR_QUOTE`: how much of a bad line its messages quote.
const MAX_QUOTE: usize = 320;

/// `sam_hrecs_error`'s message: `what`, then the line from `text` up to its newline.
fn quoted(what: &str, text: &[u8]) -> String {
    let text = &text[..text.len().min(MAX_QUOTE)];
    let end = memchr::memchr(b'\n', text).unwrap_or(text.len());
    format!("{what} at line 1: \"{}\"", String::from_utf8_lossy(&text[..end]))
}

/// Why htslib refuses to add `line` to a header (`sam_hrecs_parse_single_line`), in its words
/// without the `[E::sam_hrecs_error] ` prefix; `None` when it is accepted.
pub fn added_line_error(line: &[u8]) -> Option<String> {
    if line.first() != Some(&b'@') {
        return Some(quoted("Header line does not start with '@'", line));
    }
    if !line.get(1..3).is_some_and(|key| key.iter().all(u8::is_ascii_alphabetic)) {
        return Some(quoted("Header line does not have a two character key", line));
    }
    if &line[1..3] == b"CO" || line.len() == 3 {
        return None;
    }
    // `parse_noncomment_line`: tab, then KEY:VALUE with the colon third, until the line ends.
    let fields = &line[3..];
    let mut i = 0;
    loop {
        if fields.get(i) != Some(&b'\t') {
            return Some(quoted("Missing tab", fields));
        }
        i += 1;
        let len = fields[i..].iter().position(|&b| matches!(b, 0 | b'\n' | b'\t'));
        let len = len.unwrap_or(fields.len() - i);
        if len < 3 || fields[i + 2] != b':' {
            return Some(quoted("Malformed key:value pair", fields));
        }
        i += len;
        if i >= fields.len() || matches!(fields[i], 0 | b'\n') {
            return None;
        }
    }
}

/// `sam_hrecs_update_hashes`' message for the first `@SQ` line of `lines` without `SN`, with a
/// missing or non-positive `LN` (the last one, read by `strtoll`), or with two different `LN`s;
/// without the `[E::sam_hrecs_update_hashes] ` prefix.
pub fn sq_line_error<'a>(lines: impl Iterator<Item = &'a [u8]>) -> Option<String> {
    for line in lines.filter(|l| l.starts_with(b"@SQ\t")) {
        let (mut name, mut len, mut lengths_differ) = (None, None::<i64>, false);
        for field in line.split(|&b| b == b'\t').skip(1) {
            match field.get(..3) {
                Some(b"SN:") => name = Some(&field[3..]),
                Some(b"LN:") => {
                    let value = strtoll(&field[3..]);
                    lengths_differ |= len.is_some_and(|previous| previous != value);
                    len = Some(value);
                }
                _ => {}
            }
        }
        let Some(name) = name else {
            return Some("Header includes @SQ line with no SN: tag".to_string());
        };
        let name = String::from_utf8_lossy(name);
        if len.is_none_or(|len| len <= 0) {
            return Some(format!("Header includes @SQ line \"{name}\" with invalid or no LN: tag"));
        }
        if lengths_differ {
            return Some(format!(
                "Header includes @SQ line \"{name}\" with multiple LN: tag with different values."
            ));
        }
    }
    None
}

/// C `strtoll(text, NULL, 10)`: blanks, a sign, the leading digits; saturating; 0 when there are
/// none (a header's `LN` value, as htslib reads it).
pub fn strtoll(text: &[u8]) -> i64 {
    let text = text.trim_ascii_start();
    let (negative, digits) = match text.first() {
        Some(b'-') => (true, &text[1..]),
        Some(b'+') => (false, &text[1..]),
        _ => (false, text),
    };
    let mut value: i64 = 0;
    for &d in digits.iter().take_while(|b| b.is_ascii_digit()) {
        let digit = i64::from(d - b'0');
        value = value.saturating_mul(10);
        value = if negative { value.saturating_sub(digit) } else { value.saturating_add(digit) };
    }
    value
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn added_lines_are_checked_as_htslib_checks_them() {
        assert_eq!(added_line_error(b"@RG\tID:x\tS1:y\tSM:"), None);
        assert_eq!(
            added_line_error(b"@RG\tID:x\tSMbad").unwrap(),
            "Malformed key:value pair at line 1: \"\tID:x\tSMbad\""
        );
        assert!(added_line_error(b"@RG\tID:x\t\tSM:y").unwrap().starts_with("Malformed"));
        assert!(added_line_error(b"@RGID:x").unwrap().starts_with("Missing tab"));
        assert!(added_line_error(b"xRG\tID:x").unwrap().contains("start with '@'"));
        assert!(added_line_error(b"@R1\tID:x").unwrap().contains("two character key"));
    }

    #[test]
    fn sq_lines_need_a_name_and_a_positive_length() {
        let check = |text: &[u8]| sq_line_error(text.split(|&b| b == b'\n'));
        assert_eq!(check(b"@HD\tVN:1.6\n@SQ\tSN:a\tLN:5x"), None);
        assert_eq!(
            check(b"@SQ\tSN:a\tLN:0").unwrap(),
            "Header includes @SQ line \"a\" with invalid or no LN: tag"
        );
        assert!(check(b"@SQ\tSN:a\tLN:-3").unwrap().contains("invalid or no LN"));
        assert!(check(b"@SQ\tSN:a").unwrap().contains("invalid or no LN"));
        assert!(check(b"@SQ\tLN:4").unwrap().contains("no SN"));
        assert!(check(b"@SQ\tSN:a\tLN:2\tLN:5").unwrap().contains("multiple LN"));
        assert!(check(b"@SQ\tSN:a\tLN:5\tLN:0").unwrap().contains("invalid or no LN"));
    }
}
