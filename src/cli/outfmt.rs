//! `-O FMT[,level=N]`, `--output-fmt-option level=N` and the output-name extension, as
//! htslib's `sam_open_mode` + `sam_open_format` combine them for fixmate and markdup.

use super::global::{apply_fmt_option_deflate, parse_fmt_option_level, parse_output_fmt};
use crate::error::Error;
use crate::io::format::OutputFormat;

#[derive(Default)]
pub struct OutputChoice {
    pub explicit: Option<OutputFormat>,
    pub level: Option<i32>,
}

impl OutputChoice {
    /// `-O`/`--output-fmt`, through the parser every command shares.
    pub fn set_format(&mut self, v: &str) -> Result<(), Error> {
        let (format, level) = parse_output_fmt(v)?;
        self.explicit = Some(format);
        self.level = level.or(self.level);
        Ok(())
    }

    /// `--output-fmt-option`: `level=N`, and `deflate=ENGINE` (process-wide, see
    /// [`apply_fmt_option_deflate`]).
    pub fn set_option(&mut self, v: &str) {
        self.level = parse_fmt_option_level(v).or(self.level);
        apply_fmt_option_deflate(v);
    }

    /// The format: `-O`, else the extension of `output`, else BAM.
    pub fn format(&self, output: &str) -> OutputFormat {
        self.explicit.or_else(|| OutputFormat::from_path(output)).unwrap_or(OutputFormat::Bam)
    }
}
