//! The one way into FASTA (and FASTQ) files: [`Fasta`], a sequence file with its index, opened
//! either as htslib's `fai_load3` opens it ([`Fasta::load`]: the `.fai`, and for BGZF the
//! `.gzi`, read or built and written first; regions read at offsets) or whole into memory
//! ([`Fasta::read_whole`]: plain or gzip, the `.fai` used when it reads, else an index built in
//! memory). Both answer by name: whole sequences, clamped regions, and htslib's `fai_retrieve`
//! with its messages. Beside it, readers that need no index: [`kseq`] (records front to back, as
//! `dict` reads them) and [`scan`] (reference lists, `sort -I`'s sequences, `REF_PATH` files).
//! Nothing else in mdsam parses FASTA or `.fai` text (`tests/layering/fasta_access.rs`).
//!
//! Users: `faidx`/`fqidx`, `calmd` and `samples` load; `mpileup -f`, `consensus`, `tview`,
//! `targetcut`, `depad`, `stats -r` and CRAM references (`-T`, `UR:`) read whole, as they
//! always did (they write no `.fai` and refuse no line layout).
//!
//! Layout of a `.fai` line (tab-separated, htslib's `fai_save`):
//!
//! | column | FASTA | FASTQ |
//! |--------|-------|-------|
//! | 1 | name (the header's first word) | name |
//! | 2 | bases | bases |
//! | 3 | offset of the first base (uncompressed) | offset of the first base |
//! | 4 | bases per line | bases per line |
//! | 5 | bytes per line (with its end) | bytes per line |
//! | 6 | | offset of the first quality |
//!
//! Compatibility: [`build`] is htslib 1.24's `fai_build_core` state machine (blank lines end a
//! FASTA sequence, a shorter line ends it too, a longer one is an error, empty sequences are
//! dropped, duplicate names keep the first), with its `[E::fai_build_core]` messages;
//! [`index::parse`] is `fai_read` (`sscanf` fields); [`clamp_region`] and [`retrieve`] are
//! `fai_get_val` and `fai_retrieve`. noodles-fasta's `Indexer` and `fai::Record` are not used:
//! the Indexer refuses what htslib accepts (empty sequences, a sequence line of blanks) and
//! `fai::Record` has no quality offset and no zero bases-per-line, both of which htslib writes.
//! (noodles-cram still takes its references as a `noodles_fasta::Repository`; mdsam answers it
//! from [`Fasta`], see [`crate::io::cram::reference`].)
//!
//! Performance: indexing a 48 MB FASTA took 0.05 s (samtools 1.24: 0.11 s), its BGZF copy
//! 0.13 s (0.30 s); fetch figures are in the commit that batched the line reads.

mod build;
pub mod index;
pub mod kseq;
mod load;
mod retrieve;
pub mod scan;
mod source;
mod whole;

use std::sync::Mutex;

pub use index::{Entry, FastaIndex, Format, clamp_region};
pub use retrieve::FetchError;
pub use source::encode_gzi;

use retrieve::InMemory;
use source::Source;

/// A FASTA/FASTQ file and its index.
pub struct Fasta {
    index: FastaIndex,
    bytes: Bytes,
}

/// Where a [`Fasta`]'s bytes are.
enum Bytes {
    /// The whole (inflated) file.
    Whole(Vec<u8>),
    /// The file, read at offsets; shared by the threads that fetch.
    Seekable(Mutex<Source>),
}

impl Fasta {
    /// `fai_load3_format` with `FAI_CREATE`: the index files beside `path` (or at `fai_path`,
    /// `gzi_path`), built and written first when missing. The error is htslib's lines.
    pub fn load(
        path: &str,
        fai_path: Option<&str>,
        gzi_path: Option<&str>,
        format: Format,
    ) -> Result<Fasta, String> {
        load::load(path, fai_path, gzi_path, format)
    }

    /// `fai_build3`: indexes `path`, writing `fai_path` (default `PATH.fai`) and, for BGZF,
    /// `gzi_path` (default `PATH.gzi`). The error is htslib's lines.
    pub fn build_files(
        path: &str,
        fai_path: Option<&str>,
        gzi_path: Option<&str>,
    ) -> Result<(), String> {
        load::build_files(path, fai_path, gzi_path)
    }

    /// The whole file in memory (gzip inflated), indexed by its `.fai` when that reads, else by
    /// an index built in memory; nothing is written. The error is htslib's and samtools' lines.
    pub fn read_whole(path: &str) -> Result<Fasta, String> {
        let (bytes, index) = whole::read(path)?;
        Ok(Fasta { index, bytes: Bytes::Whole(bytes) })
    }

    fn seekable(index: FastaIndex, source: Source) -> Fasta {
        Fasta { index, bytes: Bytes::Seekable(Mutex::new(source)) }
    }

    /// The index: entries in file order and by name.
    pub fn index(&self) -> &FastaIndex {
        &self.index
    }

    /// Whether the file has a sequence `name` (`faidx_has_seq`).
    pub fn has(&self, name: &[u8]) -> bool {
        self.index.get(name).is_some()
    }

    /// The whole sequence `name` (as stored: case kept), or `None` when the file has no such
    /// name or it cannot be read.
    pub fn sequence(&self, name: &[u8]) -> Option<Vec<u8>> {
        let e = self.index.get(name)?;
        if e.len == 0 {
            return Some(Vec::new());
        }
        self.fetch(name, 0, e.len as i64 - 1)
    }

    /// The bases `beg..=end` (0-based) of sequence `name`, clamped to the sequence as htslib
    /// clamps them (`faidx_fetch_seq64`); `None`, with htslib's message, when there is none.
    pub fn fetch(&self, name: &[u8], beg: i64, end: i64) -> Option<Vec<u8>> {
        let Some(e) = self.index.get(name) else {
            eprintln!(
                "[E::faidx_adjust_position] The sequence \"{}\" was not found",
                String::from_utf8_lossy(name)
            );
            return None;
        };
        let (beg, end) = whole::adjust_position(e.len, beg, end);
        match &self.bytes {
            Bytes::Whole(text) => Some(whole::fetch(text, e, beg, end)),
            Bytes::Seekable(_) if beg >= end => Some(Vec::new()),
            Bytes::Seekable(_) => self.retrieve(e, e.seq_offset, beg, end).ok(),
        }
    }

    /// `fai_retrieve`: `end - beg` bytes of the sequence (or quality) of `entry` that starts at
    /// `offset`, through the index's line layout; the error is htslib's line.
    pub fn retrieve(
        &self,
        entry: &Entry,
        offset: u64,
        beg: i64,
        end: i64,
    ) -> Result<Vec<u8>, FetchError> {
        match &self.bytes {
            Bytes::Whole(bytes) => {
                retrieve::retrieve(&mut InMemory { bytes, pos: 0 }, entry, offset, beg, end)
            }
            Bytes::Seekable(source) => {
                let mut source = source.lock().unwrap_or_else(|e| e.into_inner());
                retrieve::retrieve(&mut *source, entry, offset, beg, end)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn whole_and_seekable_files_answer_alike() {
        let dir = std::env::temp_dir().join(format!("mdsam-fasta-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("r.fa");
        std::fs::write(&path, b">a desc\nACGTACGTAC\nGTac\n>b\nNNNN\n").unwrap();
        let path = path.to_str().unwrap();
        let whole = Fasta::read_whole(path).unwrap();
        assert!(!std::path::Path::new(&format!("{path}.fai")).exists());
        let loaded = Fasta::load(path, None, None, Format::Fasta).unwrap();
        assert!(std::path::Path::new(&format!("{path}.fai")).exists());
        for fasta in [&whole, &loaded] {
            assert_eq!(fasta.sequence(b"a").unwrap(), b"ACGTACGTACGTac");
            assert_eq!(fasta.fetch(b"a", 8, 11).unwrap(), b"ACGT");
            assert_eq!(fasta.fetch(b"a", 12, 100).unwrap(), b"ac");
            assert_eq!(fasta.fetch(b"b", -5, 1).unwrap(), b"NN");
            assert!(fasta.fetch(b"c", 0, 1).is_none());
            assert!(fasta.has(b"b") && !fasta.has(b"c"));
            let e = fasta.index().get(b"a").unwrap();
            assert_eq!(fasta.retrieve(e, e.seq_offset, 9, 12).unwrap(), b"CGT");
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
}
