//! Where each spilling command puts its temporary files and what it calls them, as samtools
//! chooses for the same command, and their exclusive creation: a name that exists (a run of
//! another command sharing the `-T` prefix, a file or symlink the user keeps there) is skipped,
//! never overwritten or removed.

use std::path::{Path, PathBuf};

use crate::io::tempfiles::{self, TempFile};

/// How many names one file may try before giving up (samtools' `tmp_file` gives up at 100 000).
const MAX_TRIES: usize = 100_000;

/// Names temporary files `PREFIX.NNNN.bam`, skipping numbers whose file exists.
#[derive(Debug, Clone)]
pub struct TempNamer {
    prefix: String,
    next: usize,
}

impl TempNamer {
    /// `sort` (and `markdup-pipeline`, whose runs are sort's): `-T PREFIX` as given; without
    /// it beside the output, `OUT.tmp` (`OUT##idx##…` without the index part), or the current
    /// directory for standard output. A prefix naming a directory gets a file stem of its own
    /// there (`DIR/mdsam.PID.N.tmp`), as samtools' `DIR/samtools.PID.N.tmp`.
    pub fn for_sort(tmp_prefix: Option<&str>, output: &str) -> TempNamer {
        let prefix = match tmp_prefix {
            Some(p) => p.to_string(),
            None if output == "-" => ".".to_string(),
            None => format!("{}.tmp", output.split("##idx##").next().unwrap_or(output)),
        };
        if Path::new(&prefix).is_dir() {
            return TempNamer::with_prefix(format!("{}{}", with_slash(prefix), stem()));
        }
        TempNamer::with_prefix(prefix)
    }

    /// `markdup -S`: `-T PREFIX` (a directory gets a `/`), or `OUT.` beside the output, or the
    /// current directory for standard output; samtools always appends its stem there
    /// (`OUT.samtools.PID.N.tmp`).
    pub fn for_markdup(tmp_prefix: Option<&str>, output: &str) -> TempNamer {
        let mut prefix = match tmp_prefix {
            Some(p) => p.to_string(),
            None if output == "-" => ".".to_string(),
            None => format!("{output}."),
        };
        if Path::new(&prefix).is_dir() {
            prefix = with_slash(prefix);
        }
        TempNamer::with_prefix(prefix + &stem())
    }

    /// `collate`: the prefix as given (`-T` or the positional one, a directory or not, as
    /// samtools); without one `OUT.collateHEXPID` beside an `-o` file, else
    /// `$TMPDIR/collateHEXPID` (`/tmp` when `TMPDIR` is unset or empty).
    pub fn for_collate(prefix: Option<&str>, output: &str) -> TempNamer {
        let pid = std::process::id();
        let prefix = match prefix {
            Some(p) => p.to_string(),
            None if output != "-" => format!("{output}.collate{pid:x}"),
            None => {
                let dir = std::env::var("TMPDIR")
                    .ok()
                    .filter(|d| !d.is_empty())
                    .unwrap_or_else(|| "/tmp".to_string());
                format!("{dir}/collate{pid:x}")
            }
        };
        TempNamer::with_prefix(prefix)
    }

    /// Scratch files of mdsam's own that samtools does not make (fixmate's very long templates,
    /// a piped CRAM or SAM.gz copied for indexing): `$TMPDIR/mdsam.WHAT.PID.tmp` (`/tmp` when
    /// `TMPDIR` is unset or empty).
    pub fn in_tmpdir(what: &str) -> TempNamer {
        let dir = std::env::var("TMPDIR").ok().filter(|d| !d.is_empty());
        let dir = dir.unwrap_or_else(|| "/tmp".to_string());
        let prefix =
            format!("{}/mdsam.{what}.{}.tmp", dir.trim_end_matches('/'), std::process::id());
        TempNamer::with_prefix(prefix)
    }

    /// Names under `prefix` exactly.
    pub fn with_prefix(prefix: String) -> TempNamer {
        TempNamer { prefix, next: 0 }
    }

    /// The next free `PREFIX.NNNN.bam`, created (`O_EXCL`) and registered at once (see
    /// [`tempfiles::create_unique`]).
    pub fn create_next(&mut self) -> std::io::Result<(TempFile, std::fs::File)> {
        tempfiles::create_unique(|| self.next_path(), MAX_TRIES)
    }

    /// The name tried last, for messages.
    pub fn last_path(&self) -> String {
        self.name(self.next.saturating_sub(1))
    }

    fn next_path(&mut self) -> PathBuf {
        let path = PathBuf::from(self.name(self.next));
        self.next += 1;
        path
    }

    /// `PREFIX.NNNN.bam` for `n`.
    fn name(&self, n: usize) -> String {
        format!("{}.{:04}.bam", self.prefix, n)
    }
}

fn with_slash(mut dir: String) -> String {
    if !dir.ends_with('/') {
        dir.push('/');
    }
    dir
}

/// `mdsam.PID.N.tmp`: the process and a number from the clock, as samtools' stem, so that
/// processes of one PID on machines sharing a directory seldom meet (when they do, the exclusive
/// creation skips the taken names).
fn stem() -> String {
    let clock = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos() ^ d.as_secs() as u32);
    format!("mdsam.{}.{}.tmp", std::process::id(), clock % 10000)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("mdsam-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn default_prefixes_follow_samtools() {
        let pid = std::process::id();
        assert_eq!(TempNamer::for_sort(None, "d/out.bam").prefix, "d/out.bam.tmp");
        assert_eq!(TempNamer::for_sort(None, "o.bam##idx##o.csi").prefix, "o.bam.tmp");
        assert!(TempNamer::for_sort(None, "-").prefix.starts_with(&format!("./mdsam.{pid}.")));
        assert_eq!(TempNamer::for_sort(Some("x/pre"), "-").prefix, "x/pre");
        let md = TempNamer::for_markdup(None, "d/out.bam").prefix;
        assert!(md.starts_with(&format!("d/out.bam.mdsam.{pid}.")), "{md}");
        assert_eq!(TempNamer::for_collate(None, "o.bam").prefix, format!("o.bam.collate{pid:x}"));
        assert_eq!(TempNamer::for_collate(Some("/no/such/dir"), "-").prefix, "/no/such/dir");
    }

    /// Existing names are skipped and left as they were.
    #[test]
    fn existing_names_are_skipped() {
        let dir = scratch("temp-names-skip");
        let prefix = format!("{}/pre", dir.display());
        std::fs::write(format!("{prefix}.0000.bam"), b"mine").unwrap();
        let mut namer = TempNamer::for_sort(Some(&prefix), "-");
        let (t, _file) = namer.create_next().unwrap();
        assert!(t.path_str().ends_with("/pre.0001.bam"), "{}", t.path_str());
        drop(t);
        assert_eq!(std::fs::read(format!("{prefix}.0000.bam")).unwrap(), b"mine");
        assert!(!Path::new(&format!("{prefix}.0001.bam")).exists());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// A directory prefix gets a stem of its own inside it.
    #[test]
    fn directory_prefix_gets_a_stem() {
        let dir = scratch("temp-names-dir");
        let mut namer = TempNamer::for_sort(Some(dir.to_str().unwrap()), "-");
        let (t, _file) = namer.create_next().unwrap();
        assert_eq!(t.path().parent(), Some(dir.as_path()));
        let name = t.path().file_name().unwrap().to_string_lossy().into_owned();
        assert!(name.starts_with("mdsam.") && name.ends_with(".tmp.0000.bam"), "{name}");
        drop(t);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
