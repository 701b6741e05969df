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
/// `value` its read group or tag value (`%!`), `explicit` the `--output-fmt` (`%.`).
pub fn expand(
    format: &str,
    base: &str,
    value: &str,
    (index, zero_pad): (usize, usize),
    explicit: Option<OutputFormat>,
) -> Result<String, Error> {
    let mut out = String::with_capacity(format.len() + value.len() + base.len());
    let mut chars = format.chars();
    while let Some(c) = chars.next() {
        if c != '%' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('%') => out.push('%'),
            Some('*') => out.push_str(base),
            Some('#') => out.push_str(&format!("{index:0zero_pad$}")),
            Some('!') => out.push_str(value),
            Some('.') => out.push_str(match explicit {
                Some(OutputFormat::Cram) => "cram",
                Some(OutputFormat::Sam | OutputFormat::SamGz) => "sam",
                Some(OutputFormat::Bam) | None => "bam",
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
pub fn format_of(name: &str, explicit: Option<OutputFormat>) -> OutputFormat {
    if let Some(f) = explicit {
        return f;
    }
    let ext = match name.rfind('.') {
        Some(dot) if !name[dot..].contains('/') => name[dot + 1..].to_ascii_lowercase(),
        _ => return OutputFormat::Sam,
    };
    match ext.as_str() {
        "bam" => OutputFormat::Bam,
        "cram" => OutputFormat::Cram,
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
        let name = expand("%*_%#.%.", base, "grp1", (3, 0), None).unwrap();
        assert_eq!(name, "in.sorted_3.bam");
        let name = expand("x.%!.%#%%.%.", base, "g", (7, 4), Some(OutputFormat::Sam)).unwrap();
        assert_eq!(name, "x.g.0007%.sam");
        assert!(expand("a%", base, "g", (0, 0), None).is_err());
        assert!(expand("a%q", base, "g", (0, 0), None).is_err());
    }

    #[test]
    fn names_without_a_known_extension_are_sam() {
        assert_eq!(format_of("a.bam", None), OutputFormat::Bam);
        assert_eq!(format_of("a.sam.gz", None), OutputFormat::Sam);
        assert_eq!(format_of("a.d/x", None), OutputFormat::Sam);
        assert_eq!(format_of("a.sam", Some(OutputFormat::Bam)), OutputFormat::Bam);
    }
}
