//! `split`'s output names: the `-f` format string (`%*`, `%#`, `%!`, `%.`, `%%`) and the output
//! format each name opens as (samtools 1.24 `expand_format_string`, htslib `sam_open_mode`).

use crate::error::Error;
use crate::io::format::OutputFormat;

/// The input's file name without directories or its last extension (`%*`).
pub fn input_base_name(input: &str) -> &str {
    let base = input.rsplit('/').next().unwrap_or(input);
    base.rfind('.').map_or(base, |dot| &base[..dot])
}

/// Expands `format` for one output: `index` is its number (`%#`, zero-padded to `zero_pad`),
/// `value` its read group or tag value (`%!`), `explicit` the `--output-fmt` (`%.`). Bytes, not
/// text: values that differ only in invalid UTF-8 must still name different files.
pub fn expand(
    format: &str,
    base: &str,
    value: &[u8],
    (index, zero_pad): (usize, usize),
    explicit: Option<OutputFormat>,
) -> Result<Vec<u8>, Error> {
    let mut out = Vec::with_capacity(format.len() + value.len() + base.len());
    let mut chars = format.chars();
    while let Some(c) = chars.next() {
        if c != '%' {
            out.extend_from_slice(c.encode_utf8(&mut [0; 4]).as_bytes());
            continue;
        }
        match chars.next() {
            Some('%') => out.push(b'%'),
            Some('*') => out.extend_from_slice(base.as_bytes()),
            Some('#') => out.extend_from_slice(format!("{index:0zero_pad$}").as_bytes()),
            Some('!') => out.extend_from_slice(value),
            Some('.') => out.extend_from_slice(match explicit {
                Some(OutputFormat::Cram) => b"cram",
                Some(OutputFormat::Sam | OutputFormat::SamGz) => b"sam",
                Some(OutputFormat::Bam) | None => b"bam",
            }),
            None => {
                return Err(Error::Bare(
                    "samtools split: Trailing % in filename format string".into(),
                ));
            }
            Some(other) => {
                return Err(Error::Bare(format!(
                    "samtools split: Unknown specifier %{other} in filename format string"
                )));
            }
        }
    }
    Ok(out)
}

/// The format `name` is written in: `--output-fmt`, else its extension as `sam_open_mode` reads
/// it (`bam` or `cram` after the last dot), else SAM text.
pub fn format_of(name: &[u8], explicit: Option<OutputFormat>) -> OutputFormat {
    if let Some(f) = explicit {
        return f;
    }
    let ext = match memchr::memrchr(b'.', name) {
        Some(dot) if !name[dot..].contains(&b'/') => name[dot + 1..].to_ascii_lowercase(),
        _ => return OutputFormat::Sam,
    };
    match ext.as_slice() {
        b"bam" => OutputFormat::Bam,
        b"cram" => OutputFormat::Cram,
        _ => OutputFormat::Sam,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn format_strings_expand_like_samtools() {
        let base = input_base_name("dir/in.sorted.bam");
        assert_eq!(base, "in.sorted");
        let name = expand("%*_%#.%.", base, b"grp1", (3, 0), None).unwrap();
        assert_eq!(name, b"in.sorted_3.bam");
        let name = expand("x.%!.%#%%.%.", base, b"g", (7, 4), Some(OutputFormat::Sam)).unwrap();
        assert_eq!(name, b"x.g.0007%.sam");
        assert_eq!(expand("é%!", base, b"\xff", (0, 0), None).unwrap(), b"\xc3\xa9\xff");
        assert!(expand("a%", base, b"g", (0, 0), None).is_err());
        assert!(expand("a%q", base, b"g", (0, 0), None).is_err());
    }

    #[test]
    fn names_without_a_known_extension_are_sam() {
        assert_eq!(format_of(b"a.bam", None), OutputFormat::Bam);
        assert_eq!(format_of(b"a.sam.gz", None), OutputFormat::Sam);
        assert_eq!(format_of(b"a.d/x", None), OutputFormat::Sam);
        assert_eq!(format_of(b"a.sam", Some(OutputFormat::Bam)), OutputFormat::Bam);
    }
}
