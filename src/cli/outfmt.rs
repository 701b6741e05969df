//! `-O FMT[,level=N]`, `--output-fmt-option level=N` and the output-name extension, as
//! htslib's `sam_open_mode` + `sam_open_format` combine them, and the other format options
//! (`deflate=`, CRAM's): together the command's [`OutputSpec`].

use super::global::{parse_fmt_option_level, parse_output_fmt};
use crate::error::Error;
use crate::io::format::OutputFormat;
use crate::io::output_spec::{FormatOptions, OutputSpec};

#[derive(Default)]
pub struct OutputChoice {
    pub explicit: Option<OutputFormat>,
    pub level: Option<i32>,
    /// `deflate=` and CRAM's options, from `-O FMT,...` and `--output-fmt-option`.
    pub options: FormatOptions,
}

impl OutputChoice {
    /// `-O`/`--output-fmt`, through the parser every command shares.
    pub fn set_format(&mut self, v: &str) -> Result<(), Error> {
        let (format, level) = parse_output_fmt(v, &mut self.options)?;
        self.explicit = Some(format);
        self.level = level.or(self.level);
        Ok(())
    }

    /// `--output-fmt-option`: `level=N`, `deflate=ENGINE` and CRAM's options.
    pub fn set_option(&mut self, v: &str) {
        self.level = parse_fmt_option_level(v).or(self.level);
        self.options.apply(v);
    }

    /// The format: `-O`, else the extension of `output`, else BAM.
    pub fn format(&self, output: &str) -> OutputFormat {
        self.explicit.or_else(|| OutputFormat::from_path(output)).unwrap_or(OutputFormat::Bam)
    }

    /// The output spec of `format` at `level` with the options given.
    pub fn spec(&self, format: OutputFormat, level: i32) -> OutputSpec {
        self.options.spec(format, level)
    }

    /// `--reference`/`-T`: a CRAM output is encoded against it too, as htslib's
    /// `parse_sam_global_opt` gives it to both sides (`reference=` given to the output alone
    /// stays when there is none).
    pub fn use_reference(&mut self, reference: Option<&str>) {
        if let Some(path) = reference {
            self.options.cram.reference = Some(path.to_string());
        }
    }
}
