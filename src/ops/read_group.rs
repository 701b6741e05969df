//! `addreplacerg` (samtools 1.24 `bam_addrprg.c`) on one record: the `RG:Z` tag set to the
//! chosen read group, replacing the first one there (`overwrite_all`) or only where there is
//! none (`orphan_only`). The tag goes last, as `bam_aux_append` puts it.

use crate::record::edit;
use crate::record::view::RecordRef;

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ReadGroupMode {
    #[default]
    OverwriteAll,
    OrphanOnly,
}

/// Writes `rec` with its read group set to `id` into `out`.
pub fn set_read_group(rec: &RecordRef<'_>, id: &[u8], mode: ReadGroupMode, out: &mut Vec<u8>) {
    out.extend_from_slice(rec.bytes());
    let had_one = edit::find_tag(out, *b"RG").is_some();
    match mode {
        ReadGroupMode::OrphanOnly if had_one => return,
        ReadGroupMode::OrphanOnly => {}
        ReadGroupMode::OverwriteAll => {
            edit::delete_tag(out, *b"RG");
        }
    }
    edit::append_str(out, *b"RG", id);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::build::RecordBuilder;

    #[test]
    fn overwrite_moves_the_tag_last_and_orphan_only_leaves_it() {
        let b = RecordBuilder::new(b"r").aux(b"RGZold\0NMC\x01").build();
        let mut out = Vec::new();
        set_read_group(&RecordRef::new(&b), b"new", ReadGroupMode::OverwriteAll, &mut out);
        assert_eq!(RecordRef::new(&out).aux_bytes(), b"NMC\x01RGZnew\0");
        out.clear();
        set_read_group(&RecordRef::new(&b), b"new", ReadGroupMode::OrphanOnly, &mut out);
        assert_eq!(out, b);
    }
}
