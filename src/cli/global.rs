//! Options every command shares (htslib's `sam_global_args`).

use crate::error::Error;

/// `-@ N`: extra threads, as samtools counts them.
pub fn parse_threads(v: &str) -> Result<usize, Error> {
    v.trim()
        .parse::<i64>()
        .map(|n| n.max(0) as usize)
        .map_err(|_| Error::Usage(format!("invalid number of threads \"{v}\"")))
}
