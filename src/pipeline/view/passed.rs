//! A batch's records that `view` passes unchanged to BAM, handed whole to the writer's deflate
//! jobs so that the next batch is read and filtered while they run.

use crate::io::bgzf::gather::Units;
use crate::record::Batch;

/// The records of `batch` numbered in `passed`, in that order; the batch's buffer goes back to
/// the recycler when the last deflate job lets go of it.
pub struct PassedRecords {
    batch: Batch,
    passed: Vec<u32>,
}

impl PassedRecords {
    pub fn new(batch: Batch, passed: Vec<u32>) -> Self {
        PassedRecords { batch, passed }
    }
}

impl Units for PassedRecords {
    fn count(&self) -> usize {
        self.passed.len()
    }

    fn size(&self, i: usize) -> usize {
        self.batch.framed(self.passed[i] as usize).len()
    }

    fn unit(&self, i: usize) -> &[u8] {
        self.batch.framed(self.passed[i] as usize)
    }
}

impl Drop for PassedRecords {
    fn drop(&mut self) {
        crate::io::recycle::give(std::mem::take(&mut self.batch.data));
    }
}
