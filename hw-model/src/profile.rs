//! The `--profile FILE` JSON that every mdsam command writes (format in `PROFILE.md`, version 1).
//!
//! These types are the schema's one definition: mdsam builds them and writes them with
//! [`Profile::to_json`], hw-model reads them with [`Profile::parse`]. Readers accept unknown extra
//! fields and treat missing numbers as 0, as PROFILE.md asks, so a profile from a newer mdsam
//! still loads.

use serde::{Deserialize, Serialize, Serializer};

use crate::calibrate::Calibration;
use crate::error::Error;

/// One run of one mdsam command.
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(default)]
pub struct Profile {
    pub format: String,
    pub version: u32,
    pub run: Run,
    pub phases: Vec<Phase>,
}

/// The run header.
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(default)]
pub struct Run {
    pub command: String,
    pub argv: Vec<String>,
    pub mdsam_version: String,
    /// samtools' `-@`: extra threads. mdsam's pool has `threads + 1` workers.
    pub threads: u32,
    /// The size of mdsam's worker pool: `threads + 1`, the main thread being a worker too.
    pub pool_threads: u32,
    pub allocator: String,
    pub level: i32,
    pub input_format: String,
    pub output_format: String,
    #[serde(serialize_with = "whole_number")]
    pub input_bytes: f64,
    #[serde(serialize_with = "whole_number")]
    pub output_bytes: f64,
    pub composition: Composition,
    pub wall_s: f64,
    pub cpu_s: f64,
    #[serde(serialize_with = "whole_number")]
    pub peak_rss_bytes: f64,
    /// The budget past which the command spills to temporary files; 0: it never spills.
    #[serde(serialize_with = "whole_number")]
    pub memory_budget_bytes: f64,
    pub host: Host,
    pub calibration: Option<Calibration>,
}

/// How a command's phases share time.
#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum Composition {
    /// Phases overlap: batches flow read → process → write in bounded memory.
    Streaming,
    /// Each phase ends before the next starts (load all, process, write).
    #[default]
    Staged,
}

#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(default)]
pub struct Host {
    pub cpus: u32,
    #[serde(serialize_with = "whole_number")]
    pub mem_bytes: f64,
    pub cpu_model: String,
    pub os: String,
}

/// One phase's counters.
#[derive(Clone, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(default)]
pub struct Phase {
    pub name: String,
    pub kind: String,
    pub wall_s: f64,
    pub cpu_s: f64,
    pub serial_cpu_s: f64,
    pub pool_cpu_s: f64,
    #[serde(serialize_with = "whole_number")]
    pub bytes_read: f64,
    #[serde(serialize_with = "whole_number")]
    pub bytes_inflated: f64,
    #[serde(serialize_with = "whole_number")]
    pub bytes_deflated: f64,
    #[serde(serialize_with = "whole_number")]
    pub bytes_written: f64,
    #[serde(serialize_with = "whole_number")]
    pub records: f64,
    #[serde(serialize_with = "whole_number")]
    pub allocations: f64,
    #[serde(serialize_with = "whole_number")]
    pub random_accesses: f64,
    #[serde(serialize_with = "whole_number")]
    pub peak_rss_bytes: f64,
}

/// Counts (bytes, records, allocations) are whole numbers held as `f64` for the model's
/// arithmetic; they are written as JSON integers, as PROFILE.md shows them, unless scaling made
/// one fractional.
fn whole_number<S: Serializer>(value: &f64, serializer: S) -> Result<S::Ok, S::Error> {
    // Up to 2^53 every integer is exact in an f64.
    const EXACT_MAX: f64 = (1u64 << 53) as f64;
    if value.fract() == 0.0 && (0.0..=EXACT_MAX).contains(value) {
        serializer.serialize_u64(*value as u64)
    } else {
        serializer.serialize_f64(*value)
    }
}

impl Profile {
    /// The profile as PROFILE.md's JSON (indented, one trailing newline).
    pub fn to_json(&self) -> String {
        // Only strings, numbers, sequences and structs: serde_json cannot fail on them.
        let mut json = serde_json::to_string_pretty(self).expect("a profile always serializes");
        json.push('\n');
        json
    }

    pub fn parse(text: &str, path: &str) -> Result<Profile, Error> {
        let p: Profile = serde_json::from_str(text)
            .map_err(|e| Error::file(path, format!("not an mdsam profile: {e}")))?;
        if p.format != "mdsam-profile" {
            return Err(Error::file(
                path,
                format!("format is \"{}\", not \"mdsam-profile\"", p.format),
            ));
        }
        if p.version != 1 {
            return Err(Error::file(
                path,
                format!("profile version {} is not supported (1)", p.version),
            ));
        }
        for ph in &p.phases {
            let fields = [ph.wall_s, ph.cpu_s, ph.serial_cpu_s, ph.pool_cpu_s, ph.bytes_read];
            if fields.iter().any(|v| !v.is_finite() || *v < 0.0) {
                return Err(Error::file(
                    path,
                    format!("phase \"{}\" has a negative or non-finite counter", ph.name),
                ));
            }
        }
        Ok(p)
    }

    pub fn load(path: &str) -> Result<Profile, Error> {
        let text = std::fs::read_to_string(path).map_err(|e| Error::file(path, e))?;
        Profile::parse(&text, path)
    }

    /// mdsam's pool size for this run: `-@ N` runs N+1 workers.
    pub fn workers(&self) -> u32 {
        self.run.threads + 1
    }

    /// Logical CPUs of the profiling host (at least 1).
    pub fn host_cpus(&self) -> u32 {
        self.run.host.cpus.max(1)
    }

    pub fn phase(&self, name: &str) -> Option<&Phase> {
        self.phases.iter().find(|p| p.name == name)
    }

    /// Every counter multiplied by `factor` (a bigger or smaller input of the same kind), for
    /// projecting onto the seed's data-set sizes. Times scale too: the model is linear in work.
    pub fn scaled(&self, factor: f64) -> Profile {
        let mut p = self.clone();
        for v in
            [&mut p.run.input_bytes, &mut p.run.output_bytes, &mut p.run.wall_s, &mut p.run.cpu_s]
        {
            *v *= factor;
        }
        for ph in &mut p.phases {
            for v in [
                &mut ph.wall_s,
                &mut ph.cpu_s,
                &mut ph.serial_cpu_s,
                &mut ph.pool_cpu_s,
                &mut ph.bytes_read,
                &mut ph.bytes_inflated,
                &mut ph.bytes_deflated,
                &mut ph.bytes_written,
                &mut ph.records,
                &mut ph.allocations,
                &mut ph.random_accesses,
                &mut ph.peak_rss_bytes,
            ] {
                *v *= factor;
            }
        }
        p
    }
}

/// A hand-written profile in PROFILE.md's format: phases as (name, kind, serial CPU s, pool
/// CPU s), with bytes that follow from the kind (100 MB BAM in, 300 MB inflated, 100 MB out),
/// a million records, one worker. The unit tests and `validate` use it.
pub fn synthetic(command: &str, composition: &str, phases: &[(&str, &str, f64, f64)]) -> Profile {
    // phases: (name, kind, serial_cpu_s, pool_cpu_s); bytes follow from the kind.
    let ph: Vec<String> = phases
        .iter()
        .map(|(name, kind, ser, pool)| {
            let (read, infl, defl, written) = match *kind {
                "inflate_parse" => (1.0e8, 3.0e8, 0.0, 0.0),
                "format_deflate" => (0.0, 0.0, 1.0e8, 1.0e8),
                _ => (0.0, 0.0, 0.0, 0.0),
            };
            let random = if matches!(*kind, "mate_pair" | "dup_lookup" | "sort") { 2.0e6 } else { 0.0 };
            format!(
                r#"{{"name":"{name}","kind":"{kind}","wall_s":{w},"cpu_s":{c},"serial_cpu_s":{ser},"pool_cpu_s":{pool},
                "bytes_read":{read},"bytes_inflated":{infl},"bytes_deflated":{defl},"bytes_written":{written},
                "records":1000000,"allocations":2000000,"random_accesses":{random},"peak_rss_bytes":1e9,"extra_field":1}}"#,
                w = ser + pool,
                c = ser + pool
            )
        })
        .collect();
    let wall: f64 = phases.iter().map(|p| p.2 + p.3).sum();
    let text = format!(
        r#"{{"format":"mdsam-profile","version":1,"run":{{"command":"{command}","argv":["mdsam","{command}"],
        "mdsam_version":"0.1.0","threads":0,"allocator":"mimalloc","level":6,"input_format":"bam","output_format":"bam",
        "input_bytes":1e8,"output_bytes":1e8,"composition":"{composition}","wall_s":{wall},"cpu_s":{wall},"peak_rss_bytes":1e9,
        "host":{{"cpus":2,"mem_bytes":2.5e10,"cpu_model":"test","os":"linux"}},"calibration":null}},"phases":[{}]}}"#,
        ph.join(",")
    );
    Profile::parse(&text, "sample.json").expect("sample profile parses")
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A hand-written profile in PROFILE.md's format (used across the crate's unit tests).
    pub(crate) fn sample(
        command: &str,
        composition: &str,
        phases: &[(&str, &str, f64, f64)],
    ) -> Profile {
        synthetic(command, composition, phases)
    }

    #[test]
    fn test_parse_accepts_unknown_fields_and_missing_numbers() {
        let p = sample("view", "streaming", &[("read", "inflate_parse", 0.1, 0.9)]);
        assert_eq!(p.run.composition, Composition::Streaming);
        assert_eq!(p.workers(), 1);
        assert_eq!(p.phases[0].random_accesses, 0.0);
        let minimal = r#"{"format":"mdsam-profile","version":1,"run":{"command":"view"},"phases":[{"name":"read"}]}"#;
        let m = Profile::parse(minimal, "m.json").unwrap();
        assert_eq!(m.phases[0].cpu_s, 0.0);
        assert_eq!(m.run.composition, Composition::Staged);
    }

    #[test]
    fn test_parse_rejects_other_formats_with_the_path() {
        let err = Profile::parse(r#"{"format":"x","version":1}"#, "bad.json").unwrap_err();
        assert!(err.to_string().starts_with("bad.json: "), "{err}");
        let err = Profile::parse("{", "trunc.json").unwrap_err();
        assert!(err.to_string().contains("trunc.json"));
        let neg = r#"{"format":"mdsam-profile","version":1,"phases":[{"name":"read","cpu_s":-1}]}"#;
        assert!(Profile::parse(neg, "n.json").is_err());
    }

    #[test]
    fn test_to_json_writes_counts_as_integers_and_parses_back() {
        let p = sample("sort", "staged", &[("sort", "sort", 1.0, 2.0)]);
        let json = p.to_json();
        assert!(json.contains("\"records\": 1000000,"), "{json}");
        assert!(json.contains("\"serial_cpu_s\": 1.0,"), "{json}");
        assert_eq!(Profile::parse(&json, "p.json").unwrap(), p);
        let halved = p.scaled(0.5).scaled(0.5).scaled(1.0 / 3.0);
        assert!(halved.to_json().contains("\"records\": 83333.33"));
    }

    #[test]
    fn test_scaled_doubles_counters() {
        let p = sample("sort", "staged", &[("sort", "sort", 1.0, 2.0)]);
        let d = p.scaled(2.0);
        assert_eq!(d.phases[0].pool_cpu_s, 4.0);
        assert_eq!(d.phases[0].records, 2.0e6);
        assert_eq!(d.run.input_bytes, 2.0e8);
    }
}
