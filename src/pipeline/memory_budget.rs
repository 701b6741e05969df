//! A command's memory budget, its default decided here for every command that has one:
//! samtools' rule for `sort` and `collate` (`-m` for each sorting thread), the machine's for
//! `markdup-pipeline` ([`super::memory_limit`]). How a budget is then shared out (records,
//! reader pieces, spilling) is [`super::sort`]'s.

use super::memory_limit;
use super::threads::Threads;

/// samtools sort's `-m` default, also collate's budget for each thread: 768 MiB.
pub const PER_THREAD_DEFAULT: u64 = 768 << 20;

/// The bytes a command may hold before it spills to temporary files (`None`: no limit known).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MemoryBudget(Option<u64>);

impl MemoryBudget {
    /// `sort` and `collate`: `--max-memory` when given, else `per_thread` for each sorting thread;
    /// samtools counts `-@`'s extra threads, at least one.
    pub fn per_sorting_thread(max_memory: Option<u64>, per_thread: u64, threads: Threads) -> Self {
        let threads = threads.extra().max(1) as u64;
        MemoryBudget(Some(max_memory.unwrap_or_else(|| per_thread.saturating_mul(threads))))
    }

    /// `markdup-pipeline`: `--max-memory` when given, else what this process may really use
    /// (a share of the cgroup's limit or of the available memory), so a cluster job is not
    /// killed where samtools' pipe of four commands would finish.
    pub fn of_machine(max_memory: Option<u64>) -> Self {
        MemoryBudget(max_memory.or_else(|| memory_limit::System::real().default_budget()))
    }

    /// The budget in bytes; `None`: no limit.
    pub fn bytes(self) -> Option<u64> {
        self.0
    }

    /// The budget in bytes, no limit being the largest.
    pub fn limit(self) -> u64 {
        self.0.unwrap_or(u64::MAX)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sorting_threads_are_the_extra_ones_at_least_one() {
        let budget = |given, extra| {
            MemoryBudget::per_sorting_thread(given, 10, Threads::from_extra(extra)).limit()
        };
        assert_eq!(budget(None, 0), 10);
        assert_eq!(budget(None, 1), 10);
        assert_eq!(budget(None, 4), 40);
        assert_eq!(budget(Some(7), 4), 7);
        assert_eq!(MemoryBudget::of_machine(Some(5)).bytes(), Some(5));
    }
}
