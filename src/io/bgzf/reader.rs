//! Parallel BGZF reading: find a run of whole blocks by scanning headers (no inflating), then
//! inflate the run's blocks in parallel straight into one contiguous buffer.
//!
//! Algorithm per [`Reader::read_piece`]:
//! 1. Peek block headers from the current offset until the run holds about `target` inflated
//!    bytes (the ISIZE trailer gives each block's size without inflating).
//! 2. Lay the blocks out in one output `Vec` after the caller's carry-over prefix.
//! 3. Inflate every block into its slot on the current rayon pool, checking CRC32 and ISIZE.
//! 4. If that fails, inflate the run again one block at a time at each block's real size: this
//!    reads blocks whose ISIZE trailer is wrong (htslib ignores ISIZE) and otherwise reports the
//!    first bad block.
//!
//! The same path serves memory-mapped files and pipes; only `peek` differs (see `io::input`).

use super::codec::Inflater;
use rayon::prelude::*;

use super::block::{self, BlockError};
use crate::io::input::Input;

/// Where a block's inflated bytes start in a piece.
#[derive(Clone, Copy, Debug)]
pub struct BlockSpan {
    /// Compressed offset of the block in the file.
    pub coffset: u64,
    /// Offset of its first inflated byte in the piece's data.
    pub data_start: usize,
}

/// A run of inflated blocks.
pub struct Piece {
    pub data: Vec<u8>,
    pub blocks: Vec<BlockSpan>,
}

/// A BGZF error with the compressed offset of the block it concerns.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    #[error("{source} at compressed offset {offset}")]
    Block { source: BlockError, offset: u64 },
    #[error(transparent)]
    Io(#[from] std::io::Error),
}

thread_local! {
    /// One inflater a thread, kept from piece to piece: ISA-L's state is tens of KB, cleared
    /// when made, and a fresh one for every split of every piece was most of a small region
    /// query's page faults.
    static INFLATER: std::cell::RefCell<Inflater> = std::cell::RefCell::new(Inflater::new());
}

/// A one-thread reader's piece inside an index chunk ([`Reader::piece_target`]): the lean
/// readers' (mpileup's and consensus' blocks) usual size.
const BOUNDED_PIECE: usize = 256 << 10;

pub struct Reader {
    input: Input,
    target: usize,
    /// Stop before this compressed offset (region queries).
    limit: Option<u64>,
    eof: bool,
    /// Whether the last block read was the 28-byte EOF marker (for [`Self::data_end`]).
    last_block_is_eof: bool,
    /// Whether reaching the input's end after a block other than the EOF marker still gets
    /// htslib's warning: once, and not after a BAM's header check gave its own.
    warn_missing_eof: bool,
}

/// htslib's warning when reading reaches the end of a BGZF input not ended by the EOF marker
/// block (`bgzf_read_block`): a bgzipped SAM or a BAM from a pipe cut short on a block boundary.
const MISSING_EOF: &str = "[W::bgzf_read_block] EOF marker is absent. The input may be truncated";

impl Reader {
    /// `target` is the inflated size of one piece; a few MiB per thread keeps every core busy.
    pub fn new(input: Input, target: usize) -> Self {
        Reader {
            input,
            target: target.max(1),
            limit: None,
            eof: false,
            last_block_is_eof: false,
            warn_missing_eof: true,
        }
    }

    /// Says that a missing EOF marker was reported already (a BAM's header check, as htslib's
    /// `bgzf_check_EOF`), or needs no report (gzip rather than BGZF): no second warning at the end.
    pub fn missing_eof_reported(&mut self) {
        self.warn_missing_eof = false;
    }

    pub fn input(&self) -> &Input {
        &self.input
    }

    /// Whether the file ends with the 28-byte EOF block (mapped and remote files; streams say
    /// `true`, and so does a remote file whose tail could not be fetched: reading tells why).
    pub fn has_eof_marker(&self) -> bool {
        self.input.ends_with(&block::EOF_BLOCK).is_none_or(|ends| ends.unwrap_or(true))
    }

    /// Once everything was read: the compressed offset after the last data block, i.e. the input's
    /// size less a trailing EOF marker block (what htslib's `bgzf_tell` gives after the last
    /// record). Known without seeking, so a pipe can be indexed as it streams by.
    pub fn data_end(&self) -> u64 {
        let marker = if self.last_block_is_eof { block::EOF_BLOCK.len() as u64 } else { 0 };
        self.input.position() - marker
    }

    /// Continues at compressed offset `coffset`, reading no block that starts at or after `limit`.
    pub fn seek(&mut self, coffset: u64, limit: Option<u64>) -> std::io::Result<()> {
        // The block that starts last before `limit` may end up to a block's size after it.
        let until = limit.map(|l| l.saturating_add(block::BLOCK_MAX as u64));
        self.input.seek_until(coffset, until)?;
        self.limit = limit;
        self.eof = false;
        Ok(())
    }

    /// Whether reading stopped at the limit of a bounded seek (an index chunk), not at the end
    /// of the input.
    pub fn stopped_at_limit(&self) -> bool {
        self.eof && self.limit.is_some_and(|l| self.input.position() >= l)
    }

    /// Says where the next seeks will go, as `(coffset, limit)` pairs of [`Self::seek`]: a
    /// remote input fetches their bytes at once.
    pub fn plan(&mut self, seeks: &[(u64, u64)]) {
        // A local file needs no notice: no ranges to build on every query (bedcov's lines).
        if !self.input.is_remote() {
            return;
        }
        let ranges: Vec<(u64, u64)> = seeks
            .iter()
            .map(|&(coffset, limit)| (coffset, limit.saturating_add(block::BLOCK_MAX as u64)))
            .collect();
        self.input.plan(&ranges);
    }

    /// The inflated size of the next piece. Inside an index chunk (a region query) a reader of
    /// one thread's piece inflates [`BOUNDED_PIECE`]: a deep 10 kb query inflates about 12 MB,
    /// and the usual MiB was a fresh MiB of pages to fault in for a process that runs 15 ms (a
    /// third of its page faults). With more threads the pieces stay whole: a quarter of them
    /// made `view -c -@ 2` of a whole reference (6 M reads) 1.22-1.26 s -> 1.65-1.76 s.
    fn piece_target(&self) -> usize {
        if self.limit.is_some() && self.target <= crate::io::open::PIECE_BYTES_PER_THREAD {
            return self.target.min(BOUNDED_PIECE);
        }
        self.target
    }

    /// [`Self::read_piece`] of about `target` inflated bytes (at least one block) this once.
    pub fn read_piece_of(
        &mut self,
        prefix: Vec<u8>,
        target: usize,
    ) -> Result<Option<Piece>, ReadError> {
        let usual = std::mem::replace(&mut self.target, target.max(1));
        let piece = self.read_piece(prefix);
        self.target = usual;
        piece
    }

    /// Inflates the next run of blocks after `prefix`. At end of input it gives the prefix back
    /// as a piece without blocks, or `None` when the prefix is empty too.
    pub fn read_piece(&mut self, prefix: Vec<u8>) -> Result<Option<Piece>, ReadError> {
        let at_end = |prefix: Vec<u8>| {
            (!prefix.is_empty()).then(|| Piece { data: prefix, blocks: Vec::new() })
        };
        if self.eof {
            return Ok(at_end(prefix));
        }
        let start_offset = self.input.position();
        let mut spans = Vec::new(); // (offset in run, size, isize)
        let mut run_len = 0usize;
        let mut inflated = 0usize;
        let target = self.piece_target();
        while inflated < target {
            if self.limit.is_some_and(|l| start_offset + run_len as u64 >= l) {
                break;
            }
            let head = self.input.peek(run_len + 18)?;
            if head.len() == run_len {
                if !self.last_block_is_eof && std::mem::take(&mut self.warn_missing_eof) {
                    eprintln!("{MISSING_EOF}");
                }
                break;
            }
            let offset = start_offset + run_len as u64;
            let size = block::block_size(&head[run_len..])
                .map_err(|source| ReadError::Block { source, offset })?;
            let whole = self.input.peek(run_len + size)?;
            if whole.len() < run_len + size {
                return Err(ReadError::Block { source: BlockError::Truncated, offset });
            }
            // Only a layout guess when ISIZE is wrong: see step 4.
            let isize = block::inflated_size(&whole[run_len..run_len + size]).min(block::BLOCK_MAX);
            self.last_block_is_eof = whole[run_len..run_len + size] == block::EOF_BLOCK[..];
            spans.push((run_len, size, isize));
            run_len += size;
            inflated += isize;
        }
        if spans.is_empty() {
            self.eof = true;
            return Ok(at_end(prefix));
        }
        let run = self.input.peek(run_len)?;
        let base = prefix.len();
        let mut data = crate::io::recycle::take_for_overwrite(base + inflated);
        data[..base].copy_from_slice(&prefix);
        crate::io::recycle::give(prefix);
        let mut blocks = Vec::with_capacity(spans.len());
        let mut slots = Vec::with_capacity(spans.len());
        let mut rest = &mut data[base..];
        let mut at = base;
        for &(off, size, isize) in &spans {
            let (slot, tail) = rest.split_at_mut(isize);
            rest = tail;
            slots.push((&run[off..off + size], slot, start_offset + off as u64));
            blocks.push(BlockSpan { coffset: start_offset + off as u64, data_start: at });
            at += isize;
        }
        let parallel = slots.into_par_iter().with_min_len(4).try_for_each(|(blk, out, _)| {
            INFLATER.with_borrow_mut(|d| block::inflate(blk, out, d))
        });
        if parallel.is_err() {
            data.truncate(base);
            blocks = inflate_in_order(run, &spans, start_offset, &mut data)?;
        }
        self.input.consume(run_len);
        Ok(Some(Piece { data, blocks }))
    }
}

/// Step 4: inflates the `(offset in run, size, ISIZE)` blocks of `run` one at a time, appending
/// each at its real inflated size to `data`; the error names the first bad block.
fn inflate_in_order(
    run: &[u8],
    spans: &[(usize, usize, usize)],
    start_offset: u64,
    data: &mut Vec<u8>,
) -> Result<Vec<BlockSpan>, ReadError> {
    let mut d = Inflater::new();
    let mut scratch = vec![0; block::BLOCK_MAX];
    let mut blocks = Vec::with_capacity(spans.len());
    for &(off, size, _) in spans {
        let offset = start_offset + off as u64;
        let got = block::inflate_unsized(&run[off..off + size], &mut scratch, &mut d)
            .map_err(|source| ReadError::Block { source, offset })?;
        blocks.push(BlockSpan { coffset: offset, data_start: data.len() });
        data.extend_from_slice(&scratch[..got]);
    }
    Ok(blocks)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::io::bgzf::block::Deflater;

    fn bgzf_of(chunks: &[&[u8]]) -> Vec<u8> {
        let mut out = Vec::new();
        let mut d = Deflater::new(1);
        for c in chunks {
            d.deflate_into(c, &mut out);
        }
        out.extend_from_slice(&block::EOF_BLOCK);
        out
    }

    #[test]
    fn reads_pieces_with_prefix() {
        let file = bgzf_of(&[b"hello ", b"bgzf ", b"world"]);
        let input = Input::from_reader("t", Box::new(std::io::Cursor::new(file)));
        let mut r = Reader::new(input, 8);
        let p = r.read_piece(b">".to_vec()).unwrap().unwrap();
        assert_eq!(p.data, b">hello bgzf ");
        assert_eq!(p.blocks.len(), 2);
        assert_eq!(p.blocks[1].data_start, 7);
        let p = r.read_piece(Vec::new()).unwrap().unwrap();
        assert_eq!(p.data, b"world");
        assert!(r.read_piece(Vec::new()).unwrap().is_none());
    }

    /// A wrong ISIZE trailer does not stop reading (htslib ignores it); a bad CRC still does.
    #[test]
    fn wrong_isize_is_read_at_the_real_size() {
        let file = bgzf_of(&[b"hello ", b"bgzf ", b"world"]);
        // The second block starts after the first (18 + deflate + 8 bytes).
        let second = block::block_size(&file).unwrap();
        let isize_at = second + block::block_size(&file[second..]).unwrap() - 4;
        let mut lying = file.clone();
        lying[isize_at] += 2;
        let input = Input::from_reader("t", Box::new(std::io::Cursor::new(lying.clone())));
        let p = Reader::new(input, 1 << 20).read_piece(b">".to_vec()).unwrap().unwrap();
        assert_eq!(p.data, b">hello bgzf world");
        assert_eq!(p.blocks[2].data_start, 12);
        lying[isize_at - 4] ^= 1;
        let input = Input::from_reader("t", Box::new(std::io::Cursor::new(lying)));
        let err = Reader::new(input, 1 << 20).read_piece(Vec::new()).err().unwrap();
        assert!(err.to_string().contains("CRC32"), "{err}");
    }

    #[test]
    fn truncated_file_is_an_error() {
        let file = bgzf_of(&[b"hello world"]);
        let cut = file[..20].to_vec();
        let input = Input::from_reader("t", Box::new(std::io::Cursor::new(cut)));
        let err = Reader::new(input, 1 << 20).read_piece(Vec::new()).err().unwrap();
        assert!(err.to_string().contains("truncated"), "{err}");
    }
}
