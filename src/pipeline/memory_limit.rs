//! The memory this process may really use, for budgets that must hold inside a cluster job: the
//! cgroup limit (v2 `memory.max`, v1 `memory.limit_in_bytes`, as SLURM and Kubernetes set
//! them), else the machine's available memory.
//!
//! The cgroup is found from `/proc/self/cgroup`; its limit is the smallest one set on it or on
//! any of its parents (SLURM limits the job and puts each step in a child). Inside a container
//! the cgroup file system is often mounted at the process's own cgroup, so the path named in
//! `/proc/self/cgroup` may not exist under the mount: the mount's root counts too.

use std::path::{Path, PathBuf};

/// Of a cgroup limit, the share a memory-driven command budgets for its data: the rest is for
/// the page cache of its input and output (charged to the cgroup too), read-ahead and the
/// allocator's slack.
pub const CGROUP_SHARE: (u64, u64) = (3, 4);
/// Of the machine's available memory (no cgroup limit): other jobs share the machine.
pub const AVAILABLE_SHARE: (u64, u64) = (1, 2);

/// v1's "no limit" is a page-aligned `i64::MAX`; anything above this is no limit.
const V1_UNLIMITED: u64 = 1 << 62;

/// Where the facts are read: `/` on a real system, a fixture directory in tests.
pub struct System {
    root: PathBuf,
}

impl System {
    pub fn real() -> System {
        System { root: PathBuf::from("/") }
    }

    /// Facts read under `root` (`root/proc/self/cgroup`, `root/sys/fs/cgroup/...`,
    /// `root/proc/meminfo`).
    pub fn at(root: &Path) -> System {
        System { root: root.to_path_buf() }
    }

    fn read(&self, path: &str) -> Option<String> {
        std::fs::read_to_string(self.root.join(path.trim_start_matches('/'))).ok()
    }

    /// The smallest memory limit of this process's cgroup and its parents, in bytes.
    pub fn cgroup_limit(&self) -> Option<u64> {
        let cgroups = self.read("proc/self/cgroup")?;
        let mut limit: Option<u64> = None;
        let mut tighten = |v: Option<u64>| {
            if let Some(v) = v {
                limit = Some(limit.map_or(v, |l| l.min(v)));
            }
        };
        for line in cgroups.lines() {
            // "ID:CONTROLLERS:PATH"; v2 is "0::PATH".
            let mut parts = line.splitn(3, ':');
            let (Some(id), Some(controllers), Some(path)) =
                (parts.next(), parts.next(), parts.next())
            else {
                continue;
            };
            if id == "0" && controllers.is_empty() {
                tighten(self.walk("sys/fs/cgroup", path, "memory.max"));
                // Hybrid systems mount v2 under unified/.
                tighten(self.walk("sys/fs/cgroup/unified", path, "memory.max"));
            } else if controllers.split(',').any(|c| c == "memory") {
                tighten(self.walk("sys/fs/cgroup/memory", path, "memory.limit_in_bytes"));
            }
        }
        limit
    }

    /// The smallest limit in `file` of `mount/path` and of each of its parents up to the mount.
    fn walk(&self, mount: &str, path: &str, file: &str) -> Option<u64> {
        let mut best: Option<u64> = None;
        let mut at = path.trim_matches('/').to_string();
        loop {
            let f = if at.is_empty() {
                format!("{mount}/{file}")
            } else {
                format!("{mount}/{at}/{file}")
            };
            if let Some(v) = self.read(&f).and_then(|t| parse_limit(&t)) {
                best = Some(best.map_or(v, |b| b.min(v)));
            }
            if at.is_empty() {
                return best;
            }
            at = match at.rfind('/') {
                Some(i) => at[..i].to_string(),
                None => String::new(),
            };
        }
    }

    /// `MemAvailable` of `/proc/meminfo`, in bytes.
    pub fn available(&self) -> Option<u64> {
        let info = self.read("proc/meminfo")?;
        let line = info.lines().find(|l| l.starts_with("MemAvailable:"))?;
        let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
        Some(kb * 1024)
    }

    /// The default data budget: [`CGROUP_SHARE`] of the cgroup limit and [`AVAILABLE_SHARE`] of
    /// the available memory, the smaller of the two that are known; `None` when neither is.
    pub fn default_budget(&self) -> Option<u64> {
        let share = |v: u64, (n, d): (u64, u64)| v / d * n;
        let from_cgroup = self.cgroup_limit().map(|v| share(v, CGROUP_SHARE));
        let from_machine = self.available().map(|v| share(v, AVAILABLE_SHARE));
        match (from_cgroup, from_machine) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }
}

/// A limit file's value: a number of bytes, `max` (v2: none) or v1's huge "none".
fn parse_limit(text: &str) -> Option<u64> {
    let v: u64 = text.trim().parse().ok()?;
    (v < V1_UNLIMITED).then_some(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A fixture system: `files` as (path under the root, contents).
    fn fixture(name: &str, files: &[(&str, &str)]) -> (PathBuf, System) {
        let root = std::env::temp_dir().join(format!("mdsam-cgroup-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        std::fs::create_dir_all(&root).unwrap();
        for (path, text) in files {
            let p = root.join(path);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, text).unwrap();
        }
        let sys = System::at(&root);
        (root, sys)
    }

    const MEMINFO: &str = "MemTotal:       24000000 kB\nMemAvailable:   16000000 kB\n";

    #[test]
    fn v2_limit_of_a_slurm_step_is_the_jobs() {
        let (root, sys) = fixture(
            "v2",
            &[
                (
                    "proc/self/cgroup",
                    "0::/system.slice/slurmstepd.scope/job_42/step_0/user/task_0\n",
                ),
                ("sys/fs/cgroup/system.slice/slurmstepd.scope/job_42/memory.max", "8589934592\n"),
                ("sys/fs/cgroup/system.slice/slurmstepd.scope/job_42/step_0/memory.max", "max\n"),
                ("sys/fs/cgroup/memory.max", "max\n"),
                ("proc/meminfo", MEMINFO),
            ],
        );
        assert_eq!(sys.cgroup_limit(), Some(8 << 30));
        assert_eq!(sys.default_budget(), Some(6 << 30));
        std::fs::remove_dir_all(root).unwrap();
    }

    #[test]
    fn v1_limit_and_its_unlimited_value() {
        let (root, sys) = fixture(
            "v1",
            &[
                ("proc/self/cgroup", "9:pids:/\n4:memory:/kubepods/burstable/pod1/ctr\n0::/\n"),
                (
                    "sys/fs/cgroup/memory/kubepods/burstable/pod1/memory.limit_in_bytes",
                    "4294967296",
                ),
                ("sys/fs/cgroup/memory/memory.limit_in_bytes", "9223372036854771712\n"),
                ("proc/meminfo", MEMINFO),
            ],
        );
        assert_eq!(sys.cgroup_limit(), Some(4 << 30));
        assert_eq!(sys.default_budget(), Some(3 << 30));
        std::fs::remove_dir_all(root).unwrap();
    }

    #[test]
    fn a_container_sees_its_own_cgroup_at_the_mount_root() {
        // The path in /proc/self/cgroup does not exist under the container's mount.
        let (root, sys) = fixture(
            "container",
            &[
                ("proc/self/cgroup", "0::/kubepods.slice/pod7.slice/cri-abc.scope\n"),
                ("sys/fs/cgroup/memory.max", "2147483648\n"),
                ("proc/meminfo", MEMINFO),
            ],
        );
        assert_eq!(sys.cgroup_limit(), Some(2 << 30));
        std::fs::remove_dir_all(root).unwrap();
    }

    #[test]
    fn without_a_limit_half_the_available_memory() {
        let (root, sys) = fixture(
            "none",
            &[
                ("proc/self/cgroup", "0::/user.slice\n"),
                ("sys/fs/cgroup/user.slice/memory.max", "max\n"),
                ("sys/fs/cgroup/memory.max", "max\n"),
                ("proc/meminfo", MEMINFO),
            ],
        );
        assert_eq!(sys.cgroup_limit(), None);
        assert_eq!(sys.default_budget(), Some(8_000_000 * 1024));
        std::fs::remove_dir_all(root).unwrap();
    }

    #[test]
    fn a_limit_above_the_available_memory_gives_way_to_it() {
        let (root, sys) = fixture(
            "loose",
            &[
                ("proc/self/cgroup", "0::/job\n"),
                ("sys/fs/cgroup/job/memory.max", "68719476736\n"),
                ("proc/meminfo", MEMINFO),
            ],
        );
        assert_eq!(sys.default_budget(), Some(8_000_000 * 1024));
        let (root2, nothing) = fixture("nothing", &[]);
        assert_eq!(nothing.default_budget(), None);
        std::fs::remove_dir_all(root).unwrap();
        std::fs::remove_dir_all(root2).unwrap();
    }
}
