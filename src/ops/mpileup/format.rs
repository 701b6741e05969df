//! One `mpileup` text line (samtools 1.24 `bam_plcmd.c`: `pileup_seq`, the column loop of
//! `mpileup` and `print_empty_pileup`): per input the depth, the bases with their read-start,
//! read-end, indel and deletion marks, the qualities, then the optional columns.

use crate::record::aux::AuxValue;
use crate::record::layout::{SEQ_NT16, flags};
use crate::record::{Header, RecordRef};

use super::basemod::ReadMods;
use super::pileup::{Entry, Read};

/// The optional per-read columns, in samtools' flag-bit order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Extra {
    MapqChar,
    Qpos,
    Qname,
    Flag,
    Rname,
    Pos,
    Mapq,
    Rnext,
    Pnext,
    Rlen,
    Qpos5,
}

#[derive(Clone, Debug)]
pub struct FormatOptions {
    /// `-Q`: bases below it are left out.
    pub min_base_quality: i32,
    /// `--reverse-del`: `#` for deletions on the reverse strand.
    pub reverse_del: bool,
    /// `--no-output-ins` count: 1 drops the sequence, 2 the `+N` too.
    pub no_ins: u8,
    /// `--no-output-del` count, likewise.
    pub no_del: u8,
    /// `--no-output-ends`: no `^Q` and `$`.
    pub no_ends: bool,
    /// `--no-output-ins-mods`: no modifications inside insertions (`-M`).
    pub no_ins_mods: bool,
    /// Sorted, without repeats.
    pub extras: Vec<Extra>,
    /// `--output-extra` tags, in the order given.
    pub tags: Vec<[u8; 2]>,
    pub sep: u8,
    pub empty: u8,
}

const FORWARD: &[u8; 16] = b".ACMGRSVTWYHKDBN";
const REVERSE: &[u8; 16] = b",acmgrsvtwyhkdbn";
const NT16_STR: &[u8; 16] = b"=ACMGRSVTWYHKDBN";

fn push_int(out: &mut Vec<u8>, v: i64) {
    out.extend_from_slice(itoa::Buffer::new().format(v).as_bytes());
}

/// The reference byte at `pos`, if any.
fn ref_byte(reference: Option<&[u8]>, pos: i64) -> Option<u8> {
    reference.and_then(|s| usize::try_from(pos).ok().and_then(|p| s.get(p)).copied())
}

/// `pileup_seq`: one read's bases field at `pos`.
fn pileup_seq(
    out: &mut Vec<u8>,
    read: &Read,
    e: &Entry,
    pos: i64,
    reference: Option<&[u8]>,
    o: &FormatOptions,
) {
    let rev = read.is_reverse;
    if !o.no_ends && e.is_head {
        out.push(b'^');
        out.push(if read.mapq > 93 { 126 } else { read.mapq + 33 });
    }
    if !e.is_del {
        let mut c = read.base_at(e.qpos);
        if reference.is_some() {
            let rb = ref_byte(reference, pos).map_or(15, |b| SEQ_NT16[b as usize]);
            if c == rb {
                c = 0;
            }
        }
        out.push(if rev { REVERSE[c as usize] } else { FORWARD[c as usize] });
        if let Some(m) = &read.mods {
            m.push_at(e.qpos, out);
        }
    } else {
        out.push(if e.is_refskip {
            if rev { b'<' } else { b'>' }
        } else if rev && o.reverse_del {
            b'#'
        } else {
            b'*'
        });
    }
    let mut del_len = -e.indel;
    if e.indel > 0 {
        let mods = read.mods.as_ref().filter(|_| !o.no_ins_mods && o.no_ins == 0);
        let (text, bases, following_del) = insertion(read, e, mods);
        del_len = following_del;
        if o.no_ins < 2 {
            out.push(b'+');
            push_int(out, bases);
        }
        if o.no_ins == 0 {
            let pad = if o.reverse_del { b'#' } else { b'*' };
            // Modification text in brackets keeps its case.
            let mut in_mod = false;
            for c in text {
                if c == b'[' {
                    in_mod = true;
                } else if c == b']' {
                    in_mod = false;
                }
                out.push(match (rev, c) {
                    (true, b'*') => pad,
                    _ if in_mod => c,
                    (true, c) => c.to_ascii_lowercase(),
                    (false, c) => c.to_ascii_uppercase(),
                });
            }
        }
    }
    if del_len > 0 {
        if o.no_del < 2 {
            push_int(out, -del_len);
        }
        if o.no_del == 0 {
            for j in 1..=del_len {
                let c = ref_byte(reference, pos + j).unwrap_or(b'N');
                out.push(if rev { c.to_ascii_lowercase() } else { c.to_ascii_uppercase() });
            }
        }
    }
    if !o.no_ends && e.is_tail {
        out.push(b'$');
    }
}

/// `bam_plp_insertion_mod` without modifications: the inserted bases (`*` for pads), their
/// count with pads, and the length of a deletion right after them.
fn insertion(read: &Read, e: &Entry, mods: Option<&ReadMods>) -> (Vec<u8>, i64, i64) {
    use crate::record::cigar;
    let mut text = Vec::new();
    let mut del = 0;
    let mut j = 1i64;
    let mut bases = 0i64;
    let ops = &read.ops;
    for &c in &ops[e.cigar_ind + 1..] {
        let l = cigar::len(c);
        match cigar::op(c) {
            cigar::PAD | cigar::INS => bases += i64::from(l),
            _ => break,
        }
    }
    for &c in &ops[e.cigar_ind + 1..] {
        let l = cigar::len(c);
        match cigar::op(c) {
            cigar::PAD => text.extend(std::iter::repeat_n(b'*', l as usize)),
            cigar::INS => {
                for _ in 0..l {
                    let at = e.qpos + j - i64::from(e.is_del);
                    let base = if (at as usize) < read.l_seq() {
                        NT16_STR[read.base_at(at) as usize]
                    } else {
                        b'N'
                    };
                    text.push(base);
                    if let Some(m) = mods {
                        m.push_at(at, &mut text);
                    }
                    j += 1;
                }
            }
            cigar::DEL => {
                del = i64::from(l);
                break;
            }
            _ => break,
        }
    }
    (text, bases, del)
}

/// The empty value of every optional column (one `\t*` each).
fn push_empty_extras(out: &mut Vec<u8>, o: &FormatOptions) {
    for _ in 0..o.extras.len() + o.tags.len() {
        out.extend_from_slice(b"\t*");
    }
}

/// `print_empty_pileup`: a line for a position no read covers (`-a`).
pub fn empty_line(
    out: &mut Vec<u8>,
    name: &[u8],
    pos: i64,
    n_inputs: usize,
    reference: Option<&[u8]>,
    o: &FormatOptions,
) {
    line_start(out, name, pos, reference);
    for _ in 0..n_inputs {
        out.extend_from_slice(b"\t0\t*\t*");
        push_empty_extras(out, o);
    }
    out.push(b'\n');
}

/// Name, 1-based position and reference base (`N` without one).
pub fn line_start(out: &mut Vec<u8>, name: &[u8], pos: i64, reference: Option<&[u8]>) {
    out.extend_from_slice(name);
    out.push(b'\t');
    push_int(out, pos + 1);
    out.push(b'\t');
    out.push(ref_byte(reference, pos).unwrap_or(b'N'));
}

/// What every input's columns on one line share.
pub struct LineContext<'a> {
    pub pos: i64,
    pub reference: Option<&'a [u8]>,
    pub header: &'a Header,
    pub options: &'a FormatOptions,
}

/// One input's columns: depth, bases, qualities and the optional columns; `column` is empty
/// where the input has no reads at the position. `scratch` holds the bases and qualities.
pub fn input_columns(
    out: &mut Vec<u8>,
    reads: &std::collections::VecDeque<Read>,
    column: &[Entry],
    line: &LineContext<'_>,
    (seq, qual): (&mut Vec<u8>, &mut Vec<u8>),
) {
    let LineContext { pos, reference, header, options: o } = *line;
    seq.clear();
    qual.clear();
    // The quality `-Q` compares with (0 past the read's bases).
    let passes = |e: &Entry| reads[e.read].qual_at(e.qpos) >= o.min_base_quality;
    for e in column {
        let read = &reads[e.read];
        let q = read.qual_at(e.qpos);
        if q >= o.min_base_quality {
            pileup_seq(seq, read, e, pos, reference, o);
            qual.push(if q + 33 < 126 { (q + 33) as u8 } else { 126 });
        }
    }
    out.push(b'\t');
    push_int(out, qual.len() as i64);
    out.push(b'\t');
    if column.is_empty() {
        out.extend_from_slice(b"*\t*");
        push_empty_extras(out, o);
        return;
    }
    out.extend_from_slice(if seq.is_empty() { b"*" } else { seq });
    out.push(b'\t');
    out.extend_from_slice(if qual.is_empty() { b"*" } else { qual });
    for &extra in &o.extras {
        out.push(b'\t');
        let mut n = 0;
        for e in column.iter().filter(|e| passes(e)) {
            let r = RecordRef::new(&reads[e.read].rec);
            if n > 0 && extra != Extra::MapqChar {
                out.push(b',');
            }
            n += 1;
            let name_of = |out: &mut Vec<u8>, tid: i32| match header.ref_name(tid) {
                Some(name) if tid >= 0 => out.extend_from_slice(name),
                _ => out.push(b'*'),
            };
            match extra {
                Extra::MapqChar => out.push((i32::from(r.mapq()) + 33).min(126) as u8),
                Extra::Qpos => push_int(out, e.qpos + 1),
                Extra::Qpos5 => {
                    let p = if r.flag() & flags::REVERSE != 0 {
                        r.l_seq() as i64 - e.qpos + i64::from(e.is_del)
                    } else {
                        e.qpos + 1
                    };
                    push_int(out, p);
                }
                Extra::Qname => out.extend_from_slice(r.read_name()),
                Extra::Flag => push_int(out, i64::from(r.flag())),
                Extra::Rname => name_of(out, r.ref_id()),
                Extra::Pos => push_int(out, r.pos() + 1),
                Extra::Mapq => push_int(out, i64::from(r.mapq())),
                Extra::Rnext => name_of(out, r.next_ref_id()),
                Extra::Pnext => push_int(out, r.next_pos() + 1),
                Extra::Rlen => push_int(out, r.l_seq() as i64),
            }
        }
        if n == 0 {
            out.push(b'*');
        }
    }
    for tag in &o.tags {
        out.push(b'\t');
        let mut n = 0;
        for e in column.iter().filter(|e| passes(e)) {
            let r = RecordRef::new(&reads[e.read].rec);
            if n > 0 {
                out.push(o.sep);
            }
            n += 1;
            let Some(field) = r.aux_get(*tag) else {
                out.push(o.empty);
                continue;
            };
            match field.typed() {
                AuxValue::Str(s) => out.extend_from_slice(s),
                AuxValue::Int(i) => push_int(out, i),
                AuxValue::Float(f) => {
                    out.extend_from_slice(crate::ops::depth::printf_g::g(f, 6).as_bytes())
                }
                AuxValue::Char(c) => out.push(c),
                AuxValue::Array(..) => out.push(b'*'),
            }
        }
        if n == 0 {
            out.push(b'*');
        }
    }
}
