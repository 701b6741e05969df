//! What a command's record input is read with: its parsing threads and the reference FASTA a
//! CRAM's bases are decoded against, decided by the command line once and handed to
//! [`crate::io::open`] as a value (the input twin of [`crate::io::output_spec::OutputSpec`]).

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct InputSpec {
    /// Parsing tasks in all (0 is taken as 1).
    pub threads: usize,
    /// `-T`, `--reference`, `--input-fmt-option reference=`: the FASTA a CRAM input's bases
    /// are decoded against (htslib then tries `REF_CACHE`, `REF_PATH` and `UR`).
    pub reference: Option<String>,
}

impl InputSpec {
    /// `threads` parsing tasks, a CRAM's bases decoded against `reference`.
    pub fn new(threads: usize, reference: Option<&str>) -> InputSpec {
        InputSpec { threads, reference: reference.map(str::to_string) }
    }
}

/// `threads` alone: an input whose CRAM needs no FASTA named on the command line (a temporary
/// file mdsam wrote, or a command that never reads bases).
impl From<usize> for InputSpec {
    fn from(threads: usize) -> InputSpec {
        InputSpec { threads, reference: None }
    }
}

impl From<&InputSpec> for InputSpec {
    fn from(spec: &InputSpec) -> InputSpec {
        spec.clone()
    }
}
