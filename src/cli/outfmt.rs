//! `-O FMT[,level=N]`, `--output-fmt-option level=N` and the output-name extension, as
//! htslib's `sam_open_mode` + `sam_open_format` combine them for fixmate and markdup.

use super::flags::parse_c_int;
use crate::error::Error;
use crate::pipeline::sink::OutputFormat;

#[derive(Default)]
pub struct OutputChoice {
    pub explicit: Option<OutputFormat>,
    pub level: Option<i32>,
}

impl OutputChoice {
    /// `-O`/`--output-fmt`.
    pub fn set_format(&mut self, v: &str) -> Result<(), Error> {
        let (fmt, rest) = v.split_once(',').unwrap_or((v, ""));
        self.explicit = Some(match fmt.to_ascii_lowercase().as_str() {
            "sam" => OutputFormat::Sam,
            "bam" => OutputFormat::Bam,
            "cram" => return Err(Error::Message("CRAM is not supported by mdsam".into())),
            _ => return Err(Error::Usage(format!("unknown output format \"{fmt}\""))),
        });
        for opt in rest.split(',').filter(|o| !o.is_empty()) {
            self.set_option(opt);
        }
        Ok(())
    }

    /// `--output-fmt-option`.
    pub fn set_option(&mut self, v: &str) {
        if let Some(l) = v.strip_prefix("level=") {
            self.level = parse_c_int(l).map(|l| l as i32);
        }
    }

    /// The format: `-O`, else the extension of `output`, else BAM.
    pub fn format(&self, output: &str) -> OutputFormat {
        self.explicit.or_else(|| OutputFormat::from_path(output)).unwrap_or(OutputFormat::Bam)
    }
}
