//! The output formats a command can write, and the one a file name implies.

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OutputFormat {
    Sam,
    /// BGZF-compressed SAM (`.sam.gz`).
    SamGz,
    Bam,
    /// CRAM 3.0/3.1, encoded from BAM records ([`crate::io::cram::writer`]).
    Cram,
}

impl OutputFormat {
    /// `"sam"`, `"bam"` or `"cram"` as a profile names the output format (bgzipped SAM is SAM
    /// text).
    pub fn name(self) -> &'static str {
        match self {
            OutputFormat::Bam => "bam",
            OutputFormat::Cram => "cram",
            OutputFormat::Sam | OutputFormat::SamGz => "sam",
        }
    }

    /// Whether commands hand this format framed BAM records (BAM, and CRAM, which is encoded
    /// from them) rather than SAM text.
    pub fn takes_bam_records(self) -> bool {
        matches!(self, OutputFormat::Bam | OutputFormat::Cram)
    }

    /// The format a file name implies, as htslib's extension mapping (`None` when unknown).
    pub fn from_path(path: &str) -> Option<OutputFormat> {
        let lower = path.to_ascii_lowercase();
        if lower.ends_with(".bam") {
            Some(OutputFormat::Bam)
        } else if lower.ends_with(".cram") {
            Some(OutputFormat::Cram)
        } else if lower.ends_with(".sam.gz") {
            Some(OutputFormat::SamGz)
        } else if lower.ends_with(".sam") {
            Some(OutputFormat::Sam)
        } else {
            None
        }
    }
}

/// The `--write-index` request for output `out` as htslib reads it: `out##idx##name` names the
/// index (a `.bai` name selects BAI), otherwise `<out>.csi`. Returns (output path, index path,
/// BAI?).
pub fn index_request(out: &str) -> (String, String, bool) {
    match out.split_once("##idx##") {
        Some((file, idx)) => {
            (file.to_string(), idx.to_string(), idx.to_ascii_lowercase().ends_with(".bai"))
        }
        None => (out.to_string(), format!("{out}.csi"), false),
    }
}
