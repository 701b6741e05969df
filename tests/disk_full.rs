//! Writing to a full filesystem: a clear one-line error, exit 1, and nothing left behind.
//! The test mounts a 1 MiB tmpfs, so it needs root; elsewhere it says so and skips.

use std::process::Command;

use mdsam::simulate::SimulateOptions;

use crate::support::{mdsam_bin, scratch_dir, simulated_sam};

struct Mount(std::path::PathBuf);

impl Drop for Mount {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.0).status();
    }
}

fn small_filesystem(dir: &std::path::Path) -> Option<Mount> {
    std::fs::create_dir_all(dir).ok()?;
    let ok = Command::new("mount")
        .args(["-t", "tmpfs", "-o", "size=1m", "tmpfs"])
        .arg(dir)
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        eprintln!("skipping: cannot mount a small tmpfs here (needs root)");
        return None;
    }
    Some(Mount(dir.to_path_buf()))
}

#[test]
fn full_disk_gives_a_clear_error_and_leaves_nothing() {
    let dir = scratch_dir("disk_full");
    let input = simulated_sam(&dir, &SimulateOptions { pairs: 20000, ..Default::default() });
    let target = dir.join("small");
    let Some(_mount) = small_filesystem(&target) else { return };
    for (args, name) in [
        (vec!["view", "-h"], "out.sam"),
        (vec!["view", "-u"], "out.bam"),
        (vec!["sort", "-u"], "sorted.bam"),
    ] {
        let out_path = target.join(name);
        let out = Command::new(mdsam_bin())
            .args(&args)
            .arg("-o")
            .arg(&out_path)
            .arg(&input)
            .output()
            .expect("mdsam runs");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {stderr}");
        assert!(!stderr.contains("panicked"), "{stderr}");
        let lines: Vec<&str> = stderr.lines().filter(|l| !l.starts_with("[W::")).collect();
        assert_eq!(lines.len(), 1, "{args:?}: one line expected: {stderr}");
        assert!(lines[0].contains("No space left on device"), "{args:?}: {stderr}");
        assert!(lines[0].contains(name), "{args:?}: the message names the file: {stderr}");
        let left: Vec<_> = std::fs::read_dir(&target).unwrap().collect();
        assert!(left.is_empty(), "{args:?}: files left behind: {left:?}");
    }
}
