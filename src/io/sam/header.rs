//! SAM header text as htslib 1.24 reads it from a SAM file (`sam_hdr_build_from_sam_file`) and
//! writes it back (`sam_hrecs_rebuild_text`): samtools never copies a SAM file's header verbatim,
//! it parses the lines and rebuilds the text from them.
//!
//! Per line: a `\r` before the `\n` goes; the line ends at a NUL; a bare `@CO` becomes `@CO\t`;
//! the type must be `@HD`, `@SQ`, `@RG` or `@PG` followed by a tab, or `@CO`; every field after it
//! is `\tKEY:VALUE` with a two-character key. Across lines: an `@SQ` needs `SN` and one `LN`
//! value, and no two share a name; an `@RG` needs an `ID` (a repeated one is a warning); a `@PG`
//! needs an `ID` (a second `ID` on a line is a warning). The first `@HD` goes to the top unless
//! the first line is an `@HD` already. A first line that is a bare `@CO` is not SAM at all to
//! htslib's format detection.

use crate::record::header::HeaderError;

/// The header text samtools would write for SAM header `text`, and the warnings htslib prints
/// while reading it.
pub fn normalise(text: &[u8]) -> Result<(Vec<u8>, Vec<String>), HeaderError> {
    let mut lines: Vec<Vec<u8>> = Vec::new();
    let mut warnings = Vec::new();
    let mut refs = rustc_hash::FxHashSet::default();
    let mut groups = rustc_hash::FxHashSet::default();
    for raw in text.split(|&b| b == b'\n') {
        let raw = raw.strip_suffix(b"\r").unwrap_or(raw);
        if raw.is_empty() {
            continue;
        }
        let mut line = raw[..memchr::memchr(0, raw).unwrap_or(raw.len())].to_vec();
        let shown = || String::from_utf8_lossy(raw).into_owned();
        if line.len() < 3 || !line[1].is_ascii_alphabetic() || !line[2].is_ascii_alphabetic() {
            return Err(HeaderError::NoTwoCharacterKey(shown()));
        }
        if line == b"@CO" && lines.is_empty() {
            // htslib tells SAM from other formats by a first line of "@HD\t", "@SQ\t", "@RG\t",
            // "@PG\t" or "@CO\t"; the others fail below as bad lines.
            return Err(HeaderError::NotSam(shown()));
        }
        if line == b"@CO" {
            // htslib's first SAM reader let an untabbed @CO through; 1.23 on writes it tabbed.
            line.push(b'\t');
        }
        let kind: [u8; 2] = [line[1], line[2]];
        let tabbed = line.get(3) == Some(&b'\t');
        let known = matches!(&kind, b"HD" | b"SQ" | b"RG" | b"PG") && tabbed;
        if !(known || &kind == b"CO" && tabbed) {
            return Err(HeaderError::BadLine(shown()));
        }
        if &kind != b"CO" {
            let fields = fields(&line).ok_or_else(|| HeaderError::Malformed(shown()))?;
            check_fields(&kind, &fields, (&mut refs, &mut groups), &mut warnings, &shown)?;
        }
        let first_is_hd = lines.first().is_some_and(|l| l.starts_with(b"@HD"));
        if &kind == b"HD" && !lines.is_empty() && !first_is_hd {
            lines.insert(0, line);
        } else {
            lines.push(line);
        }
    }
    let mut out = Vec::with_capacity(text.len() + 8);
    for l in lines {
        out.extend_from_slice(&l);
        out.push(b'\n');
    }
    Ok((out, warnings))
}

/// The `KEY:VALUE` fields of a non-comment line; `None` when one has no two-character key and
/// colon (an empty field included).
fn fields(line: &[u8]) -> Option<Vec<&[u8]>> {
    let fields: Vec<&[u8]> = line[4..].split(|&b| b == b'\t').collect();
    fields.iter().all(|f| f.len() >= 3 && f[2] == b':').then_some(fields)
}

type Seen = rustc_hash::FxHashSet<Vec<u8>>;

/// htslib's `sam_hrecs_update_hashes` for one line: required tags, duplicate names.
fn check_fields(
    kind: &[u8; 2],
    fields: &[&[u8]],
    (refs, groups): (&mut Seen, &mut Seen),
    warnings: &mut Vec<String>,
    shown: &dyn Fn() -> String,
) -> Result<(), HeaderError> {
    let values =
        |key: &'static [u8; 2]| fields.iter().filter(move |f| &f[..2] == key).map(|f| &f[3..]);
    match kind {
        b"SQ" => {
            // The last SN counts; LN may repeat only with the same value.
            let name = values(b"SN").next_back().ok_or_else(|| HeaderError::BadSq(shown()))?;
            let mut lengths = values(b"LN").map(crate::record::header_checks::strtoll);
            if let Some(first) = lengths.next()
                && lengths.any(|l| l != first)
            {
                return Err(HeaderError::MultipleLengths(String::from_utf8_lossy(name).into()));
            }
            if !refs.insert(name.to_vec()) {
                return Err(HeaderError::DuplicateReference(String::from_utf8_lossy(name).into()));
            }
        }
        b"RG" => {
            let id =
                values(b"ID").next().ok_or_else(|| HeaderError::ReadGroupWithoutId(shown()))?;
            if !groups.insert(id.to_vec()) {
                let id = String::from_utf8_lossy(id);
                warnings.push(format!(
                    "[W::sam_hrecs_update_hashes] Duplicate entry \"{id}\" in sam header"
                ));
            }
        }
        b"PG" => {
            let mut ids = values(b"ID");
            let first = ids.next().ok_or_else(|| HeaderError::ProgramWithoutId(shown()))?;
            for _ in ids {
                warnings.push(format!(
                    "[W::sam_hrecs_update_hashes] PG line with multiple ID tags. The first encountered was preferred - ID:{}",
                    String::from_utf8_lossy(first)
                ));
            }
        }
        _ => {}
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn norm(text: &str) -> Result<String, HeaderError> {
        normalise(text.as_bytes()).map(|(t, _)| String::from_utf8(t).unwrap())
    }

    #[test]
    fn rebuilds_as_htslib_writes() {
        let sq = "@SQ\tSN:c\tLN:9\n";
        assert_eq!(norm("@HD\tVN:1.6\r\n@CO\r\n").unwrap(), "@HD\tVN:1.6\n@CO\t\n");
        assert_eq!(norm(&format!("{sq}@HD\tVN:1.6\n")).unwrap(), format!("@HD\tVN:1.6\n{sq}"));
        // A second @HD stays where it is once one is at the top.
        let two = format!("{sq}@HD\tVN:1\n@HD\tVN:2\n");
        assert_eq!(norm(&two).unwrap(), format!("@HD\tVN:1\n{sq}@HD\tVN:2\n"));
        assert_eq!(norm("@SQ\tSN:c\tLN:9\0junk\n").unwrap(), sq);
        assert_eq!(norm("@CO\tany\ttext: here\n").unwrap(), "@CO\tany\ttext: here\n");
    }

    #[test]
    fn refuses_what_htslib_refuses() {
        for bad in [
            "@HD\n",
            "@PG\n",
            "@CO\n@SQ\tSN:c\tLN:9\n",
            "@H1\tVN:1\n",
            "@co\tx\n",
            "@COx\n",
            "@HD\tVN:1.6\tfoo\n",
            "@HD\t\n",
            "@SQ\tSN:c\tLN:9\t\n",
            "@SQ\tLN:9\n",
            "@SQ\tSN:c\tLN:9\tLN:10\n",
            "@SQ\tSN:c\tLN:9\n@SQ\tSN:c\tLN:9\n",
            "@RG\tSM:x\n",
            "@PG\tPN:x\n",
        ] {
            assert!(norm(bad).is_err(), "{bad:?}");
        }
        assert!(norm("@SQ\tSN:c\tLN:9\tLN:09\n").is_ok());
    }

    #[test]
    fn warns_as_htslib_warns() {
        let (_, w) = normalise(b"@RG\tID:a\n@RG\tID:a\n@PG\tID:p\tID:q\n").unwrap();
        assert_eq!(
            w,
            [
                "[W::sam_hrecs_update_hashes] Duplicate entry \"a\" in sam header",
                "[W::sam_hrecs_update_hashes] PG line with multiple ID tags. The first encountered was preferred - ID:p"
            ]
        );
    }
}
