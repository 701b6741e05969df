//! Index files beside a sequence file: htslib 1.24's `fai_build3` (write `.fai` and, for BGZF,
//! `.gzi`) and `fai_load3_format` (read them, building them first when the `.fai`, or a BGZF
//! file's `.gzi`, does not exist). Errors are htslib's lines, one per `\n`.

use std::fs::File;

use super::Fasta;
use super::build::build;
use super::index::{self, Format};
use super::source::{self, Compression, Source, Stream};

fn io_message(e: &std::io::Error) -> String {
    crate::error::c_message(e)
}

/// `fai_build3`: indexes `path`, writes `fai_path` (default `PATH.fai`) and, for BGZF,
/// `gzi_path` (default `PATH.gzi`).
pub fn build_files(
    path: &str,
    fai_path: Option<&str>,
    gzi_path: Option<&str>,
) -> Result<(), String> {
    let core = |what: String| format!("[E::fai_build3_core] {what}");
    let mut stream = Stream::open(path)
        .map_err(|e| core(format!("Failed to open the file {path} : {}", io_message(&e))))?;
    let (index, format) = match build(&mut stream) {
        Ok(built) => built,
        Err(line) if stream.compression() == Compression::Gzip => {
            return Err(format!(
                "{line}\n{}",
                core("Cannot index files compressed with gzip, please use bgzip".into())
            ));
        }
        Err(line) => return Err(line),
    };
    if stream.failed {
        // htslib's reader took the damaged block for the end of the file; closing it fails,
        // with whatever errno held (nothing).
        return Err(core(format!("Error on closing {path} : Success")));
    }
    let fai_path = fai_path.map_or_else(|| format!("{path}.fai"), str::to_string);
    let gzi_path = gzi_path.map_or_else(|| format!("{path}.gzi"), str::to_string);
    if stream.compression() == Compression::Bgzf {
        let blocks = stream.blocks.get(1..).unwrap_or_default();
        crate::io::output::write_file(&gzi_path, &source::encode_gzi(blocks)).map_err(|e| {
            format!(
                "[E::bgzf_index_dump_hfile] Error writing to {gzi_path} : {}\n{}",
                io_message(&e),
                core(format!("Failed to make bgzf index {gzi_path}"))
            )
        })?;
    }
    crate::io::output::write_file(&fai_path, &index.to_fai(format)).map_err(|e| {
        core(format!("Failed to open {} index {fai_path} : {}", format.word(), io_message(&e)))
    })
}

/// `fai_load3_format` with `FAI_CREATE`.
pub fn load(
    path: &str,
    fai_path: Option<&str>,
    gzi_path: Option<&str>,
    format: Format,
) -> Result<Fasta, String> {
    let core = |what: String| format!("[E::fai_load3_core] {what}");
    let word = format.word();
    let fai_path = fai_path.map_or_else(|| format!("{path}.fai"), str::to_string);
    let gzi_path = gzi_path.map_or_else(|| format!("{path}.gzi"), str::to_string);
    let not_found = |e: &std::io::Error| e.kind() == std::io::ErrorKind::NotFound;

    let mut need_build = None;
    match std::fs::metadata(&fai_path).and_then(|_| File::open(&fai_path)) {
        Ok(_) => {
            let compression = source::compression_of(path)
                .map_err(|_| core(format!("Failed to open {word} file {path}")))?;
            if compression == Compression::Bgzf
                && let Err(e) = File::open(&gzi_path)
            {
                if !not_found(&e) {
                    return Err(core(format!(
                        "Failed to open {word} index {gzi_path}: {}",
                        io_message(&e)
                    )));
                }
                need_build = Some(e);
            }
        }
        Err(e) => need_build = Some(e),
    }
    if let Some(e) = need_build {
        if !not_found(&e) {
            return Err(core(format!(
                "Failed to open {word} index {fai_path}: {}",
                io_message(&e)
            )));
        }
        build_files(path, Some(&fai_path), Some(&gzi_path))?;
    }
    let text = std::fs::read(&fai_path)
        .map_err(|e| core(format!("Failed to open {word} index {fai_path}: {}", io_message(&e))))?;
    let index = index::parse(&text, &fai_path, format).map_err(|line| {
        format!("{line}\n{}", core(format!("Failed to read {word} index {fai_path}")))
    })?;
    let file = File::open(path).map_err(|_| core(format!("Failed to open {word} file {path}")))?;
    let source = match source::compression_of(path) {
        Ok(Compression::None) => Source::plain(file),
        _ => {
            let gzi = source::read_gzi(&gzi_path).map_err(|e| {
                let first = if not_found(&e) || File::open(&gzi_path).is_err() {
                    format!("[E::bgzf_index_load] Error opening {gzi_path} : {}", io_message(&e))
                } else {
                    format!(
                        "[E::bgzf_index_load_hfile] Error reading {gzi_path} : {}",
                        io_message(&e)
                    )
                };
                format!("{first}\n{}", core(format!("Failed to load .gzi index: {gzi_path}")))
            })?;
            Source::bgzf(file, gzi)
        }
    };
    Ok(Fasta::seekable(index, source))
}
