//! `.fai`-like reference lists (`view -t`, or `-T ref.fa` as `ref.fa.fai`): a reference name and
//! its length per line, the rest of the line ignored.

use crate::error::Error;
use crate::record::header::Reference;

/// The references listed in the file at `path`, in file order.
pub fn read_fai(path: &str) -> Result<Vec<Reference>, Error> {
    let text =
        std::fs::read(path).map_err(|e| Error::file(path, format!("could not read: {e}")))?;
    let mut refs = Vec::new();
    for line in text.split(|&b| b == b'\n').filter(|l| !l.is_empty()) {
        let mut f = line.split(|&b| b == b'\t');
        let name = f.next().unwrap_or_default();
        let len = f
            .next()
            .and_then(|l| std::str::from_utf8(l).ok()?.trim().parse::<u64>().ok())
            .ok_or_else(|| Error::file(path, "bad line in reference list"))?;
        refs.push(Reference { name: name.to_vec(), len });
    }
    Ok(refs)
}
