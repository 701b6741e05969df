//! Options every command shares (htslib's `sam_global_args`).

use crate::error::Error;

/// `-@ N`: extra threads, as samtools counts them.
pub fn parse_threads(v: &str) -> Result<usize, Error> {
    v.trim()
        .parse::<i64>()
        .map(|n| n.max(0) as usize)
        .map_err(|_| Error::Usage(format!("invalid number of threads \"{v}\"")))
}

/// `-O`/`--output-fmt FMT[,level=N,...]`: the format and any level it sets.
pub fn parse_output_fmt(
    v: &str,
) -> Result<(crate::pipeline::sink::OutputFormat, Option<i32>), Error> {
    use crate::pipeline::sink::OutputFormat;
    let (fmt, rest) = v.split_once(',').unwrap_or((v, ""));
    let format = match fmt.to_ascii_lowercase().as_str() {
        "sam" => OutputFormat::Sam,
        "bam" => OutputFormat::Bam,
        "sam.gz" => OutputFormat::SamGz,
        "cram" => return Err(Error::Message("CRAM is not supported by mdsam".into())),
        _ => return Err(Error::Usage(format!("unknown output format \"{fmt}\""))),
    };
    let mut level = None;
    for opt in rest.split(',') {
        if let Some(l) = parse_fmt_option_level(opt) {
            level = Some(l);
        }
    }
    Ok((format, level))
}

/// The level an `--output-fmt-option` sets (`level=N`), if any.
pub fn parse_fmt_option_level(opt: &str) -> Option<i32> {
    opt.strip_prefix("level=").and_then(super::flags::parse_c_int).map(|l| l as i32)
}
