//! What a command's record output is to be: format, level, deflate engine and CRAM settings,
//! decided by the command line once and handed to [`crate::io::sink::RecordSink`] as a value,
//! so that following a command's options finds everything its output depends on.

use super::bgzf::codec::{self, Engine};
use super::cram::writer::CramSettings;
use super::format::OutputFormat;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OutputSpec {
    pub format: OutputFormat,
    /// samtools' compression level (−1: the default).
    pub level: i32,
    /// Deflates BGZF blocks (BAM, bgzipped SAM).
    pub engine: Engine,
    pub cram: CramSettings,
}

/// BAM at the default level, as samtools writes without options.
impl Default for OutputSpec {
    fn default() -> Self {
        OutputSpec::new(OutputFormat::Bam, -1)
    }
}

impl OutputSpec {
    /// `format` at `level` with the default engine ([`codec::deflate_engine`]) and CRAM
    /// settings, as when no format option is given.
    pub fn new(format: OutputFormat, level: i32) -> OutputSpec {
        FormatOptions::default().spec(format, level)
    }
}

/// The `--output-fmt-option`s (and those after `-O FMT,`) that are not the level: what they
/// set so far, while the command line is read.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FormatOptions {
    /// `deflate=isal|libdeflate` (an mdsam addition).
    pub engine: Option<Engine>,
    pub cram: CramSettings,
}

impl FormatOptions {
    /// Takes one option: `deflate=`, or one of CRAM's; others are left to the caller.
    pub fn apply(&mut self, opt: &str) {
        if let Some(engine) = opt.strip_prefix("deflate=").and_then(Engine::parse) {
            self.engine = Some(engine);
        }
        self.cram.apply(opt);
    }

    /// The deflate engine: `deflate=`, else the default ([`codec::deflate_engine`]).
    pub fn deflate_engine(&self) -> Engine {
        self.engine.unwrap_or_else(codec::deflate_engine)
    }

    /// The output spec of `format` at `level` with these options.
    pub fn spec(&self, format: OutputFormat, level: i32) -> OutputSpec {
        OutputSpec { format, level, engine: self.deflate_engine(), cram: self.cram.clone() }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options_set_the_engine_and_the_cram_layout() {
        let mut options = FormatOptions::default();
        options.apply("deflate=isal");
        options.apply("version=3.0");
        options.apply("seqs_per_slice=500");
        options.apply("level=3");
        let spec = options.spec(OutputFormat::Cram, 3);
        assert_eq!(spec.engine, Engine::Isal);
        assert_eq!((spec.cram.version, spec.cram.seqs_per_slice), ((3, 0), 500));
        let default = OutputSpec::new(OutputFormat::Bam, -1);
        assert_eq!(default.cram, CramSettings::default());
        assert_eq!(default.engine, codec::deflate_engine());
    }
}
