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

/// Removes mdsam's `--profile FILE` (or `--profile=FILE`) from a command's arguments, before
/// the samtools-compatible parser sees them; returns the remaining arguments and the path.
/// Arguments after `--` are left alone.
pub fn take_profile(args: &[String]) -> Result<(Vec<String>, Option<String>), Error> {
    let mut rest = Vec::with_capacity(args.len());
    let mut path = None;
    let mut it = args.iter();
    while let Some(a) = it.next() {
        if a == "--" {
            rest.push(a.clone());
            rest.extend(it.by_ref().cloned());
            break;
        }
        if a == "--profile" {
            let v = it.next().ok_or_else(|| Error::Usage("--profile needs a file name".into()))?;
            path = Some(v.clone());
        } else if let Some(v) = a.strip_prefix("--profile=") {
            path = Some(v.to_string());
        } else {
            rest.push(a.clone());
        }
    }
    Ok((rest, path))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strings(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn profile_option_is_taken_out_in_both_spellings() {
        let (rest, path) =
            take_profile(&strings(&["-@", "2", "--profile", "p.json", "in.bam"])).unwrap();
        assert_eq!((rest, path.as_deref()), (strings(&["-@", "2", "in.bam"]), Some("p.json")));
        let (rest, path) = take_profile(&strings(&["--profile=q.json", "x"])).unwrap();
        assert_eq!((rest, path.as_deref()), (strings(&["x"]), Some("q.json")));
        let (rest, path) = take_profile(&strings(&["--", "--profile", "f"])).unwrap();
        assert_eq!((rest, path), (strings(&["--", "--profile", "f"]), None));
        assert!(take_profile(&strings(&["--profile"])).is_err());
    }
}
