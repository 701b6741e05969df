//! `markdup` (samtools 1.24 `bam_markdup.c`) on records only.
//!
//! Phases: [`ReadInfo::compute`] (*key*: per record, independent, run in parallel by the
//! pipeline), [`decide::decide`] (*decide*: the duplicate hashes, the moving window and duplicate
//! chains, in input order on one thread, as samtools does), [`decide::Outcome`] +
//! [`finalize`] (*write*: per record, independent, parallel again).

pub mod decide;
pub mod keys;
pub mod metrics;
pub mod optical;
pub mod stats;

use regex::bytes::Regex;

use crate::record::aux::{AuxField, AuxValue, RawFields};
use crate::record::edit;
use crate::record::layout::flags;
use crate::record::view::RecordRef;
use keys::Key;
use optical::{CoordRegex, Coords};

#[derive(Clone, Debug)]
pub enum Barcode {
    None,
    Tag([u8; 2]),
    Regex(Regex),
}

#[derive(Clone, Debug)]
pub struct MarkdupOptions {
    pub remove: bool,
    pub max_length: i64,
    pub supp: bool,
    pub tag: bool,
    pub opt_dist: i64,
    pub clear: bool,
    pub sequence_mode: bool,
    pub include_fails: bool,
    pub check_chain: bool,
    pub coords: Option<CoordRegex>,
    pub barcode: Barcode,
    pub read_groups: bool,
    pub dup_count: bool,
    pub move_umi: bool,
    pub umi_sep: u8,
}

impl Default for MarkdupOptions {
    fn default() -> Self {
        MarkdupOptions {
            remove: false,
            max_length: 300,
            supp: false,
            tag: false,
            opt_dist: 0,
            clear: false,
            sequence_mode: false,
            include_fails: false,
            check_chain: true,
            coords: None,
            barcode: Barcode::None,
            read_groups: false,
            dup_count: false,
            move_umi: false,
            umi_sep: b':',
        }
    }
}

/// Why a barcode could not be read (each is a warning).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BarcodeWarning {
    WrongType,
    NoSubstring,
    NoMatch,
}

/// Why a pair key could not be made (fatal).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KeyError {
    NoMc,
    McType,
}

/// What the decide phase needs to know about one record, computed independently per record.
#[derive(Clone, Debug)]
pub struct ReadInfo {
    /// Flag after `-c`.
    pub flag: u16,
    pub tid: i32,
    pub pos: i64,
    pub rg: u32,
    /// Examined (not secondary/supplementary/unmapped/QC-fail).
    pub examined: bool,
    pub paired: bool,
    pub single_key: Key,
    pub pair_key: Result<Key, KeyError>,
    pub barcode_warning: Option<BarcodeWarning>,
    /// Sum of qualities ≥ 15.
    pub score: i64,
    /// The `ms` tag.
    pub mate_score: Option<i64>,
    /// Coordinates for optical checks (only with `-d`).
    pub coords: Option<Coords>,
    /// Has `SA` or `XA`, or MUNMAP (supplementary marking candidate).
    pub supp_candidate: bool,
}

/// samtools' `has_mate`.
pub fn has_mate(flag: u16, mtid: i32, mpos: i64) -> bool {
    flag & flags::PAIRED != 0 && flag & flags::MUNMAP == 0 && !(mtid == -1 && mpos == -1)
}

/// The aux fields the key phase reads, found in one pass over the aux block (a scan per tag
/// was half of markdup's instructions). Each is the first field with its tag, as `bam_aux_get`.
#[derive(Default)]
struct KeyFields<'a> {
    mc: Option<AuxField<'a>>,
    ms: Option<AuxField<'a>>,
    barcode: Option<AuxField<'a>>,
    sa_or_xa: bool,
}

impl<'a> KeyFields<'a> {
    fn find(r: &RecordRef<'a>, barcode_tag: Option<[u8; 2]>) -> KeyFields<'a> {
        let mut k = KeyFields::default();
        // Tags are compared on the raw bytes; only the fields kept are decoded.
        for raw in RawFields::new(r.aux_bytes()) {
            let tag = [raw[0], raw[1]];
            match &tag {
                b"MC" if k.mc.is_none() => k.mc = Some(AuxField::from_raw(raw)),
                b"ms" if k.ms.is_none() => k.ms = Some(AuxField::from_raw(raw)),
                b"SA" | b"XA" => k.sa_or_xa = true,
                _ => {}
            }
            if Some(tag) == barcode_tag && k.barcode.is_none() {
                k.barcode = Some(AuxField::from_raw(raw));
            }
        }
        k
    }
}

fn str_field<'a>(f: Option<AuxField<'a>>) -> Option<Option<&'a [u8]>> {
    f.map(|f| match f.typed() {
        AuxValue::Str(s) => Some(s),
        _ => None,
    })
}

fn barcode(
    r: &RecordRef<'_>,
    bc: &Barcode,
    tag_field: Option<AuxField<'_>>,
) -> (i32, Option<BarcodeWarning>) {
    match bc {
        Barcode::None => (0, None),
        Barcode::Tag(_) => match str_field(tag_field) {
            None => (0, None),
            Some(None) => (0, Some(BarcodeWarning::WrongType)),
            Some(Some(s)) => (keys::jenkins(s) as i32, None),
        },
        Barcode::Regex(rx) => match rx.captures(r.read_name()) {
            Some(c) => match c.get(1) {
                Some(m) => (keys::jenkins(m.as_bytes()) as i32, None),
                None => (0, Some(BarcodeWarning::NoSubstring)),
            },
            None => (0, Some(BarcodeWarning::NoMatch)),
        },
    }
}

/// Read-group index of a record: 1 + position of its `RG` among the header's `@RG` IDs, else 0.
pub fn read_group_index(r: &RecordRef<'_>, ids: &std::collections::HashMap<Vec<u8>, u32>) -> u32 {
    match str_field(r.aux_get(*b"RG")) {
        Some(Some(rg)) => ids.get(rg).copied().unwrap_or(0),
        _ => 0,
    }
}

impl ReadInfo {
    /// The key phase for one record.
    pub fn compute(r: &RecordRef<'_>, opts: &MarkdupOptions, rg: u32) -> ReadInfo {
        let mut flag = r.flag();
        if opts.clear && flag & flags::DUP != 0 {
            flag ^= flags::DUP;
        }
        let exclude = flags::SECONDARY
            | flags::SUPPLEMENTARY
            | flags::UNMAP
            | if opts.include_fails { 0 } else { flags::QCFAIL };
        let examined = flag & exclude == 0;
        let paired = examined && has_mate(flag, r.next_ref_id(), r.next_pos());
        let rg_key = if opts.read_groups { rg as i32 } else { 0 };
        let barcode_tag = match opts.barcode {
            Barcode::Tag(tag) => Some(tag),
            _ => None,
        };
        let fields = KeyFields::find(r, barcode_tag);
        let (bc, barcode_warning) =
            if examined { barcode(r, &opts.barcode, fields.barcode) } else { (0, None) };
        let single_key = if examined { keys::single_key(r, bc, rg_key) } else { Key::default() };
        let pair_key = if paired {
            match str_field(fields.mc) {
                None => Err(KeyError::NoMc),
                Some(None) => Err(KeyError::McType),
                Some(Some(mc)) => Ok(keys::pair_key(r, mc, opts.sequence_mode, bc, rg_key)),
            }
        } else {
            Ok(Key::default())
        };
        let mate_score = fields.ms.map(|f| match f.typed() {
            AuxValue::Int(i) => i,
            _ => 0,
        });
        let coords = (opts.opt_dist > 0 && examined)
            .then(|| optical::coordinates(r.read_name(), opts.coords.as_ref()));
        let supp_candidate = fields.sa_or_xa || flag & flags::MUNMAP != 0;
        ReadInfo {
            flag,
            tid: r.ref_id(),
            pos: r.pos(),
            rg,
            examined,
            paired,
            single_key,
            pair_key,
            barcode_warning,
            score: if examined { crate::ops::fixmate::quality_score(r) as i64 } else { 0 },
            mate_score,
            coords,
            supp_candidate,
        }
    }
}

/// `move_umi_to_tag`: the UMI (barcode regex group 1) leaves the name for an `RX` tag.
pub fn move_umi(b: &mut Vec<u8>, rx: &Regex, sep: u8) {
    let name = RecordRef::new(b).read_name().to_vec();
    let Some(caps) = rx.captures(&name) else { return };
    let Some(m) = caps.get(1) else { return };
    let (s, e) = (m.start(), m.end());
    if edit::update_str(b, *b"RX", &name[s..e]).is_err() {
        return;
    }
    let (mut rs, mut re) = (s, e);
    if rs > 0 && name[rs - 1] == sep {
        rs -= 1;
    } else if re < name.len() && name[re] == sep {
        re += 1;
    }
    if re > rs {
        let mut new = name[..rs].to_vec();
        new.extend_from_slice(&name[re..]);
        edit::set_read_name(b, &new);
    }
}

/// Whether record `o` reaches the output after both passes.
pub fn is_written(o: &decide::Outcome, input_flag: u16, opts: &MarkdupOptions) -> bool {
    if !o.written {
        return false;
    }
    let dup = (input_flag & flags::DUP != 0 && !opts.clear) || o.dup || o.np;
    !(opts.remove && o.np && dup)
}

/// True when the record is written unchanged.
pub fn is_unchanged(o: &decide::Outcome, input_flag: u16, opts: &MarkdupOptions) -> bool {
    let input_dup = input_flag & flags::DUP != 0;
    let edited = o.dup
        || o.dc.is_some()
        || o.np
        || opts.move_umi
        || (input_dup && (opts.clear || (opts.supp && opts.dup_count)));
    !edited
}

fn dt_value(dt: u8) -> &'static [u8] {
    if dt == b'S' { b"SQ" } else { b"LB" }
}

/// The write phase for one record: applies the outcome in samtools' order of edits.
pub fn finalize<'a>(
    bytes: &[u8],
    o: &decide::Outcome,
    opts: &MarkdupOptions,
    name: &dyn Fn(u32) -> &'a [u8],
    umi: Option<&Regex>,
) -> Vec<u8> {
    let mut b = bytes.to_vec();
    let mut f = edit::flag(&b);
    if opts.clear && f & flags::DUP != 0 {
        f ^= flags::DUP;
        edit::set_flag(&mut b, f);
        edit::delete_tag(&mut b, *b"dt");
        edit::delete_tag(&mut b, *b"do");
    }
    if o.dup {
        edit::add_flags(&mut b, flags::DUP);
        if o.do_from != decide::NONE {
            let _ = edit::update_str(&mut b, *b"do", name(o.do_from));
        }
        if o.dt != 0 {
            let _ = edit::update_str(&mut b, *b"dt", dt_value(o.dt));
        }
    }
    if let Some(dc) = o.dc {
        let _ = edit::update_int(&mut b, *b"dc", dc);
    }
    if let (true, Some(rx)) = (o.eof, umi) {
        move_umi(&mut b, rx, opts.umi_sep);
    }
    if opts.supp {
        finalize_supp(&mut b, o, opts, name, umi);
    }
    b
}

/// The `-S` pass's edits of one record (after the first pass's, see [`finalize`]).
pub fn finalize_supp<'a>(
    b: &mut Vec<u8>,
    o: &decide::Outcome,
    opts: &MarkdupOptions,
    name: &dyn Fn(u32) -> &'a [u8],
    umi: Option<&Regex>,
) {
    if o.np {
        edit::add_flags(b, flags::DUP);
        if o.np_do != decide::NONE {
            let _ = edit::update_str(b, *b"do", name(o.np_do));
        }
        if o.np_dt != 0 {
            let _ = edit::update_str(b, *b"dt", dt_value(o.np_dt));
        }
    }
    if opts.dup_count && edit::flag(b) & flags::DUP != 0 {
        edit::delete_tag(b, *b"dc");
    }
    if let Some(rx) = umi {
        move_umi(b, rx, opts.umi_sep);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn umi_leaves_the_name() {
        let mut b = vec![0u8; 32];
        let name = b"A:1:B:1:1:10:20:ACGT";
        b[8] = name.len() as u8 + 1;
        b.extend_from_slice(name);
        b.push(0);
        let rx = Regex::new("[0-9A-Za-z]+:[0-9A-Za-z]+:[0-9A-Za-z]+:[0-9A-Za-z]+:[0-9A-Za-z]+:[0-9A-Za-z]+:[0-9A-Za-z]+:([!-?A-~]+)").unwrap();
        move_umi(&mut b, &rx, b':');
        let r = RecordRef::new(&b);
        assert_eq!(r.read_name(), b"A:1:B:1:1:10:20");
        assert_eq!(r.aux_get(*b"RX").map(|f| f.value), Some(&b"ACGT"[..]));
    }
}
