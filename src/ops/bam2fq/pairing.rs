//! Records of one name (the input is collated) → the outputs they go to (samtools'
//! `bam2fq_mainloop` and `flush_rec`). Of each name's READ1, READ2 and other copies the first
//! with qualities is written (else the first). READ1 with READ2 go to the `-1`/`-2` outputs; a
//! lone READ1 or READ2 goes to `-s` when there is one; other reads go to `-0`.

use std::borrow::Cow;

use super::index_reads::{IndexFormat, UnknownCode, index_reads};
use crate::record::RecordRef;
use crate::record::edit;
use crate::record::layout::flags;

/// Where a written record goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dest {
    /// `-0`: neither or both of READ1 and READ2.
    Other,
    Read1,
    Read2,
    /// `-s`
    Singleton,
    /// `--i1`, `--i2`
    Index1,
    Index2,
}

/// One record to write.
pub struct Emit {
    pub dest: Dest,
    pub record: Vec<u8>,
}

/// What the pairing needs to know of the command line.
#[derive(Clone, Debug)]
pub struct PairingOptions {
    pub has_singleton_output: bool,
    /// `-i`: a pair's READ2 gets READ1's barcode and barcode quality tags.
    pub casava: bool,
    /// `--barcode-tag` and `--quality-tag`.
    pub barcode_tags: [[u8; 2]; 2],
    /// Index reads, when `--i1` asks for them.
    pub index: Option<IndexFormat>,
}

/// The name being gathered and its best copies, by [`part`].
pub struct Pairing {
    options: PairingOptions,
    name: Option<Vec<u8>>,
    best: [Option<(u8, Vec<u8>)>; 3],
    pub singletons: u64,
}

/// 0: other, 1: READ1 only, 2: READ2 only.
fn part(flag: u16) -> usize {
    match flag & (flags::READ1 | flags::READ2) {
        flags::READ1 => 1,
        flags::READ2 => 2,
        _ => 0,
    }
}

impl Pairing {
    pub fn new(options: PairingOptions) -> Self {
        Pairing { options, name: None, best: [None, None, None], singletons: 0 }
    }

    /// Takes the next kept record; writes what a finished name leaves into `out`.
    pub fn push(&mut self, record: Cow<'_, [u8]>, out: &mut Vec<Emit>) -> Result<(), UnknownCode> {
        let r = RecordRef::new(&record);
        if self.name.as_deref() != Some(r.read_name()) {
            self.flush(out)?;
            // The buffer is reused: one allocation a name was a tenth of this serial step.
            let name = self.name.get_or_insert_with(Vec::new);
            name.clear();
            name.extend_from_slice(r.read_name());
        }
        // A copy with qualities beats one without.
        let qual_at = r.aux_offset() - r.l_seq();
        let score = if record.get(qual_at) == Some(&0xff) { 1 } else { 2 };
        let slot = &mut self.best[part(r.flag())];
        if slot.as_ref().is_none_or(|(s, _)| *s < score) {
            *slot = Some((score, record.into_owned()));
        }
        Ok(())
    }

    /// Writes the gathered name's records (at the end of the input, or at a new name).
    pub fn flush(&mut self, out: &mut Vec<Emit>) -> Result<(), UnknownCode> {
        let [other, read1, read2] = std::mem::take(&mut self.best).map(|b| b.map(|(_, r)| r));
        match (read1, read2) {
            (Some(r1), Some(mut r2)) => {
                if self.options.casava {
                    for tag in self.options.barcode_tags {
                        copy_str_tag(&r1, &mut r2, tag);
                    }
                }
                let mut index = Vec::new();
                self.write_index(Some(&r1), Some(&r2), &mut index)?;
                out.push(Emit { dest: Dest::Read1, record: r1 });
                out.push(Emit { dest: Dest::Read2, record: r2 });
                out.append(&mut index);
            }
            (Some(r), None) | (None, Some(r)) => {
                let is_read1 = part(RecordRef::new(&r).flag()) == 1;
                let dest = if self.options.has_singleton_output {
                    self.singletons += 1;
                    Dest::Singleton
                } else if is_read1 {
                    Dest::Read1
                } else {
                    Dest::Read2
                };
                let index_sources =
                    if is_read1 { (Some(&r[..]), None) } else { (None, Some(&r[..])) };
                let mut index = Vec::new();
                self.write_index(index_sources.0, index_sources.1, &mut index)?;
                out.push(Emit { dest, record: r });
                out.append(&mut index);
            }
            (None, None) => {}
        }
        if let Some(r) = other {
            let mut index = Vec::new();
            self.write_index(Some(&r), None, &mut index)?;
            out.push(Emit { dest: Dest::Other, record: r });
            out.append(&mut index);
        }
        Ok(())
    }

    fn write_index(
        &self,
        b1: Option<&[u8]>,
        b2: Option<&[u8]>,
        out: &mut Vec<Emit>,
    ) -> Result<(), UnknownCode> {
        let Some(spec) = &self.options.index else { return Ok(()) };
        let [i1, i2] = index_reads(b1, b2, spec)?;
        out.extend(i1.map(|record| Emit { dest: Dest::Index1, record }));
        out.extend(i2.map(|record| Emit { dest: Dest::Index2, record }));
        Ok(())
    }
}

/// `bam_aux_update_str` of `to` with `from`'s string tag, when `from` has it.
fn copy_str_tag(from: &[u8], to: &mut Vec<u8>, tag: [u8; 2]) {
    let Some(f) = RecordRef::new(from).aux_get(tag) else { return };
    if f.ty == b'Z' {
        // As htslib, a tag of another type in `to` is left alone.
        let _ = edit::update_str(to, tag, f.value);
    }
}
