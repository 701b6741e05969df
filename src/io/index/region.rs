//! Region strings as samtools reads them (`samtools view in.bam chr1:100-200`), resolved against the
//! header's references into 0-based, half-open coordinates.
//!
//! This reproduces htslib's `hts_parse_region` with `HTS_PARSE_THOUSANDS_SEP` (as `hts_reglist_create`
//! calls it for `samtools view`), its number parser `hts_parse_decimal`, and the special names `.`
//! and `*` handled just before it. Accepted forms (1-based inclusive in the text):
//!
//! | text                  | meaning                                                         |
//! |-----------------------|-----------------------------------------------------------------|
//! | `chr`                 | the whole reference                                             |
//! | `chr:beg`             | `beg` to the end of the reference                               |
//! | `chr:beg-end`         | `beg..=end`; `end` 0 or empty means to the end                  |
//! | `chr:-end`            | `1..=end`                                                       |
//! | `chr:1,000-2,000`     | commas inside numbers are ignored; `1k`, `1.5k`, `2e3`, `+5` too |
//! | `{name}`, `{name}:beg-end` | braces quote a name that contains `:`                     |
//! | `HLA:1`               | an unquoted name containing `:` works when it is a reference     |
//! | `*`                   | unplaced unmapped reads ([`Region::UNPLACED_TID`])               |
//! | `.`                   | the whole file ([`Region::WHOLE_FILE_TID`])                      |
//!
//! Steps (`hts_parse_region`):
//! 1. `{…}`: the name ends at the first `}`; a `:` right after it starts the coordinates.
//!    Otherwise the coordinates start after the last `:`.
//! 2. Unquoted text with a `:`: if the whole text is a reference name, it is that reference, unless
//!    the part before the last `:` is one too (ambiguous: rejected).
//! 3. Otherwise the part before the `:` must be a reference, and the rest is `beg[-end]`.
//!
//! Every failure gives `None`: samtools then warns "specifies an invalid region or unknown
//! reference" and continues with the other regions.

use crate::record::header::Reference;

/// A region: reference id and 0-based half-open `[beg, end)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Region {
    pub tid: i32,
    pub beg: i64,
    pub end: i64,
}

impl Region {
    /// `tid` of region `*`: unplaced unmapped reads.
    pub const UNPLACED_TID: i32 = -1;
    /// `tid` of region `.`: every record in the file.
    pub const WHOLE_FILE_TID: i32 = -3;
    /// The open end of `chr` or `chr:100` (htslib's `HTS_POS_MAX`).
    pub const END_OF_REFERENCE: i64 = (i32::MAX as i64) << 32 | i32::MAX as i64;

    fn whole(tid: i32) -> Region {
        Region { tid, beg: 0, end: Region::END_OF_REFERENCE }
    }

    /// Whether this is region `*`.
    pub fn is_unplaced(&self) -> bool {
        self.tid == Region::UNPLACED_TID
    }
}

/// Parses `text` against the header's references (exact name match).
pub fn parse_region(text: &str, refs: &[Reference]) -> Option<Region> {
    parse_region_with(text, |name| refs.iter().position(|r| r.name == name).map(|i| i as i32))
}

/// Parses `text` with a caller-supplied name lookup (for headers with a name index).
pub fn parse_region_with(text: &str, lookup: impl Fn(&[u8]) -> Option<i32>) -> Option<Region> {
    match text {
        "." => return Some(Region::whole(Region::WHOLE_FILE_TID)),
        "*" => return Some(Region::whole(Region::UNPLACED_TID)),
        _ => {}
    }
    let mut region = parse_region_detailed(text, lookup).ok()?;
    region.beg = region.beg.max(0);
    Some(region)
}

/// Why [`parse_region_detailed`] refused a region; `Display` is htslib's message (without its
/// `[E::hts_parse_region] ` prefix), where htslib logs one.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum RegionError {
    #[error("Mismatching braces in \"{text}\"")]
    MismatchingBraces { text: String },
    #[error("Range is ambiguous. Use {{{text}}} or {{{name}}}{rest} instead")]
    Ambiguous { text: String, name: String, rest: String },
    #[error("Coordinates must be > 0")]
    ZeroCoordinate,
    #[error("Unexpected string \"{rest}\" after region")]
    UnexpectedString { rest: String },
    /// No such reference, or an empty range (`chr:200-100`): htslib logs nothing.
    #[error("no such reference or empty range")]
    NotFound,
}

impl RegionError {
    /// Whether htslib logs an error line for this failure.
    pub fn is_logged(&self) -> bool {
        !matches!(self, RegionError::NotFound)
    }
}

/// htslib's `hts_parse_region` itself (flags 0, as `fai_parse_region` calls it): no special
/// names, and `beg` as htslib leaves it, which is -1 for a start of 0 (`chr:0-5`); callers that
/// iterate clamp it, `faidx` does not (see `crate::io::fasta`).
pub fn parse_region_detailed(
    text: &str,
    lookup: impl Fn(&[u8]) -> Option<i32>,
) -> Result<Region, RegionError> {
    use RegionError::NotFound;
    // A C string ends at its first NUL.
    let text = text.as_bytes();
    let text = &text[..memchr::memchr(0, text).unwrap_or(text.len())];
    let lossy = |b: &[u8]| String::from_utf8_lossy(b).into_owned();

    if text.first() == Some(&b'{') {
        let close = memchr::memchr(b'}', text)
            .ok_or_else(|| RegionError::MismatchingBraces { text: lossy(text) })?;
        if text.get(close + 1) != Some(&b':') {
            // `{name}`: everything after `{` except the last byte (htslib assumes it is `}`).
            let tid = lookup(&text[1..text.len() - 1]).ok_or(NotFound)?;
            return Ok(Region::whole(tid));
        }
        let tid = lookup(&text[1..close]).ok_or(NotFound)?;
        return parse_coordinates(tid, &text[close + 2..]);
    }

    let Some(colon) = memchr::memrchr(b':', text) else {
        return lookup(text).map(Region::whole).ok_or(NotFound);
    };
    if let Some(tid) = lookup(text) {
        if lookup(&text[..colon]).is_some() {
            return Err(RegionError::Ambiguous {
                text: lossy(text),
                name: lossy(&text[..colon]),
                rest: lossy(&text[colon..]),
            });
        }
        return Ok(Region::whole(tid));
    }
    let tid = lookup(&text[..colon]).ok_or(NotFound)?;
    parse_coordinates(tid, &text[colon + 1..])
}

/// The part after the colon: `beg`, `beg-`, `beg-end`, `-end`, or nothing.
fn parse_coordinates(tid: i32, text: &[u8]) -> Result<Region, RegionError> {
    let unexpected =
        |rest: &[u8]| RegionError::UnexpectedString { rest: String::from_utf8_lossy(rest).into() };
    let (first, after_first) = parse_decimal(text);
    let beg = first.wrapping_sub(1);
    let next = text.get(after_first).copied();
    if beg < 0 {
        if beg != -1 && next == Some(b'-') && !text.is_empty() {
            return Err(RegionError::ZeroCoordinate);
        }
        if next.is_none_or(|c| c.is_ascii_digit() || c == b',') {
            // `chr:-100` is `chr:1-100`.
            let end = if beg == -1 { Region::END_OF_REFERENCE } else { -(beg + 1) };
            return Ok(Region { tid, beg: 0, end });
        }
        if beg < -1 {
            return Err(unexpected(&text[after_first..]));
        }
    }
    let mut end = match next {
        None => Region::END_OF_REFERENCE,
        Some(b'-') => {
            let rest = &text[after_first + 1..];
            let (value, after_end) = parse_decimal(rest);
            // With no digits the parser stopped at the start, as htslib's `strend`.
            if rest.get(after_end).is_some_and(|&c| c != b',') {
                return Err(unexpected(&rest[after_end..]));
            }
            value
        }
        Some(_) => return Err(unexpected(&text[after_first..])),
    };
    if end == 0 {
        end = Region::END_OF_REFERENCE; // `chr:100-` is `chr:100-<end>`
    }
    if beg >= end {
        return Err(RegionError::NotFound);
    }
    Ok(Region { tid, beg, end })
}

/// `hts_parse_decimal` with thousands separators: optional leading spaces and sign, digits with
/// commas, an optional fraction, and an exponent (`e3`) or suffix (`k`, `M`, `G`). Returns the value
/// (fraction truncated, arithmetic wrapping as in C) and where parsing stopped; with no digits,
/// it stopped at 0.
fn parse_decimal(text: &[u8]) -> (i64, usize) {
    let at = |i: usize| text.get(i).copied().unwrap_or(0);
    let mut i = 0;
    while matches!(at(i), b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r') {
        i += 1;
    }
    let mut negative = false;
    if matches!(at(i), b'+' | b'-') {
        negative = at(i) == b'-';
        i += 1;
    }
    let mut value: u64 = 0;
    let mut digits = 0;
    let mut decimals: i32 = 0;
    let push_digit = |value: u64, c: u8| value.wrapping_mul(10).wrapping_add(u64::from(c - b'0'));
    loop {
        match at(i) {
            c if c.is_ascii_digit() => {
                digits += 1;
                value = push_digit(value, c);
            }
            b',' => {}
            _ => break,
        }
        i += 1;
    }
    if at(i) == b'.' {
        i += 1;
        while at(i).is_ascii_digit() {
            decimals += 1;
            digits += 1;
            value = push_digit(value, at(i));
            i += 1;
        }
    }
    let mut exponent: i32 = 0;
    match at(i) {
        b'e' | b'E' => {
            i += 1;
            let mut negative_exponent = false;
            if matches!(at(i), b'+' | b'-') {
                negative_exponent = at(i) == b'-';
                i += 1;
            }
            while at(i).is_ascii_digit() {
                exponent = exponent.wrapping_mul(10).wrapping_add(i32::from(at(i) - b'0'));
                i += 1;
            }
            if negative_exponent {
                exponent = exponent.wrapping_neg();
            }
        }
        b'k' | b'K' => (exponent, i) = (exponent + 3, i + 1),
        b'm' | b'M' => (exponent, i) = (exponent + 6, i + 1),
        b'g' | b'G' => (exponent, i) = (exponent + 9, i + 1),
        _ => {}
    }
    exponent = exponent.wrapping_sub(decimals);
    // 10^64 ≡ 0 and 10^-20 truncates anything to 0 in 64 bits, so longer loops change nothing.
    for _ in 0..exponent.clamp(0, 64) {
        value = value.wrapping_mul(10);
    }
    for _ in 0..exponent.saturating_neg().clamp(0, 20) {
        value /= 10;
    }
    if exponent < -20 {
        value = 0;
    }
    let signed = if negative { (value as i64).wrapping_neg() } else { value as i64 };
    (signed, if digits > 0 { i } else { 0 })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The header of the check file: `samtools view -c rg.bam REGION` gave the truths below.
    fn refs() -> Vec<Reference> {
        ["chr1", "HLA:1", "chr2", "chr2:100-200"]
            .iter()
            .map(|n| Reference { name: n.as_bytes().to_vec(), len: 100_000 })
            .collect()
    }

    fn parse(text: &str) -> Option<(i32, i64, i64)> {
        parse_region(text, &refs()).map(|r| (r.tid, r.beg, r.end))
    }

    const END: i64 = Region::END_OF_REFERENCE;

    #[test]
    fn a_bare_name_is_the_whole_reference() {
        assert_eq!(parse("chr1"), Some((0, 0, END)));
        assert_eq!(parse("chr2"), Some((2, 0, END)));
    }

    #[test]
    fn chr_beg_runs_to_the_end() {
        assert_eq!(parse("chr1:100"), Some((0, 99, END)));
        assert_eq!(parse("chr1:100-"), Some((0, 99, END)));
        assert_eq!(parse("chr1:100-0"), Some((0, 99, END)));
    }

    #[test]
    fn chr_beg_end_is_one_based_inclusive_in_text() {
        assert_eq!(parse("chr1:100-200"), Some((0, 99, 200)));
        assert_eq!(parse("chr1:+100-200"), Some((0, 99, 200)));
        assert_eq!(parse("chr1: 100-200"), Some((0, 99, 200)));
    }

    #[test]
    fn chr_dash_end_starts_at_one() {
        assert_eq!(parse("chr1:-200"), Some((0, 0, 200)));
        assert_eq!(parse("chr1:-0"), Some((0, 0, END)));
    }

    #[test]
    fn zero_and_empty_starts_mean_the_whole_reference_start() {
        assert_eq!(parse("chr1:0-100"), Some((0, 0, 100)));
        assert_eq!(parse("chr1:0"), Some((0, 0, END)));
        assert_eq!(parse("chr1:"), Some((0, 0, END)));
    }

    #[test]
    fn commas_in_numbers_are_ignored() {
        assert_eq!(parse("chr1:1,001-2,000"), Some((0, 1000, 2000)));
        assert_eq!(parse("chr1:1,0,0-2,00"), Some((0, 99, 200)));
        assert_eq!(parse("chr1:100-200,"), Some((0, 99, 200)));
    }

    #[test]
    fn suffixes_fractions_and_exponents_scale_numbers() {
        assert_eq!(parse("chr1:1k-2k"), Some((0, 999, 2000)));
        assert_eq!(parse("chr1:1.5k"), Some((0, 1499, END)));
        assert_eq!(parse("chr1:1e3-2e3"), Some((0, 999, 2000)));
    }

    #[test]
    fn braces_quote_names() {
        assert_eq!(parse("{chr1}"), Some((0, 0, END)));
        assert_eq!(parse("{chr1}:100-200"), Some((0, 99, 200)));
        assert_eq!(parse("{HLA:1}:100-200"), Some((1, 99, 200)));
        assert_eq!(parse("{chr2:100-200}"), Some((3, 0, END)));
        assert_eq!(parse("{chr2}:100-200"), Some((2, 99, 200)));
        assert_eq!(parse("{chr1"), None);
        assert_eq!(parse("{chr1}x"), None);
    }

    #[test]
    fn a_name_with_a_colon_works_when_it_is_a_reference() {
        assert_eq!(parse("HLA:1"), Some((1, 0, END)));
        assert_eq!(parse("HLA:1:100-200"), Some((1, 99, 200)));
        assert_eq!(parse("HLA"), None);
    }

    #[test]
    fn a_name_that_is_also_a_prefix_and_range_is_ambiguous() {
        assert_eq!(parse("chr2:100-200"), None);
    }

    #[test]
    fn star_and_dot_are_special() {
        assert_eq!(parse("*"), Some((Region::UNPLACED_TID, 0, END)));
        assert!(parse_region("*", &refs()).unwrap().is_unplaced());
        assert_eq!(parse("."), Some((Region::WHOLE_FILE_TID, 0, END)));
    }

    #[test]
    fn unknown_names_and_invalid_ranges_are_none() {
        for text in
            ["chr9", " chr1", "chr1:200-100", "chr1:100x", "chr1:100-200x", "chr1:-5-10", ""]
        {
            assert_eq!(parse(text), None, "{text}");
        }
    }

    #[test]
    fn decimal_parser_reports_where_it_stopped() {
        assert_eq!(parse_decimal(b"12,345-9"), (12345, 6));
        assert_eq!(parse_decimal(b"-7"), (-7, 2));
        assert_eq!(parse_decimal(b"x"), (0, 0));
        assert_eq!(parse_decimal(b"  "), (0, 0));
        assert_eq!(parse_decimal(b"2.75"), (2, 4));
        assert_eq!(parse_decimal(b"1e99"), (0, 4));
    }

    #[test]
    fn detailed_parse_keeps_htslib_start_and_messages() {
        let lookup = |name: &[u8]| refs().iter().position(|r| r.name == name).map(|i| i as i32);
        let r = parse_region_detailed("chr1:0-5", lookup).unwrap();
        assert_eq!((r.beg, r.end), (-1, 5));
        let e = parse_region_detailed("chr1:2-3x", lookup).unwrap_err();
        assert_eq!(e.to_string(), "Unexpected string \"x\" after region");
        let e = parse_region_detailed("{chr1", lookup).unwrap_err();
        assert_eq!(e.to_string(), "Mismatching braces in \"{chr1\"");
        let e = parse_region_detailed("chr2:100-200", lookup).unwrap_err();
        assert_eq!(
            e.to_string(),
            "Range is ambiguous. Use {chr2:100-200} or {chr2}:100-200 instead"
        );
        let e = parse_region_detailed("chr1:-5-10", lookup).unwrap_err();
        assert_eq!(e, RegionError::ZeroCoordinate);
        assert!(!parse_region_detailed("chr9", lookup).unwrap_err().is_logged());
        assert!(parse_region_detailed(".", lookup).is_err(), "no special names");
    }

    #[test]
    fn a_custom_lookup_can_serve_a_name_index() {
        let region = parse_region_with("x:5-6", |name| (name == b"x").then_some(7));
        assert_eq!(region, Some(Region { tid: 7, beg: 4, end: 6 }));
    }
}
