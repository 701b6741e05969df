//! `record`: runs the markdup chain three ways with `--profile` (and seed 000's single
//! commands), so `report` has real profiles to project. Runs the mdsam binary it is part of.
//!
//! Files in DIR: `files-<cmd>.json` (collate, fixmate -m, sort, markdup through compressed
//! intermediate files), `pipe-<cmd>.json` (the same with `-u`, as they run in a pipe),
//! `fused.json` (`markdup-pipeline`), `view.json` (SAM → BAM: the input converted to SAM first), `sort-n.json` (`sort -n`), each
//! with the host's calibration filled in unless `--no-calibrate`.

use std::path::Path;
use std::process::Command;

use crate::calibrate::Calibration;
use crate::error::Error;

/// Runs `mdsam args… --profile profile`; an error names the command and its message.
pub fn run_profiled(mdsam: &Path, args: &[&str], profile: &str) -> Result<(), Error> {
    let out = Command::new(mdsam)
        .args(args)
        .args(["--profile", profile])
        .output()
        .map_err(|e| Error::file(mdsam.display().to_string(), e))?;
    if !out.status.success() {
        return Err(Error::Message(format!(
            "mdsam {} failed: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        )));
    }
    if !Path::new(profile).is_file() {
        return Err(Error::file(
            profile,
            "no profile written (does this mdsam support --profile?)",
        ));
    }
    Ok(())
}

/// Writes `cal` into the profile at `path` (temporary file, then rename).
pub fn insert_calibration(path: &str, cal: &Calibration) -> Result<(), Error> {
    let text = std::fs::read_to_string(path).map_err(|e| Error::file(path, e))?;
    crate::profile::Profile::parse(&text, path)?;
    let mut v: serde_json::Value = serde_json::from_str(&text).map_err(|e| Error::file(path, e))?;
    let cal = serde_json::to_value(cal).map_err(|e| Error::Message(e.to_string()))?;
    match v.get_mut("run").and_then(|r| r.as_object_mut()) {
        Some(run) => {
            run.insert("calibration".into(), cal);
        }
        None => return Err(Error::file(path, "profile has no run header")),
    }
    let tmp = format!("{path}.tmp.{}", std::process::id());
    let body = serde_json::to_string_pretty(&v).map_err(|e| Error::Message(e.to_string()))?;
    std::fs::write(&tmp, body + "\n").map_err(|e| Error::file(&tmp, e))?;
    std::fs::rename(&tmp, path).map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        Error::file(path, e)
    })
}

/// Records every profile `report` needs from `input` into `dir` with `-@ threads`.
pub fn record(
    mdsam: &Path,
    input: &str,
    dir: &str,
    threads: u32,
    cal: Option<&Calibration>,
) -> Result<Vec<String>, Error> {
    std::fs::create_dir_all(dir).map_err(|e| Error::file(dir, e))?;
    let t = threads.to_string();
    let p = |name: &str| format!("{dir}/{name}");
    // The chain and sort -n read BAM, as in seed 000; a SAM input is converted first.
    let bam_copy = p("input.bam");
    let input = if input.ends_with(".bam") {
        input
    } else {
        let out = Command::new(mdsam)
            .args(["view", "-b", "-o", &bam_copy, input])
            .output()
            .map_err(|e| Error::file(mdsam.display().to_string(), e))?;
        if !out.status.success() {
            return Err(Error::Message(format!(
                "mdsam view -b -o {bam_copy} {input} failed: {}",
                String::from_utf8_lossy(&out.stderr).trim()
            )));
        }
        bam_copy.as_str()
    };
    let mut made = Vec::new();
    let mut step = |args: Vec<String>, profile: String| -> Result<(), Error> {
        let a: Vec<&str> = args.iter().map(String::as_str).collect();
        run_profiled(mdsam, &a, &profile)?;
        made.push(profile);
        Ok(())
    };
    let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
    for (mode, u) in [("files", false), ("pipe", true)] {
        let ext = |n: &str| p(&format!("{mode}-{n}.bam"));
        let mut collate = s(&["collate", "-@", &t]);
        let mut fixmate = s(&["fixmate", "-@", &t, "-m"]);
        let mut sort = s(&["sort", "-@", &t]);
        if u {
            for c in [&mut collate, &mut fixmate, &mut sort] {
                c.push("-u".into());
            }
        }
        collate.extend(["-o".into(), ext("collate"), input.into()]);
        fixmate.extend([ext("collate"), ext("fixmate")]);
        sort.extend(["-o".into(), ext("sort"), ext("fixmate")]);
        let markdup = s(&["markdup", "-@", &t, &ext("sort"), &ext("markdup")]);
        for (name, args) in
            [("collate", collate), ("fixmate", fixmate), ("sort", sort), ("markdup", markdup)]
        {
            step(args, p(&format!("{mode}-{name}.json")))?;
        }
    }
    step(s(&["markdup-pipeline", "-@", &t, input, &p("fused.bam")]), p("fused.json"))?;
    // S0's view claim is about parallel SAM parsing: profile SAM -> BAM.
    let sam = p("view-in.sam");
    let out = Command::new(mdsam)
        .args(["view", "-h", "-o", &sam, input])
        .output()
        .map_err(|e| Error::file(mdsam.display().to_string(), e))?;
    if !out.status.success() {
        return Err(Error::Message(format!(
            "mdsam view -h -o {sam} {input} failed: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        )));
    }
    step(s(&["view", "-@", &t, "-b", "-o", &p("view.bam"), &sam]), p("view.json"))?;
    step(s(&["sort", "-@", &t, "-n", "-o", &p("sort-n.bam"), input]), p("sort-n.json"))?;
    for mode in ["files", "pipe"] {
        for n in crate::report::CHAIN {
            let _ = std::fs::remove_file(p(&format!("{mode}-{n}.bam")));
        }
    }
    for n in ["fused.bam", "view.bam", "sort-n.bam", "view-in.sam", "input.bam"] {
        let _ = std::fs::remove_file(p(n));
    }
    if let Some(c) = cal {
        for f in &made {
            insert_calibration(f, c)?;
        }
    }
    Ok(made)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn test_insert_calibration_round_trips_and_rejects_non_profiles() {
        let dir = std::env::temp_dir().join(format!("hw-model-record-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("p.json").display().to_string();
        std::fs::write(&path, r#"{"format":"mdsam-profile","version":1,"run":{"command":"view","calibration":null,"future":3},"phases":[]}"#).unwrap();
        let cal = Calibration { dram_latency_ns: 77.0, ..Calibration::default() };
        insert_calibration(&path, &cal).unwrap();
        let p = crate::profile::Profile::load(&path).unwrap();
        assert_eq!(p.run.calibration.unwrap().dram_latency_ns, 77.0);
        assert!(
            std::fs::read_to_string(&path).unwrap().contains("future"),
            "unknown fields are kept"
        );
        let bad = dir.join("bad.json").display().to_string();
        std::fs::write(&bad, "[]").unwrap();
        let e = insert_calibration(&bad, &cal).unwrap_err();
        assert!(e.to_string().contains("bad.json"));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
