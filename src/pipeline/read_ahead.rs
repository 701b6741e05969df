//! One read in flight: while the caller works through the batches it was given, the next group
//! is inflated and parsed by a job on the pool, as htslib's decompression threads read ahead of
//! samtools' main thread.
//!
//! For callers that walk records one at a time on one thread (depth and coverage's sweeps, the
//! merge of several sorted inputs), where [`crate::pipeline::prefetch`]'s scoped producer does
//! not fit. Reading in turn left a worker idle during every sweep: `depth` used 1.5 of 2 cores at
//! 6 M reads and ran at 0.9× samtools.

use std::sync::mpsc::{Receiver, sync_channel};

use crate::error::Error;
use crate::io::open::RecordReader;
use crate::io::sam::reader::BatchesWithWarnings;

type Read = Result<Option<BatchesWithWarnings>, Error>;

enum State {
    /// Nothing in flight (a one-thread pool reads in turn).
    Idle(Box<RecordReader>),
    /// A job on the pool is reading; it hands the reader back with what it read.
    Reading(Receiver<(Box<RecordReader>, Read)>),
    /// The end, or an error, was returned.
    Done,
}

pub struct ReadAhead {
    path: String,
    state: State,
    /// The pool has a worker to spare for the next read (the command runs on 2 or more).
    spare_worker: bool,
}

impl ReadAhead {
    /// Reads `reader` (the file `path`, for messages) on the pool of `threads` workers the
    /// caller runs on.
    pub fn new(path: &str, reader: RecordReader, threads: usize) -> Self {
        let state = State::Idle(Box::new(reader));
        ReadAhead { path: path.to_string(), state, spare_worker: threads >= 2 }
    }

    /// The next group of batches, `None` at the end; the read of the one after starts at once.
    pub fn next_group(&mut self) -> Read {
        let (reader, read) = match std::mem::replace(&mut self.state, State::Done) {
            State::Idle(mut reader) => {
                let read = reader.read_batches(&self.path);
                (reader, read)
            }
            State::Reading(rx) => match crate::io::pool_wait::next_helping_pool(&rx) {
                Some(got) => got,
                None => return Err(Error::Message("the read-ahead job failed".into())),
            },
            State::Done => return Ok(None),
        };
        if let Ok(Some(_)) = read {
            self.start(reader);
        }
        read
    }

    fn start(&mut self, mut reader: Box<RecordReader>) {
        if !self.spare_worker {
            self.state = State::Idle(reader);
            return;
        }
        let (tx, rx) = sync_channel(1);
        let path = self.path.clone();
        rayon::spawn(move || {
            let read = reader.read_batches(&path);
            // The receiver is gone when the caller stopped early: nothing to hand back.
            let _ = tx.send((reader, read));
        });
        self.state = State::Reading(rx);
    }
}
