//! The output formats a command can write, and the one a file name implies.

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OutputFormat {
    Sam,
    /// BGZF-compressed SAM (`.sam.gz`).
    SamGz,
    Bam,
}

impl OutputFormat {
    /// `"sam"` or `"bam"` as a profile names the output format (bgzipped SAM is SAM text).
    pub fn name(self) -> &'static str {
        match self {
            OutputFormat::Bam => "bam",
            OutputFormat::Sam | OutputFormat::SamGz => "sam",
        }
    }

    /// The format a file name implies, as htslib's extension mapping (`None` when unknown).
    pub fn from_path(path: &str) -> Option<OutputFormat> {
        let lower = path.to_ascii_lowercase();
        if lower.ends_with(".bam") {
            Some(OutputFormat::Bam)
        } else if lower.ends_with(".sam.gz") {
            Some(OutputFormat::SamGz)
        } else if lower.ends_with(".sam") {
            Some(OutputFormat::Sam)
        } else {
            None
        }
    }
}
