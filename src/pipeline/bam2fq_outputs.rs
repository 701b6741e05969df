//! The files `samtools fastq` writes: `-0`, `-1`, `-2` (stdout for those not named), `-s`,
//! `--i1`, `--i2`. As samtools, outputs named alike share one file (`-1 x -2 x`, an index file
//! named as a read file), and names ending `.gz`, `.bgz` or `.bgzf` are BGZF-compressed.

use std::io::Write;

use crate::error::Error;
use crate::io::{bgzf, output};
use crate::ops::bam2fq::pairing::Dest;

enum Stream {
    Plain(Box<dyn Write + Send>),
    Bgzf(bgzf::Writer),
}

struct Sink {
    path: String,
    stream: Stream,
    file: Option<output::OutputFile>,
}

/// The open outputs and which of them each [`Dest`] writes to.
pub struct Outputs {
    sinks: Vec<Sink>,
    /// Per [`Dest`] (in [`dest_slot`] order): its sink.
    routes: [Option<usize>; 6],
}

/// The names given on the command line.
#[derive(Clone, Debug, Default)]
pub struct OutputNames {
    /// `-0`, `-1`, `-2`.
    pub reads: [Option<String>; 3],
    pub singleton: Option<String>,
    pub index: [Option<String>; 2],
}

pub fn dest_slot(dest: Dest) -> usize {
    match dest {
        Dest::Other => 0,
        Dest::Read1 => 1,
        Dest::Read2 => 2,
        Dest::Singleton => 3,
        Dest::Index1 => 4,
        Dest::Index2 => 5,
    }
}

/// samtools' test for a compressed output's name.
fn is_compressed_name(path: &str) -> bool {
    [".gz", ".bgz", ".bgzf"].iter().any(|ext| path.len() > ext.len() && path.ends_with(ext))
}

impl Outputs {
    /// Opens every output in samtools' order: `-s`, the read files, the index files.
    pub fn open(names: &OutputNames, level: i32, threads: usize) -> Result<Outputs, Error> {
        let mut outputs = Outputs { sinks: Vec::new(), routes: [None; 6] };
        if let Some(path) = &names.singleton {
            let at = outputs.add(path, level, threads, "singleton")?;
            outputs.routes[3] = Some(at);
        }
        let mut stdout = None;
        for i in 0..3 {
            let sink = match &names.reads[i] {
                Some(path) => match (0..i).find(|&j| names.reads[j].as_ref() == Some(path)) {
                    Some(j) => outputs.routes[j].expect("opened before"),
                    None => outputs.add(path, level, threads, &format!("r{i}"))?,
                },
                None => match stdout {
                    Some(at) => at,
                    None => {
                        let at = outputs.add("-", level, threads, "STDOUT")?;
                        stdout = Some(at);
                        at
                    }
                },
            };
            outputs.routes[i] = Some(sink);
        }
        for i in 0..2 {
            let Some(path) = &names.index[i] else { continue };
            let same_read = (0..3).find(|&j| names.reads[j].as_ref() == Some(path));
            let same_index = (0..i).find(|&j| names.index[j].as_ref() == Some(path));
            let sink = match (same_read, same_index) {
                (Some(j), _) => outputs.routes[j].expect("opened before"),
                (None, Some(j)) => outputs.routes[4 + j].expect("opened before"),
                (None, None) => outputs.add(path, level, threads, &format!("i{}", i + 1))?,
            };
            outputs.routes[4 + i] = Some(sink);
        }
        Ok(outputs)
    }

    fn add(&mut self, path: &str, level: i32, threads: usize, what: &str) -> Result<usize, Error> {
        let cannot_open = |e: std::io::Error| {
            let reason = crate::error::c_message(&e);
            let htslib =
                format!("[E::hts_open_format] Failed to open file \"{path}\" : {reason}\n");
            Error::Bare(
                htslib
                    + &match what {
                        "STDOUT" => format!("samtools bam2fq: Cannot open STDOUT: {reason}"),
                        "singleton" => {
                            format!(
                                "samtools bam2fq: Cannot open singleton file \"{path}\": {reason}"
                            )
                        }
                        _ => {
                            format!("samtools bam2fq: Cannot open {what} file \"{path}\": {reason}")
                        }
                    },
            )
        };
        let (writer, file) = output::create(path).map_err(cannot_open)?;
        let stream = if path != "-" && is_compressed_name(path) {
            Stream::Bgzf(bgzf::Writer::new(writer, level, threads).map_err(cannot_open)?)
        } else {
            Stream::Plain(writer)
        };
        self.sinks.push(Sink { path: path.to_string(), stream, file });
        Ok(self.sinks.len() - 1)
    }

    pub fn sink_count(&self) -> usize {
        self.sinks.len()
    }

    /// The sink `dest` writes to (`None`: its records are dropped, as index reads without a
    /// file).
    pub fn route(&self, dest: Dest) -> Option<usize> {
        self.routes[dest_slot(dest)]
    }

    pub fn write(&mut self, sink: usize, bytes: &[u8]) -> Result<(), Error> {
        let s = &mut self.sinks[sink];
        let path = if s.path == "-" { "stdout" } else { s.path.as_str() };
        match &mut s.stream {
            Stream::Plain(w) => w.write_all(bytes),
            Stream::Bgzf(w) => w.write_bytes(bytes),
        }
        .map_err(|e| Error::io(path, e))
    }

    /// Flushes and closes every output; files appear under their names only now.
    pub fn finish(self) -> Result<(), Error> {
        for s in self.sinks {
            let path = if s.path == "-" { "stdout".to_string() } else { s.path.clone() };
            let mut writer = match s.stream {
                Stream::Plain(w) => w,
                Stream::Bgzf(w) => w.finish().map_err(|e| Error::io(&path, e))?,
            };
            writer.flush().map_err(|e| Error::io(&path, e))?;
            drop(writer);
            if let Some(f) = s.file {
                f.commit().map_err(|e| Error::io(&path, e))?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compressed_names_are_recognised_as_samtools_does() {
        assert!(is_compressed_name("x.fq.gz") && is_compressed_name("a.bgzf"));
        assert!(!is_compressed_name(".gz") && !is_compressed_name("x.fq"));
    }
}
