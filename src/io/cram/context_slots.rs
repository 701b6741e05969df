//! The order-1 rANS decoders' lookup table ([`super::rans4x8_decode`], [`super::rans_nx16`]):
//! 256 contexts of up to 4096 slots. Each thread keeps one, zeroed once; after a block only the
//! rows it wrote are zeroed again. A fresh 4 MB table per block (zeroed by the allocator, then
//! faulted in) was most of the time of `idxstats` on a samtools CRAM 3.0.

use std::cell::RefCell;

pub const SLOTS: usize = 256 << 12;

/// Boxed as one fixed-size array, so that masked indices need no bounds check.
pub type ContextSlots = [u32; SLOTS];

pub struct Table {
    slots: Box<ContextSlots>,
    /// Rows written since the table was last all zero: (start, length).
    written: Vec<(usize, usize)>,
}

impl Table {
    fn new() -> Table {
        let slots = vec![0u32; SLOTS].into_boxed_slice().try_into().unwrap_or_else(|_| {
            unreachable!("a boxed slice of SLOTS elements converts to [u32; SLOTS]")
        });
        Table { slots, written: Vec::new() }
    }

    /// The `len` slots from `start`, to be written (they are zero now).
    pub fn row(&mut self, start: usize, len: usize) -> &mut [u32] {
        self.written.push((start, len));
        &mut self.slots[start..start + len]
    }

    pub fn slots(&self) -> &ContextSlots {
        &self.slots
    }

    fn clear(&mut self) {
        for (start, len) in self.written.drain(..) {
            self.slots[start..start + len].fill(0);
        }
    }
}

thread_local! {
    static TABLE: RefCell<Option<Table>> = const { RefCell::new(None) };
}

/// Runs `f` with an all-zero table: the thread's own, or a fresh one if that is in use.
pub fn with_table<R>(f: impl FnOnce(&mut Table) -> R) -> R {
    TABLE.with(|cell| match cell.try_borrow_mut() {
        Ok(mut kept) => {
            let table = kept.get_or_insert_with(Table::new);
            let result = f(table);
            table.clear();
            result
        }
        Err(_) => f(&mut Table::new()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_written_are_zero_again_for_the_next_block() {
        with_table(|t| t.row(4096, 10).fill(7));
        with_table(|t| {
            assert!(t.slots()[4096..4106].iter().all(|&s| s == 0));
            // Nested use gets its own table.
            with_table(|inner| inner.row(0, 1)[0] = 1);
        });
        with_table(|t| assert_eq!(t.slots()[0], 0));
    }
}
