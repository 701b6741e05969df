//! `view`'s command line before the files it names are read, and the step that reads them (through
//! `io`) into [`ViewOptions`].
//!
//! samtools reads the `-N`, `-R` and `-D` files as its option loop meets them, and the `-t`/`-T`
//! reference list and the `-L` BED file after its checks. The command-line parser reads no file,
//! so it hands over the files in that order, along with the options or the first error it found:
//! [`resolve`] reads the list files first, so an unreadable one is still reported before any error
//! the command line has after it.

use super::ViewOptions;
use crate::error::Error;
use crate::io::fasta::scan::read_fai_or_fasta;
use crate::io::{bed, lists};

/// A list file named on `view`'s command line (the `^` of `[^]FILE` already taken off).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ListFile {
    /// `-N [^]FILE`: more read names for `filter.read_names`.
    ReadNames(String),
    /// `-R [^]FILE`: more read groups for the `-r`/`-R` set.
    ReadGroups(String),
    /// `-D TAG:FILE`: more values for the tag filter.
    TagValues(String),
}

/// What `view`'s command line asks for, its files not yet read.
pub struct ViewRequest {
    /// The `-N`, `-R` and `-D` files, in command-line order, up to the first error.
    pub lists: Vec<ListFile>,
    /// The options, their name and value sets holding what the command line itself gave; or the
    /// first error of the command line that is not about a file.
    pub options: Result<ViewOptions, Error>,
    /// The `.fai`-like reference list (`-t`, or `-T FILE` as `FILE.fai`).
    pub fai: Option<String>,
    /// The BED file (`-L`, `--region-file`).
    pub bed: Option<String>,
}

/// Reads the files `request` names, in samtools' order, into its options.
pub fn resolve(request: ViewRequest) -> Result<ViewOptions, Error> {
    let (mut read_names, mut read_groups, mut tag_values) = (Vec::new(), Vec::new(), Vec::new());
    for list in &request.lists {
        match list {
            ListFile::ReadNames(path) => read_names.extend(lists::read_words(path)?),
            ListFile::ReadGroups(path) => read_groups.extend(lists::read_words(path)?),
            ListFile::TagValues(path) => tag_values.extend(lists::read_tag_values(path)?),
        }
    }
    let mut opts = request.options?;
    if let Some(set) = &mut opts.filter.read_names {
        set.names.extend(read_names);
    }
    // The `-r`/`-R` set both filters records and picks the `@RG` lines to keep.
    for set in [&mut opts.filter.read_groups, &mut opts.keep_read_groups].into_iter().flatten() {
        set.names.extend(read_groups.iter().cloned());
    }
    if let Some(values) = opts.filter.tag.as_mut().and_then(|t| t.values.as_mut()) {
        values.extend(tag_values);
    }
    opts.fai_refs = request.fai.as_deref().map(read_fai_or_fasta).transpose()?;
    opts.bed = request
        .bed
        .as_deref()
        .map(|path| {
            bed::read_bed(path).map_err(|e| {
                e.report(&format!("samtools view: Could not read file \"{path}\""), true)
            })
        })
        .transpose()?;
    Ok(opts)
}
