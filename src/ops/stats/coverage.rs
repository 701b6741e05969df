//! The coverage distribution (samtools' round buffer): depth per reference position of the
//! bases the reads cover, counted into [`CoverageBins`] once the reads have moved past it.
//! The index arithmetic is samtools', so the distribution is too, including what its buffer
//! growth keeps (it copies bytes where it means depths).

use super::CoverageBins;

pub struct Coverage {
    /// Reference position of the buffer's slot `start`.
    pos: i64,
    start: i64,
    buffer: Vec<i32>,
    pub bins: CoverageBins,
    /// Positions per depth bin.
    pub histogram: Vec<u64>,
}

impl Coverage {
    pub fn new(bins: CoverageBins, cycles: usize) -> Coverage {
        Coverage {
            pos: 0,
            start: 0,
            buffer: vec![0; cycles * 5],
            bins,
            histogram: vec![0; bins.count as usize],
        }
    }

    fn size(&self) -> i64 {
        self.buffer.len() as i64
    }

    /// samtools' `round_buffer_lidx2ridx`.
    fn slot(&self, pos: i64) -> i64 {
        (self.start + (pos - self.pos) % self.size()) % self.size()
    }

    fn count_slot(&mut self, i: usize) {
        let depth = self.buffer[i];
        if depth != 0 {
            self.histogram[self.bins.index(depth)] += 1;
            self.buffer[i] = 0;
        }
    }

    /// samtools' `round_buffer_flush`: counts the positions before `pos` (all with `None`).
    pub fn flush(&mut self, pos: Option<i64>) -> Result<(), String> {
        let new_pos = pos.unwrap_or(-1);
        if new_pos == self.pos {
            return Ok(());
        }
        let mut pos = new_pos;
        if new_pos == -1 || new_pos - self.pos >= self.size() {
            pos = self.pos + self.size() - 1;
        }
        if pos < self.pos {
            return Err(format!(
                "Expected coordinates in ascending order, got {pos} after {}",
                self.pos
            ));
        }
        let mut from = self.start;
        let to = self.slot(pos - 1);
        if from > to {
            for i in from..self.size() {
                self.count_slot(i as usize);
            }
            from = 0;
        }
        for i in from..=to {
            self.count_slot(i as usize);
        }
        self.start = if new_pos == -1 { 0 } else { self.slot(pos) };
        self.pos = new_pos;
        Ok(())
    }

    /// samtools' `round_buffer_insert_read`: one more read over `[from, to)`.
    pub fn insert(&mut self, from: i64, to: i64) -> Result<(), String> {
        if to - from > self.size() {
            return Err(format!(
                "The read length too big ({}), please increase the buffer length (currently {})",
                to - from,
                self.size()
            ));
        }
        if from < self.pos {
            return Err(format!("The reads are not sorted ({from} comes after {}).", self.pos));
        }
        let mut first = self.slot(from);
        let end = self.slot(to);
        if first > end {
            for i in first..self.size() {
                self.buffer[i as usize] += 1;
            }
            first = 0;
        }
        for i in first..end {
            self.buffer[i as usize] += 1;
        }
        Ok(())
    }

    /// samtools' buffer growth in `realloc_buffers` for a read of `read_len`: a new buffer of
    /// `5 * read_len` depths that receives the old one's bytes from `start` on, as many bytes as
    /// the old one had depths there, then `start` bytes from its beginning at depth `size - start`.
    pub fn grow(&mut self, read_len: usize) {
        let old: Vec<u8> = self.buffer.iter().flat_map(|d| d.to_le_bytes()).collect();
        let mut new = vec![0u8; read_len * 5 * 4];
        let n = (self.size() - self.start) as usize;
        let start = self.start as usize;
        new[..n].copy_from_slice(&old[start * 4..start * 4 + n]);
        if start > 1 {
            new[n * 4..n * 4 + start].copy_from_slice(&old[..start]);
        }
        self.buffer =
            new.chunks_exact(4).map(|b| i32::from_le_bytes([b[0], b[1], b[2], b[3]])).collect();
        self.start = 0;
    }
}
