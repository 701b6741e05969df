//! `samtools depad`: a padded alignment (reference and reads in padded coordinates, `*` pads in
//! the reference) to an unpadded one: CIGARs rewritten with `I`/`P` where reads cross pads,
//! positions mapped onto the unpadded reference, `@SQ LN` shortened (with `-T`). Command line:
//! [`crate::cli::depad`]; record arithmetic: [`crate::ops::depad`].
//!
//! Compatibility (samtools 1.24 `padding.c`): the padded reference comes from a record named
//! as its reference at position 1 (an embedded reference, itself rewritten to one `M`) or from
//! the `-T` FASTA; unmapped records pass untouched; a mate on another reference needs the FASTA.
//! Differences: the `.fai` of `-T` is not written; with `-o` the file appears only on success.

use crate::error::Error;
use crate::io::fasta::Fasta;
use crate::io::format::index_request;
use crate::io::input_spec::InputSpec;
use crate::io::open::Opened;
use crate::io::output_spec::OutputSpec;
use crate::io::sink::{Encoded, RecordSink};
use crate::ops::depad::{UnpadError, position_map, unpad_seq, unpadded_cigar};
use crate::pipeline::checked_open::{Wording, open_sequence_input};
use crate::record::header::{Reference, line_field};
use crate::record::layout::{self, SEQ_CODES, SEQ_NT16, flags};
use crate::record::{Header, RecordRef, edit};

pub struct DepadOptions {
    pub input: String,
    /// `-o` (standard output without).
    pub output: Option<String>,
    /// `-T`: the padded reference FASTA.
    pub reference: Option<String>,
    /// `-T`, `reference=`: the FASTA a CRAM input is decoded against.
    pub cram_reference: Option<String>,
    /// The output's format, level, deflate engine and CRAM settings.
    pub spec: OutputSpec,
    pub write_index: bool,
    /// `@PG` fields (`None` with `--no-PG`).
    pub pg: Option<Vec<(String, String)>>,
}

fn fail(msg: String) -> Error {
    Error::Bare(msg)
}

/// The padded reference `name` from the FASTA, as base codes with 0 for pads
/// (`load_unpadded_ref`); `quoted` puts the name in quotes as `get_unpadded_len` words it.
fn padded_codes(fasta: &Fasta, name: &[u8], len: i64, quoted: bool) -> Result<Vec<u8>, Error> {
    let shown = String::from_utf8_lossy(name);
    let shown = if quoted { format!("'{shown}'") } else { shown.into_owned() };
    let bases = fasta.sequence(name);
    let got = bases.as_ref().map_or(-2, |b| b.len() as i64);
    if got != len {
        if bases.is_none() {
            eprintln!(
                "[W::fai_get_val] Reference {} not found in FASTA file, returning empty sequence",
                String::from_utf8_lossy(name)
            );
        }
        return Err(fail(format!(
            "[depad] ERROR: FASTA sequence {shown} length {got}, expected {len}"
        )));
    }
    let mut codes = Vec::with_capacity(len as usize);
    for &c in bases.iter().flatten() {
        if c == b'-' || c == b'*' {
            codes.push(0);
            continue;
        }
        let code = SEQ_NT16[c as usize];
        if code == 0 {
            return Err(fail(format!(
                "[depad] ERROR: Invalid character {} (ASCII {}) in FASTA sequence {shown}",
                c as char, c as i8
            )));
        }
        codes.push(code);
    }
    Ok(codes)
}

/// The input header with each `@SQ LN` the unpadded length from the FASTA (`fix_header`); a
/// reference the FASTA cannot give keeps its length, with samtools' messages.
fn fix_header(header: &Header, fasta: &Fasta) -> Header {
    let mut refs: Vec<Reference> = header.refs().to_vec();
    for r in refs.iter_mut() {
        match padded_codes(fasta, &r.name, r.len as i64, true) {
            Ok(codes) => r.len = codes.iter().filter(|&&c| c != 0).count() as _,
            Err(Error::Bare(msg)) => {
                eprintln!("{msg}");
                eprintln!(
                    "[depad] ERROR getting unpadded length of '{}', padded length {}",
                    String::from_utf8_lossy(&r.name),
                    r.len
                );
            }
            Err(_) => {}
        }
    }
    let mut text = Vec::with_capacity(header.text().len());
    for line in header.lines() {
        let name = line.starts_with(b"@SQ\t").then(|| line_field(line, b"SN")).flatten();
        match name.and_then(|n| refs.iter().find(|r| r.name == n)) {
            Some(r) => text.extend_from_slice(&with_length(line, r.len as i64)),
            None => text.extend_from_slice(line),
        }
        text.push(b'\n');
    }
    let mut fixed = Header::from_parts(text, refs);
    fixed.rebuild_text();
    fixed
}

/// `line` with its `LN:` value replaced (appended if it has none).
fn with_length(line: &[u8], len: i64) -> Vec<u8> {
    let mut out = Vec::with_capacity(line.len() + 8);
    let mut found = false;
    for (i, field) in line.split(|&b| b == b'\t').enumerate() {
        if i > 0 {
            out.push(b'\t');
        }
        if i > 0 && field.starts_with(b"LN:") && !found {
            out.extend_from_slice(format!("LN:{len}").as_bytes());
            found = true;
        } else {
            out.extend_from_slice(field);
        }
    }
    if !found {
        out.extend_from_slice(format!("\tLN:{len}").as_bytes());
    }
    out
}

/// The padded reference in use and its position map.
struct Depadder<'a> {
    header: &'a Header,
    fasta: Option<&'a Fasta>,
    tid: i32,
    reference: Vec<u8>,
    posmap: Vec<i64>,
    read: Vec<u8>,
}

impl Depadder<'_> {
    fn ref_name(&self, tid: i32) -> String {
        String::from_utf8_lossy(self.header.ref_name(tid).unwrap_or_default()).into_owned()
    }

    fn ref_len(&self, tid: i32) -> i64 {
        self.header.refs().get(tid as usize).map_or(0, |r| r.len as i64)
    }

    /// The padded reference `tid` from the FASTA, `what` naming it in the error.
    fn load(&self, tid: i32, what: &str) -> Result<Vec<u8>, Error> {
        let fasta = self.fasta.expect("callers check for a FASTA");
        let name = self.header.ref_name(tid).unwrap_or_default();
        padded_codes(fasta, name, self.ref_len(tid), false).map_err(|e| {
            if let Error::Bare(m) = e {
                eprintln!("{m}");
            }
            fail(format!("[depad] ERROR: Failed to load {what} from reference FASTA"))
        })
    }

    /// `unpad_seq` into `out`, with samtools' warning and errors.
    fn unpad(r: &RecordRef<'_>, out: &mut Vec<u8>, what: &str) -> Result<(), Error> {
        let name = String::from_utf8_lossy(r.read_name());
        match unpad_seq(r, out) {
            Ok(saw_skip) => {
                if saw_skip {
                    eprintln!("[depad] WARNING: CIGAR op N treated as op D in read {name}");
                }
                Ok(())
            }
            Err(UnpadError::UnexpectedOp(c)) => {
                eprintln!("[depad] ERROR: Didn't expect CIGAR op {} in read {name}", c as char);
                Err(fail(format!(
                    "[depad] ERROR: Problem parsing SEQ and/or CIGAR in {what} {name}"
                )))
            }
        }
    }

    fn mapped(&self, pos: i64) -> Result<i64, Error> {
        usize::try_from(pos).ok().and_then(|p| self.posmap.get(p).copied()).ok_or_else(|| {
            fail(format!("[depad] ERROR: position {} is beyond the padded reference", pos + 1))
        })
    }

    /// Rewrites one mapped record (`bam_pad2unpad`'s loop body).
    fn depad(&mut self, b: &mut Vec<u8>) -> Result<(), Error> {
        let r = RecordRef::new(b);
        let (tid, pos) = (r.ref_id(), r.pos());
        let name = String::from_utf8_lossy(r.read_name()).into_owned();
        let cigar: Vec<u32> = r.cigar().collect();
        if pos == 0 && tid >= 0 && self.header.ref_name(tid) == Some(r.read_name()) {
            // An embedded reference: the padded sequence itself.
            let mut seq = Vec::new();
            Self::unpad(&r, &mut seq, "reference")?;
            if self.ref_len(tid) != seq.len() as i64 {
                return Err(fail(format!(
                    "[depad] ERROR: (Padded) length of '{name}' is {} in BAM header, but {} in embedded reference",
                    self.ref_len(tid),
                    seq.len()
                )));
            }
            if self.fasta.is_some() {
                let from_fasta = self.load(tid, "x").map_err(|_| {
                    fail(format!(
                        "[depad] ERROR: Failed to load embedded reference '{}' from FASTA",
                        self.ref_name(tid)
                    ))
                })?;
                if let Some(i) = (0..seq.len()).find(|&i| seq[i] != from_fasta[i]) {
                    let shown = |c: u8| if c == 0 { '-' } else { SEQ_CODES[c as usize] as char };
                    return Err(fail(format!(
                        "[depad] ERROR: Embedded sequence and reference FASTA don't match for {} base {}, '{}' vs '{}'",
                        self.ref_name(tid),
                        i + 1,
                        shown(seq[i]),
                        shown(from_fasta[i])
                    )));
                }
            }
            self.tid = tid;
            self.posmap = position_map(&seq);
            self.reference = seq;
            edit::set_cigar(b, &[(r.l_seq() as u32) << 4])
                .map_err(|e| fail(format!("[depad] ERROR: Read '{name}': {e}")))?;
        } else if !cigar.is_empty() {
            if tid < 0 {
                return Err(fail(format!("[depad] ERROR: Read '{name}' has CIGAR but no RNAME")));
            }
            if tid != self.tid {
                if self.fasta.is_none() {
                    return Err(fail(format!(
                        "[depad] ERROR: Missing {} embedded reference sequence (and no FASTA file)",
                        self.ref_name(tid)
                    )));
                }
                self.reference = self.load(tid, &format!("'{}'", self.ref_name(tid)))?;
                self.posmap = position_map(&self.reference);
                self.tid = tid;
            }
            let mut read = std::mem::take(&mut self.read);
            Self::unpad(&r, &mut read, "read")?;
            let new =
                unpadded_cigar(&cigar, pos as usize, &read, &self.reference).ok_or_else(|| {
                    fail(format!(
                        "[depad] ERROR: Read '{name}' runs past the end of its padded reference"
                    ))
                })?;
            self.read = read;
            edit::set_cigar(b, &new)
                .map_err(|e| fail(format!("[depad] ERROR: Read '{name}': {e}")))?;
        }
        let r = RecordRef::new(b);
        let (mtid, mpos) = (r.next_ref_id(), r.next_pos());
        if pos != -1 {
            let p = self.mapped(pos)?;
            edit::set_narrow(b, layout::WIDE_POS, p as i32);
        }
        if mtid < 0 || mpos < 0 {
            edit::set_i32(b, layout::NEXT_REF_ID, -1);
            edit::set_narrow(b, layout::WIDE_NEXT_POS, -1);
        } else if mtid == tid {
            let p = self.mapped(mpos)?;
            edit::set_narrow(b, layout::WIDE_NEXT_POS, p as i32);
        } else {
            if self.fasta.is_none() {
                return Err(fail(format!(
                    "[depad] ERROR: Needed reference {} sequence for mate (and no FASTA file)",
                    self.ref_name(mtid)
                )));
            }
            let other = self.load(mtid, &format!("'{}'", self.ref_name(mtid)))?;
            let p = usize::try_from(mpos)
                .ok()
                .and_then(|p| position_map(&other).get(p).copied())
                .ok_or_else(|| {
                fail(format!(
                    "[depad] ERROR: mate position {} is beyond the padded reference",
                    mpos + 1
                ))
            })?;
            edit::set_narrow(b, layout::WIDE_NEXT_POS, p as i32);
            // samtools reloads the read's own reference from the FASTA afterwards.
            self.reference = self.load(tid, &format!("'{}'", self.ref_name(tid)))?;
            self.posmap = position_map(&self.reference);
        }
        let r = RecordRef::new(b);
        let bin = layout::reg2bin(r.pos(), r.end_pos());
        b[layout::BIN..layout::BIN + 2].copy_from_slice(&bin.to_le_bytes());
        Ok(())
    }
}

pub fn run(opts: &DepadOptions) -> Result<(), Error> {
    let fasta = match &opts.reference {
        // samtools goes on without a reference it cannot load.
        Some(path) => Fasta::read_whole(path)
            .inspect_err(|e| {
                eprintln!("[E::fai_path] Failed to build index file for reference file '{path}'");
                eprintln!("{}", e.lines().next().unwrap_or_default());
            })
            .ok(),
        None => None,
    };
    let wording = Wording {
        cannot_open: "samtools depad: failed to open",
        no_header: "[depad] failed to read the header from",
    };
    let path = opts.input.as_str();
    let Opened { mut reader, header, .. } =
        open_sequence_input(path, InputSpec::new(1, opts.cram_reference.as_deref()), &wording)
            .map_err(|e| match e {
                Error::Bare(m) if m.ends_with(&format!("from \"{path}\"")) => Error::Bare(m + "."),
                Error::Bare(m) => Error::Bare(m.replacen(
                    &format!("failed to open \"{path}\": "),
                    &format!("failed to open \"{path}\" for reading: "),
                    1,
                )),
                e => e,
            })?;
    let mut out_header = match &fasta {
        Some(f) => fix_header(&header, f),
        None => {
            eprintln!(
                "[depad] Warning - reference lengths will not be corrected without FASTA reference"
            );
            header.clone()
        }
    };
    if let Some(pg) = &opts.pg {
        let fields: Vec<(&str, &str)> = pg.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        out_header.add_pg("samtools", &fields);
    }
    let output = opts.output.as_deref().unwrap_or("-");
    let (file, index, bai) = index_request(output);
    let mut sink = RecordSink::create(&file, &opts.spec, 1, &out_header, true)?;
    if opts.write_index {
        // htslib's auto_index indexes no stdout and no SAM: samtools stops after the header.
        let refused = if output == "-" {
            Some(Error::Status(1))
        } else {
            sink.write_index(&index, bai, &out_header).err().map(|_| {
                Error::Bare(format!(
                    "samtools auto_index: failed to open index \"{index}\" for writing"
                ))
            })
        };
        if let Some(e) = refused {
            sink.finish()?;
            return Err(e);
        }
    }
    let mut depadder = Depadder {
        header: &header,
        fasta: fasta.as_ref(),
        tid: -1,
        reference: Vec::new(),
        posmap: Vec::new(),
        read: Vec::new(),
    };
    let mut record = Vec::new();
    let mut failure = None;
    while failure.is_none()
        && let Some((batches, warnings)) = reader.read_batches(path)?
    {
        for w in warnings {
            eprintln!("{w}");
        }
        let mut encoded = Encoded::default();
        'batch: for batch in &batches {
            for r in batch.iter() {
                record.clear();
                record.extend_from_slice(r.bytes());
                if r.flag() & flags::UNMAP == 0
                    && let Err(e) = depadder.depad(&mut record)
                {
                    failure = Some(e);
                    break 'batch;
                }
                encoded.push_record(&record, &out_header, opts.spec.format);
            }
        }
        sink.write_owned(encoded)?;
    }
    match failure {
        // samtools keeps what it wrote before the error.
        Some(e) => {
            sink.finish()?;
            Err(e)
        }
        None => sink.finish(),
    }
}
