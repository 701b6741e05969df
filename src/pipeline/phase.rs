//! `samtools phase` (samtools 1.24 `phase.c`): the input's reads in file order, filtered as its
//! `readaln` does (and with `-b` queued for writing), piled up as htslib's `bam_plp_auto` (depth
//! cap 8000); each column's genotype called ([`crate::ops::phase::call_site`]), heterozygous
//! sites collected per fragment and phased in sets ([`crate::ops::phase::report`]); with `-b`
//! each queued read goes to `PREFIX.0`, `PREFIX.1` or `PREFIX.chimera` once no later set can
//! change its phase. Command line: [`crate::cli::phase`].

use std::collections::{HashSet, VecDeque};
use std::io::{Read, Write};

use crate::error::Error;
use crate::io::format::OutputFormat;
use crate::io::output_spec::OutputSpec;
use crate::io::sink::{Encoded, RecordSink};
use crate::ops::drand48::Drand48;
use crate::ops::errmod::{ErrorModel, packed_column};
use crate::ops::mpileup::pileup::Pileup;
use crate::ops::phase::algorithm::update_vpos;
use crate::ops::phase::report::{PhaseSettings, output_of, phase_set};
use crate::ops::phase::{Frag, Frags, MAX_VARS, call_site, name_key};
use crate::ops::targetcut::ERR_DEP;
use crate::pipeline::checked_open::open_sequence_worded;
use crate::pipeline::sorted_input::{SortedInput, create_text_output};
use crate::record::layout::flags;
use crate::record::{Header, RecordRef};

pub struct PhaseOptions {
    pub input: String,
    /// `-k`: sites per window.
    pub k: i32,
    /// `-b`: write the reads to `PREFIX.0.EXT`, `PREFIX.1.EXT` and `PREFIX.chimera.EXT`.
    pub prefix: Option<String>,
    /// `-q`: least heterozygote quality of a site.
    pub min_var_lod: i32,
    /// `-Q`: bases under this quality are left out of the calls.
    pub min_baseq: i32,
    /// `-D`: deeper columns are passed over.
    pub max_depth: i32,
    /// Not `-F`.
    pub fix_chimera: bool,
    /// `-A`: ambiguous reads go to the chimera file.
    pub drop_ambiguous: bool,
    /// `-l`: sites to phase whatever their call (samtools' hidden option), `-e`: only those.
    pub sites: Option<String>,
    pub only_listed: bool,
    /// The `@PG` fields for the outputs, unless `--no-PG`.
    pub pg: Option<Vec<(String, String)>>,
    pub format: OutputFormat,
    pub spec: OutputSpec,
}

/// `bam_plp_init`'s depth cap.
const PILEUP_MAX_DEPTH: i64 = 8000;

const COMMENTS: &str = "CC\n\
CC\tDescriptions:\nCC\n\
CC\t  CC      comments\n\
CC\t  PS      start of a phase set\n\
CC\t  FL      filtered region\n\
CC\t  M[012]  markers; 0 for singletons, 1 for phased and 2 for filtered\n\
CC\t  EV      supporting reads; SAM format\n\
CC\t  //      end of a phase set\nCC\n\
CC\tFormats of PS, FL and M[012] lines (1-based coordinates):\nCC\n\
CC\t  PS  chr  phaseSetStart  phaseSetEnd\n\
CC\t  FL  chr  filterStart    filterEnd\n\
CC\t  M?  chr  PS  pos  allele0  allele1  hetIndex  #supports0  #errors0  #supp1  #err1\n\
CC\nCC\n";

/// `loadpos`: `NAME POS` per line (whitespace-separated, POS 1-based, gzip or plain), as
/// `tid << 32 | POS - 1` for the names the header has.
fn load_sites(path: &str, header: &Header) -> Result<HashSet<u64>, Error> {
    let raw = if path == "-" {
        let mut v = Vec::new();
        std::io::stdin().read_to_end(&mut v).map(|_| v)
    } else {
        std::fs::read(path)
    }
    .map_err(|e| {
        Error::Bare(format!(
            "samtools phase: Couldn't open site file '{path}': {}",
            crate::error::c_message(&e)
        ))
    })?;
    let text = if raw.starts_with(&[0x1f, 0x8b]) {
        let mut plain = Vec::new();
        flate2::read::MultiGzDecoder::new(&raw[..])
            .read_to_end(&mut plain)
            .map_err(|e| Error::file(path, e))?;
        plain
    } else {
        raw
    };
    let mut sites = HashSet::new();
    for line in text.split(|&c| c == b'\n') {
        // kstream's tokens: split at every whitespace byte (no skipping of runs).
        let mut fields = line.split(|c| c.is_ascii_whitespace() || *c == 0x0b);
        let Some(name) = fields.next() else { continue };
        let Some(tid) = header.tid(name) else { continue };
        if let Some(pos) = fields.next() {
            let pos = c_atoi(pos);
            sites.insert((tid as u64) << 32 | u64::from((pos - 1) as u32));
        }
    }
    Ok(sites)
}

/// C's `atoi`: leading blanks, a sign, the digits that follow (0 without any).
fn c_atoi(s: &[u8]) -> i32 {
    let s = s.trim_ascii_start();
    let (negative, digits) = match s.first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    let n = digits
        .iter()
        .take_while(|c| c.is_ascii_digit())
        .fold(0i64, |n, &c| (n * 10 + i64::from(c - b'0')).min(i64::from(i32::MAX) + 1));
    (if negative { -n } else { n }) as i32
}

/// The three `-b` outputs and the reads waiting for them.
struct Outputs {
    sinks: Vec<(RecordSink, Encoded)>,
    format: OutputFormat,
    header: Header,
    queue: VecDeque<Vec<u8>>,
    drop_ambiguous: bool,
}

impl Outputs {
    fn open(o: &PhaseOptions, prefix: &str, input_header: &Header) -> Result<Outputs, Error> {
        let mut header = input_header.clone();
        if let Some(pg) = &o.pg {
            crate::pipeline::markdup_pipeline::add_pg(&mut header, pg);
        }
        let mut sinks = Vec::new();
        for middle in ["0", "1", "chimera"] {
            let path = format!("{prefix}.{middle}.{}", o.format.name());
            let sink =
                RecordSink::create(&path, &o.spec, 1, &header, true).map_err(|e| match e {
                    Error::CannotCreate { path, reason } => Error::Bare(format!(
                        "[E::hts_open_format] Failed to open file \"{path}\" : {reason}\n\
                     samtools phase: Failed to open output file '{path}': {reason}"
                    )),
                    e => e,
                })?;
            sinks.push((sink, Encoded::default()));
        }
        Ok(Outputs {
            sinks,
            format: o.format,
            header,
            queue: VecDeque::new(),
            drop_ambiguous: o.drop_ambiguous,
        })
    }

    /// `dump_aln`: the queued reads ending by `min_pos` written where their fragments say.
    fn dump(&mut self, min_pos: i64, frags: &Frags, rng: &mut Drand48) -> Result<(), Error> {
        let is_flip = rng.next_f64() < 0.5;
        while let Some(rec) = self.queue.front() {
            let r = RecordRef::new(rec);
            if r.end_pos() > min_pos {
                break;
            }
            let frag: Option<&Frag> = frags.get(name_key(r.read_name())).map(|k| frags.val(k));
            let (which, tagged) = output_of(frag, self.drop_ambiguous, is_flip, rng);
            let mut rec = self.queue.pop_front().unwrap_or_default();
            if tagged {
                rec.extend_from_slice(b"ZPAY");
            }
            let (sink, enc) = &mut self.sinks[which];
            enc.push_record(&rec, &self.header, self.format);
            if enc.data.len() >= 1 << 20 {
                sink.write(&std::mem::take(enc))?;
            }
        }
        Ok(())
    }

    fn finish(self) -> Result<(), Error> {
        for (mut sink, enc) in self.sinks {
            sink.write(&enc)?;
            sink.finish()?;
        }
        Ok(())
    }
}

/// `readaln`: mapped primary reads, neither QC-failed nor duplicates.
fn next_read(input: &mut SortedInput) -> Result<Option<Vec<u8>>, Error> {
    let skip = flags::UNMAP | flags::SECONDARY | flags::QCFAIL | flags::DUP;
    while let Some(r) = input.current()? {
        let keep = r.flag() & skip == 0;
        let rec = keep.then(|| r.bytes().to_vec());
        input.advance();
        if rec.is_some() {
            return Ok(rec);
        }
    }
    Ok(None)
}

/// `bam_plp_auto`: the next column, queueing each read read for `-b`; `Err` with the line to
/// print when the input fails or is out of order.
fn next_column(
    input: &mut SortedInput,
    plp: &mut Pileup,
    queue: Option<&mut VecDeque<Vec<u8>>>,
) -> Result<Option<(i32, i64)>, String> {
    if let Some(p) = plp.next_column()? {
        return Ok(Some(p));
    }
    if plp.is_finished() {
        return Ok(None);
    }
    let mut queue = queue;
    while let Some(rec) = next_read(input).map_err(|e| e.to_string())? {
        if let Some(q) = queue.as_deref_mut() {
            q.push_back(rec.clone());
        }
        plp.push(rec)?;
        if let Some(p) = plp.next_column()? {
            return Ok(Some(p));
        }
    }
    plp.finish();
    plp.next_column()
}

/// What one run keeps between phase sets.
struct State {
    frags: Frags,
    cns: Vec<u64>,
    vpos: usize,
    vpos_shift: i32,
    rng: Drand48,
    text: Vec<u8>,
}

pub fn run(o: &PhaseOptions) -> Result<(), Error> {
    let path = o.input.as_str();
    let cannot_open = |e: &std::io::Error| {
        let reason = crate::error::c_message(e);
        Error::Bare(format!(
            "[E::hts_open_format] Failed to open file \"{path}\" : {reason}\n\
             samtools phase: Couldn't open '{path}': {reason}"
        ))
    };
    let no_header = format!("[main_phase] Failed to read header for '{path}'");
    // `--reference`/`-T` reach the input as samtools gives them to both sides.
    let reading = crate::io::input_spec::InputSpec::new(1, o.spec.cram.reference.as_deref());
    let opened = open_sequence_worded(path, reading, cannot_open, &no_header)?;
    let header = opened.header.clone();
    let sites = o.sites.as_deref().map(|p| load_sites(p, &header)).transpose()?;
    let only_listed = o.only_listed && sites.is_some();
    let mut outputs = match &o.prefix {
        Some(prefix) => Some(Outputs::open(o, prefix, &header)?),
        None => None,
    };
    // No `-@`: the main thread and one of rayon's global pool, which reads the next group.
    let mut input = SortedInput::whole(path, opened, 2);
    let (mut out, file) = create_text_output("-", "phase")?;
    let write_failed = |e: std::io::Error| Error::io("-", e);
    out.write_all(COMMENTS.as_bytes()).and_then(|_| out.flush()).map_err(write_failed)?;
    let settings = PhaseSettings { k: o.k.max(0) as usize, fix_chimera: o.fix_chimera };
    let em = ErrorModel::new(1.0 - ERR_DEP);
    let mut plp = Pileup::new(PILEUP_MAX_DEPTH, false, false);
    let mut st = State {
        frags: Frags::default(),
        cns: Vec::new(),
        vpos: 0,
        vpos_shift: 0,
        rng: Drand48::default(),
        text: Vec::new(),
    };
    let name_of = |tid: i32| header.ref_name(tid).unwrap_or_default().to_vec();
    let mut bases: Vec<u16> = Vec::new();
    let (mut last_tid, mut tid_seen): (Option<i32>, Option<i32>) = (None, None);
    // One phase set: printed, then the reads it settles written.
    let flush_set = |st: &mut State,
                     outputs: &mut Option<Outputs>,
                     tid: i32,
                     out: &mut Box<dyn Write + Send>|
     -> Result<(), Error> {
        let set = phase_set(
            &mut st.text,
            &name_of(tid),
            st.vpos,
            &st.cns,
            &mut st.frags,
            &settings,
            &mut st.vpos_shift,
        );
        // samtools has printed the set's PS line when the counts fail to fit.
        out.write_all(&st.text).and_then(|_| out.flush()).map_err(write_failed)?;
        st.text.clear();
        let set = set.map_err(|_| {
            Error::Bare(
                "samtools phase: Couldn't allocate memory for counts: Cannot allocate memory"
                    .into(),
            )
        })?;
        if let Some(min_pos) = set {
            match outputs {
                Some(outs) => outs.dump(min_pos, &st.frags, &mut st.rng)?,
                // samtools tosses the set's coin even with nothing to write.
                None => {
                    st.rng.next_f64();
                }
            }
        }
        Ok(())
    };
    let failure = loop {
        let queue = outputs.as_mut().map(|x| &mut x.queue);
        let (tid, pos) = match next_column(&mut input, &mut plp, queue) {
            Ok(Some(p)) => p,
            Ok(None) => break None,
            Err(m) => break Some(m),
        };
        if tid < 0 {
            break None;
        }
        tid_seen = Some(tid);
        if last_tid != Some(tid) {
            st.vpos_shift = 0;
            if let Some(last) = last_tid {
                flush_set(&mut st, &mut outputs, last, &mut out)?;
                update_vpos(i32::MAX, &mut st.frags);
            }
            last_tid = Some(tid);
            st.vpos = 0;
        }
        let in_set = sites
            .as_ref()
            .is_some_and(|s| s.contains(&((tid as u64) << 32 | u64::from(pos as u32))));
        let n = plp.column.len();
        if n as i64 > i64::from(o.max_depth) {
            continue;
        }
        packed_column(&plp, o.min_baseq, &mut bases);
        if bases.is_empty() {
            continue;
        }
        let q = em.likelihoods(&mut bases, &mut st.rng);
        let call = call_site(&q);
        if only_listed && !in_set {
            continue;
        }
        if !in_set && ((call & 0xffff) >> 2) < o.min_var_lod as u32 {
            continue;
        }
        let vpos = st.vpos;
        if st.cns.len() <= vpos {
            st.cns.resize(vpos + 1, 0);
        }
        st.cns[vpos] = (pos as u64) << 32 | u64::from(call);
        let site = st.cns[vpos];
        let mut dophase = true;
        for e in &plp.column {
            if e.is_del || e.is_refskip {
                continue;
            }
            let r = RecordRef::new(&plp.reads[e.read].rec);
            if r.mapq() == 0 {
                continue;
            }
            // `base_at`: an N past the read's bases (`SEQ *`; samtools reads past its record).
            let code = plp.reads[e.read].base_at(e.qpos);
            let b = u64::from(crate::ops::errmod::NT16_INT[usize::from(code)]);
            let allele = if b == site & 3 {
                1
            } else if b == site >> 16 & 3 {
                2
            } else {
                0
            };
            let (k, absent) = st.frags.put(name_key(r.read_name()));
            let f = st.frags.val_mut(k);
            if absent {
                f.seq = [0; MAX_VARS];
                f.beg = r.pos();
                f.end = r.end_pos();
                f.vpos = vpos as i32;
                f.vlen = 1;
                f.seq[0] = allele;
                (f.single, f.phased, f.flip, f.ambig) = (false, false, false, false);
            } else {
                if (vpos as i64 - i64::from(f.vpos) + 1) < MAX_VARS as i64 {
                    f.vlen = (vpos as i32 - f.vpos + 1) as u16;
                    f.seq[usize::from(f.vlen) - 1] = allele;
                    f.end = r.end_pos();
                }
                dophase = false;
            }
        }
        if dophase {
            flush_set(&mut st, &mut outputs, tid, &mut out)?;
            update_vpos(vpos as i32, &mut st.frags);
            st.cns[0] = st.cns[vpos];
            st.vpos = 0;
        }
        st.vpos += 1;
    };
    if let Some(tid) = tid_seen {
        flush_set(&mut st, &mut outputs, tid, &mut out)?;
    }
    out.flush().map_err(write_failed)?;
    drop(out);
    if let Some(f) = file {
        f.commit().map_err(write_failed)?;
    }
    // After a read failure samtools still closes the outputs, then exits 1.
    if let Some(outs) = outputs {
        outs.finish()?;
    }
    if let Some(m) = failure {
        eprintln!("{m}");
        eprintln!("samtools phase: error reading from '{path}'");
        return Err(Error::Failed);
    }
    Ok(())
}
