//! The k-way merge of sorted runs: a binary heap of run numbers ordered by a caller's
//! comparison of the runs' current records, ties going to the lower run number. Runs hold
//! consecutive stretches of the input in input order, so a merge that prefers the earlier run on
//! equal keys, and takes each run in order, is stable: ties come out in input order.

use std::cmp::Ordering;

/// A min-heap of run numbers.
#[derive(Debug, Default)]
pub struct RunHeap {
    heap: Vec<usize>,
}

impl RunHeap {
    /// A heap of the runs `live` (those with a current record).
    pub fn new(live: impl Iterator<Item = usize>, cmp: &impl Fn(usize, usize) -> Ordering) -> Self {
        let mut h = RunHeap { heap: live.collect() };
        for i in (0..h.heap.len() / 2).rev() {
            h.sift_down(i, cmp);
        }
        h
    }

    fn less(a: usize, b: usize, cmp: &impl Fn(usize, usize) -> Ordering) -> bool {
        cmp(a, b).then(a.cmp(&b)) == Ordering::Less
    }

    fn sift_down(&mut self, mut i: usize, cmp: &impl Fn(usize, usize) -> Ordering) {
        let n = self.heap.len();
        loop {
            let l = 2 * i + 1;
            if l >= n {
                return;
            }
            let r = l + 1;
            let mut m = l;
            if r < n && Self::less(self.heap[r], self.heap[l], cmp) {
                m = r;
            }
            if Self::less(self.heap[m], self.heap[i], cmp) {
                self.heap.swap(m, i);
                i = m;
            } else {
                return;
            }
        }
    }

    /// The run whose current record comes next.
    pub fn top(&self) -> Option<usize> {
        self.heap.first().copied()
    }

    /// After the top run moved to its next record (`alive`) or ran out (`!alive`).
    pub fn advanced(&mut self, alive: bool, cmp: &impl Fn(usize, usize) -> Ordering) {
        if self.heap.is_empty() {
            return;
        }
        if !alive {
            let last = self.heap.len() - 1;
            self.heap.swap(0, last);
            self.heap.pop();
        }
        self.sift_down(0, cmp);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::RefCell;

    /// Merges runs of (key, label) with the heap, as the spilling sort drives it.
    fn merge(runs: Vec<Vec<(u32, &'static str)>>) -> Vec<(u32, &'static str)> {
        let pos = RefCell::new(vec![0usize; runs.len()]);
        let cmp = |a: usize, b: usize| {
            let p = pos.borrow();
            runs[a][p[a]].0.cmp(&runs[b][p[b]].0)
        };
        let mut heap = RunHeap::new((0..runs.len()).filter(|&r| !runs[r].is_empty()), &cmp);
        let mut out = Vec::new();
        while let Some(r) = heap.top() {
            let at = pos.borrow()[r];
            out.push(runs[r][at]);
            pos.borrow_mut()[r] += 1;
            heap.advanced(at + 1 < runs[r].len(), &cmp);
        }
        out
    }

    #[test]
    fn ties_come_out_in_run_order_then_run_position() {
        let runs = vec![
            vec![(1, "a0"), (2, "a1"), (2, "a2"), (5, "a3")],
            vec![],
            vec![(0, "c0"), (2, "c1"), (2, "c2")],
            vec![(2, "d0"), (5, "d1"), (9, "d2")],
            vec![(1, "b0"), (2, "b1")],
        ];
        let labels: Vec<&str> = merge(runs).into_iter().map(|x| x.1).collect();
        assert_eq!(
            labels,
            ["c0", "a0", "b0", "a1", "a2", "c1", "c2", "d0", "b1", "a3", "d1", "d2"]
        );
    }

    #[test]
    fn merge_equals_stable_sort_of_the_concatenation() {
        // Pseudo-random runs with many equal keys: the merge must equal a stable sort of the
        // runs concatenated in order.
        let mut x: u32 = 12345;
        let mut runs = Vec::new();
        for _ in 0..7 {
            let mut run: Vec<(u32, &'static str)> = (0..50)
                .map(|_| {
                    x = x.wrapping_mul(1_103_515_245).wrapping_add(12345);
                    (x >> 16 & 7, "")
                })
                .collect();
            run.sort_by_key(|e| e.0);
            runs.push(run);
        }
        // Label each element with its global input position to check stability.
        let labels: Vec<&'static str> =
            (0..350).map(|i| &*Box::leak(i.to_string().into_boxed_str())).collect();
        let mut at = 0;
        for run in &mut runs {
            for e in run.iter_mut() {
                e.1 = labels[at];
                at += 1;
            }
        }
        let mut expect: Vec<(u32, &'static str)> = runs.iter().flatten().copied().collect();
        expect.sort_by_key(|e| e.0);
        assert_eq!(merge(runs), expect);
    }
}
