//! Writing CRAM: raw BAM records in, containers out. The records are cut into containers as
//! htslib cuts them (`seqs_per_slice` records, one slice a container, a new container where the
//! reference changes unless small containers made it mix references), and the containers are encoded side by side on the rayon pool by mdsam's
//! own encoder ([`super::container_out`]); the file definition, header and EOF container are
//! written here.
//!
//! Not noodles' writer: it links any two records of a name in a slice as mates (a supplementary
//! record with its primary, too), so decoders derive mate fields and `TLEN` that differ from
//! the stored ones; it panics on mapped reads without bases; it stores `RG` twice (tag and
//! series); its rANS Nx16 order-1 quality blocks decode to other values in htslib (checked on
//! samtools' `view.001.sam`); and it is single-threaded (2.6× slower than htslib, issue 20).

use std::io::{self, Write};
use std::sync::Arc;

use noodles_fasta as fasta;
use rayon::prelude::*;

use super::block_method::{Choice, Learned, Profile, TrialSizes, ends_trials, is_trial};
use super::container_out::{ReferenceMode, Sources, encode};
use super::file_header::{M5Of, file_definition, header_container, md5_hex, with_checksums};
use super::reference::{ReferenceFinder, repository};
use crate::io::cram_header::eof_template;
use crate::record::header::line_field;
use crate::record::{Header, RecordRef};

/// The CRAM output options (`-O cram,...`, `--output-fmt-option`), part of the command's
/// [`crate::io::output_spec::OutputSpec`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CramSettings {
    pub version: (u8, u8),
    /// Records a slice (and a container: one slice each, as htslib's default).
    pub seqs_per_slice: usize,
    /// Why an option given cannot be honoured; a CRAM output then fails with it.
    pub refused: Option<String>,
    /// `no_ref`: bases stored verbatim, no reference read (it wins over `embed_ref`, as in
    /// htslib).
    pub no_ref: bool,
    /// `embed_ref`: 0 none, 1 the reference's span in each slice, 2 one made from the reads;
    /// `None` (htslib's -1, automatic) is 0 until a reference is missing, then 2.
    pub embed_ref: Option<u8>,
    /// `level=N` and the `fast`, `small` and `archive` profiles: the methods tried and levels.
    pub profile: Profile,
    /// `--reference`, `-T` or `reference=`: the FASTA the slices are encoded against and the
    /// header's `M5`s are taken from (else `REF_CACHE`, `REF_PATH`, `UR`).
    pub reference: Option<String>,
}

/// samtools 1.24 writes CRAM 3.1 with 10 000 records a slice.
impl Default for CramSettings {
    fn default() -> Self {
        CramSettings {
            version: (3, 1),
            seqs_per_slice: 10_000,
            refused: None,
            no_ref: false,
            embed_ref: None,
            profile: Profile::default(),
            reference: None,
        }
    }
}

impl CramSettings {
    /// How the slices use the reference.
    pub fn reference_mode(&self) -> ReferenceMode {
        match (self.no_ref, self.embed_ref.unwrap_or(0)) {
            (true, _) => ReferenceMode::Verbatim,
            (false, 0) => ReferenceMode::External,
            (false, 2) => ReferenceMode::Consensus,
            (false, _) => ReferenceMode::Embedded,
        }
    }

    /// Takes one output format option (`version=3.0`, `seqs_per_slice=N`, ...), as htslib takes
    /// them whatever the format; only a CRAM output reads them. Options that change nothing
    /// mdsam writes are ignored. Numbers are read as C's `atoi` reads them (htslib's), so a word
    /// is 0.
    pub fn apply(&mut self, opt: &str) {
        let (name, value) = opt.split_once('=').unwrap_or((opt, "1"));
        match name.to_ascii_lowercase().as_str() {
            "version" => match value {
                "3.0" | "3" => {
                    self.version = (3, 0);
                    self.profile.nx16 = false;
                }
                // Asked for by name, 3.1 is written with htslib's 3.1 methods.
                "3.1" => {
                    self.version = (3, 1);
                    self.profile.nx16 = true;
                }
                v => {
                    let why = format!(
                        "CRAM version {v} output is not supported by mdsam (3.0 and 3.1 are)"
                    );
                    self.refused = Some(why);
                }
            },
            "seqs_per_slice" => match value.parse::<usize>() {
                Ok(n) if n > 0 => self.seqs_per_slice = n,
                _ => self.refused = Some(format!("invalid seqs_per_slice \"{value}\"")),
            },
            "no_ref" => self.no_ref = atoi(value) != 0,
            "level" => self.profile.level = Some(atoi(value).clamp(0, 12) as u32),
            "use_bzip2" => self.profile.bzip2 = atoi(value) != 0,
            "use_lzma" => self.profile.use_lzma = atoi(value) != 0,
            "use_arith" => self.profile.use_arith = atoi(value) != 0,
            // htslib's `HTS_OPT_PROFILE` for CRAM: a level unless one was given, the slice
            // size, and bzip2 (small, archive) and xz (archive above level 7) as methods. The
            // level is the one set when `archive` is read: `archive,level=9` uses no xz.
            "fast" => {
                self.profile.level.get_or_insert(1);
                self.seqs_per_slice = 10_000;
            }
            "small" => {
                self.profile.level.get_or_insert(6);
                self.profile.bzip2 = true;
                self.seqs_per_slice = 25_000;
            }
            "archive" => {
                let level = *self.profile.level.get_or_insert(7);
                self.profile.use_lzma |= level > 7;
                self.profile.bzip2 = true;
                self.profile.archive = true;
                self.seqs_per_slice = 100_000;
            }
            "embed_ref" => match atoi(value) {
                n if n <= 0 => self.embed_ref = Some(0),
                2 => self.embed_ref = Some(2),
                _ => self.embed_ref = Some(1),
            },
            "reference" => self.reference = Some(value.to_string()),
            _ => {}
        }
    }
}

/// C's `atoi`: the leading optional sign and digits of `text`, 0 when there are none.
fn atoi(text: &str) -> i64 {
    let text = text.trim_start();
    let (sign, digits) = match text.strip_prefix('-') {
        Some(rest) => (-1, rest),
        None => (1, text.strip_prefix('+').unwrap_or(text)),
    };
    let end = digits.find(|c: char| !c.is_ascii_digit()).unwrap_or(digits.len());
    sign * digits[..end].parse::<i64>().unwrap_or(0)
}

/// A CRAM file being written.
pub struct Writer {
    out: Box<dyn Write + Send>,
    shared: Arc<Shared>,
    version: (u8, u8),
    seqs_per_slice: usize,
    mode: ReferenceMode,
    /// Containers are encoded side by side, twice this many at a time.
    threads: usize,
    /// Framed BAM records (`block_size` first) of the containers not yet written.
    pending: Vec<u8>,
    /// Complete containers in `pending`: byte ranges and record counts.
    cuts: Vec<(std::ops::Range<usize>, u64)>,
    open: OpenContainer,
    /// Containers hold records of several references (one multi-reference slice each).
    mixed_references: bool,
    /// A record came before the one written last (reference, then position): what that was.
    unsorted: bool,
    last_key: (u32, i64),
    /// Records of the last container closed.
    last_records: u64,
    /// Records in the containers written so far (the next container's record counter).
    written: u64,
    /// Containers written so far (the next container's number).
    containers: u64,
    /// The block methods the last trial containers chose, and the current trials' sizes.
    learned: Learned,
    trials: TrialSizes,
    profile: Profile,
}

/// What every container's encoding shares: the references (by id, cached by noodles'
/// repository) and the read groups (by ID, their position in the header).
struct Shared {
    names: Vec<Vec<u8>>,
    lengths: Vec<u64>,
    repository: fasta::Repository,
    read_groups: std::collections::HashMap<Vec<u8>, usize>,
}

/// The container being filled: where it starts in `pending`, its records, its reference.
#[derive(Default)]
struct OpenContainer {
    start: usize,
    records: u64,
    /// The reference of the last record, and how many times it changed (from 1).
    reference_id: i32,
    references: u32,
}

impl Writer {
    /// Writes the file definition and header (with the `M5`s and `UR`s htslib adds) to `out`;
    /// `name` is the output's name, as htslib records it in the file definition.
    pub fn new(
        mut out: Box<dyn Write + Send>,
        header: &Header,
        name: &str,
        settings: &CramSettings,
        threads: usize,
    ) -> Result<Writer, String> {
        if let Some(why) = &settings.refused {
            return Err(why.clone());
        }
        let fasta = settings.reference.clone();
        let shared = Shared::new(header, fasta.clone());
        let mut mode = settings.reference_mode();
        if mode == ReferenceMode::External
            && settings.embed_ref.is_none()
            && let Some(missing) = shared.first_missing(header)
        {
            warn_generating_reference(&missing);
            mode = ReferenceMode::Consensus;
        }
        let start = file_start(header, &shared, fasta.as_deref(), settings.version, mode, name)?;
        let profile = Profile { version_3_1: settings.version >= (3, 1), ..settings.profile };
        out.write_all(&start).map_err(|e| e.to_string())?;
        Ok(Writer {
            out,
            shared: Arc::new(shared),
            version: settings.version,
            seqs_per_slice: settings.seqs_per_slice,
            mode,
            threads: threads.max(1),
            pending: Vec::new(),
            cuts: Vec::new(),
            open: OpenContainer::default(),
            mixed_references: false,
            unsorted: false,
            last_key: (0, i64::MIN),
            last_records: 0,
            written: 0,
            containers: 0,
            learned: Learned::new(profile),
            trials: TrialSizes::new(profile),
            profile,
        })
    }

    /// Writes framed BAM records (each `block_size` first).
    pub fn write_framed(&mut self, framed: &[&[u8]]) -> io::Result<()> {
        for record in framed {
            self.push(record);
        }
        if self.cuts.len() >= 2 * self.threads {
            self.write_cut()?;
        }
        Ok(())
    }

    /// Adds one framed record, closing the open container first when it is full or, unless
    /// containers mix references, when the reference changes.
    fn push(&mut self, framed: &[u8]) {
        let record = RecordRef::new(&framed[4..]);
        let reference_id = record.ref_id();
        // Unplaced records (-1) sort last.
        let key = (reference_id as u32, record.pos());
        self.unsorted |= key < self.last_key;
        self.last_key = key;
        let open = &self.open;
        let full = open.records >= self.seqs_per_slice as u64;
        let new_reference = reference_id != open.reference_id;
        if open.records > 0 && (full || (new_reference && !self.mixed_references)) {
            self.choose_mixing();
            self.close_open();
        }
        if self.open.records == 0 || new_reference {
            self.open.reference_id = reference_id;
            self.open.references += 1;
        }
        self.open.records += 1;
        self.pending.extend_from_slice(framed);
    }

    /// Whether the next containers mix references, as htslib decides it (`cram_put_bam_seq`):
    /// from two containers in a row under a quarter full (name-sorted input, or many small
    /// contigs) until a full one holds a single reference. A slice embeds one reference, so
    /// containers that embed never mix.
    fn choose_mixing(&mut self) {
        let embedding = match self.mode {
            ReferenceMode::Embedded => true,
            // htslib gives up generating references for unsorted input (its slices go
            // verbatim), and then mixes references as without one.
            ReferenceMode::Consensus => !self.unsorted,
            _ => false,
        };
        if embedding {
            return;
        }
        let small = (self.seqs_per_slice / 4 + 10) as u64;
        let records = self.open.records;
        if !self.mixed_references && records < small && (1..small).contains(&self.last_records) {
            self.mixed_references = true;
        } else if self.mixed_references && self.open.references <= 1 {
            self.mixed_references = false;
        }
    }

    fn close_open(&mut self) {
        self.cuts.push((self.open.start..self.pending.len(), self.open.records));
        self.last_records = self.open.records;
        self.open = OpenContainer { start: self.pending.len(), ..Default::default() };
    }

    /// Encodes the complete containers side by side and writes them in order: the trial
    /// containers among them first, so the ones after use what the trials chose.
    fn write_cut(&mut self) -> io::Result<()> {
        let shared = &self.shared;
        let pending = &self.pending;
        let mut jobs = Vec::with_capacity(self.cuts.len());
        for (range, n) in &self.cuts {
            jobs.push(Job {
                range: range.clone(),
                counter: self.written,
                ordinal: self.containers,
            });
            self.written += n;
            self.containers += 1;
        }
        let bases = |tid: i32| shared.bases(tid);
        let read_group_index = |id: &[u8]| shared.read_groups.get(id).copied();
        let reference_length = |tid: i32| shared.length(tid);
        let sources = Sources {
            bases: &bases,
            read_group_index: &read_group_index,
            mode: self.mode,
            reference_length: &reference_length,
        };
        let mut encoded: Vec<Option<Result<Vec<u8>, String>>> = vec![None; jobs.len()];
        let trial_jobs: Vec<usize> =
            (0..jobs.len()).filter(|&i| is_trial(jobs[i].ordinal)).collect();
        let profile = self.profile;
        let trial_results: Vec<(Result<Vec<u8>, String>, TrialSizes)> = trial_jobs
            .par_iter()
            .map(|&i| {
                let job = &jobs[i];
                let mut sizes = TrialSizes::new(profile);
                let container = encode_guarded(
                    &pending[job.range.clone()],
                    &sources,
                    job.counter,
                    Choice::Trial(&mut sizes),
                );
                (container, sizes)
            })
            .collect();
        for (&i, (container, sizes)) in trial_jobs.iter().zip(trial_results) {
            self.trials.add(&sizes);
            if ends_trials(jobs[i].ordinal) {
                self.learned = self.trials.choose();
            }
            encoded[i] = Some(container);
        }
        let learned = &self.learned;
        let rest: Vec<(usize, Result<Vec<u8>, String>)> = (0..jobs.len())
            .into_par_iter()
            .filter(|&i| encoded[i].is_none())
            .map(|i| {
                let job = &jobs[i];
                let container = &pending[job.range.clone()];
                (i, encode_guarded(container, &sources, job.counter, Choice::Learned(learned)))
            })
            .collect();
        for (i, container) in rest {
            encoded[i] = Some(container);
        }
        for container in encoded.into_iter().flatten() {
            let container = container.map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))?;
            self.out.write_all(&container)?;
        }
        let done = self.cuts.last().map_or(0, |(r, _)| r.end);
        self.cuts.clear();
        self.pending.drain(..done);
        self.open.start -= done;
        Ok(())
    }

    /// Writes the last containers and the EOF container; returns the destination.
    pub fn finish(mut self) -> io::Result<Box<dyn Write + Send>> {
        if self.open.records > 0 {
            self.close_open();
        }
        self.write_cut()?;
        let eof = eof_template(self.version.0, self.version.1).unwrap_or_default();
        self.out.write_all(eof)?;
        Ok(self.out)
    }
}

/// htslib's warnings when it finds no reference for an `@SQ` without `M5` and, as no
/// `embed_ref` was chosen, goes on with `embed_ref=2` (`cram_write_SAM_hdr`).
fn warn_generating_reference(name: &[u8]) {
    let name = String::from_utf8_lossy(name);
    eprintln!("[W::cram_get_ref] Failed to populate reference \"{name}\"");
    eprintln!(
        "[W::cram_get_ref] See https://www.htslib.org/doc/reference_seqs.html for further \
         suggestions"
    );
    eprintln!("[W::cram_write_SAM_hdr] No M5 tags present and could not find reference");
    eprintln!("[W::cram_write_SAM_hdr] Enabling embed_ref=2 option");
    eprintln!(
        "[W::cram_write_SAM_hdr] NOTE: the CRAM file will be bigger than using an external \
         reference"
    );
}

impl Shared {
    /// The first `@SQ` without `M5` whose bases are found nowhere, in header order: where
    /// htslib, writing the header, gives up on the reference.
    fn first_missing(&self, header: &Header) -> Option<Vec<u8>> {
        let lines = header.lines().filter(|l| l.starts_with(b"@SQ\t"));
        let unchecked = lines.filter(|l| line_field(l, b"M5").is_none());
        let names = unchecked.filter_map(|l| line_field(l, b"SN"));
        names.map(<[u8]>::to_vec).find(|name| self.bases_named(name).is_err())
    }

    /// The length (`LN`) of reference `tid`, 0 when the header lacks it.
    fn length(&self, tid: i32) -> i64 {
        usize::try_from(tid).ok().and_then(|t| self.lengths.get(t)).map_or(0, |&n| n as i64)
    }

    /// The bases of reference `tid`, or why there are none.
    fn bases(&self, tid: i32) -> Result<Arc<fasta::record::Sequence>, String> {
        let name = usize::try_from(tid).ok().and_then(|t| self.names.get(t));
        let name =
            name.ok_or_else(|| format!("a record names reference #{tid}, which the header lacks"))?;
        self.bases_named(name)
    }

    /// The bases of the reference called `name`, or why there are none.
    fn new(header: &Header, fasta: Option<String>) -> Shared {
        let finder = Arc::new(ReferenceFinder::new(header, fasta));
        let mut read_groups = std::collections::HashMap::new();
        let ids =
            header.lines().filter(|l| l.starts_with(b"@RG\t")).filter_map(|l| line_field(l, b"ID"));
        for id in ids {
            let next = read_groups.len();
            read_groups.entry(id.to_vec()).or_insert(next);
        }
        Shared {
            names: header.refs().iter().map(|r| r.name.clone()).collect(),
            lengths: header.refs().iter().map(|r| r.len).collect(),
            repository: repository(finder),
            read_groups,
        }
    }

    fn bases_named(&self, name: &[u8]) -> Result<Arc<fasta::record::Sequence>, String> {
        match self.repository.get(name) {
            Some(Ok(bases)) => Ok(bases),
            Some(Err(e)) => Err(e.to_string()),
            None => Err(format!("no reference sequence for {}", String::from_utf8_lossy(name))),
        }
    }
}

/// One container to encode: its records in `pending`, its record counter and its number.
struct Job {
    range: std::ops::Range<usize>,
    counter: u64,
    ordinal: u64,
}

/// [`encode`], with a panic (a bug) turned into an error rather than a crash.
/// The file definition and header container htslib writes for `header` at `version`, the `M5`s
/// added through `shared`'s repository (the one the containers are encoded against).
fn file_start(
    header: &Header,
    shared: &Shared,
    fasta: Option<&str>,
    version: (u8, u8),
    mode: ReferenceMode,
    name: &str,
) -> Result<Vec<u8>, String> {
    let m5_of = |name: &[u8]| shared.bases_named(name).map(|s| md5_hex((*s).as_ref()));
    let m5_of: &M5Of<'_> = &m5_of;
    let reads_reference = matches!(mode, ReferenceMode::External | ReferenceMode::Embedded);
    let text = with_checksums(header, reads_reference.then_some(m5_of), fasta)?;
    let mut start = file_definition(version, name);
    start.extend_from_slice(&header_container(&text, version.0));
    Ok(start)
}

/// What `reheader` writes before the containers it copies as they are (samtools'
/// `cram_reheader`): the file start [`Writer::new`] writes, at the input's `version`.
pub fn reheadered_start(header: &Header, name: &str, version: (u8, u8)) -> Result<Vec<u8>, String> {
    // samtools reheader takes no reference: the `M5`s come from REF_CACHE, REF_PATH or `UR`.
    let shared = Shared::new(header, None);
    file_start(header, &shared, None, version, ReferenceMode::External, name)
}

fn encode_guarded(
    framed: &[u8],
    sources: &Sources<'_>,
    counter: u64,
    choice: Choice<'_>,
) -> Result<Vec<u8>, String> {
    super::guard::quietly(|| encode(framed, sources, counter, choice))
        .unwrap_or_else(|| Err("internal: the CRAM encoder failed on a container".into()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings(options: &str) -> CramSettings {
        let mut s = CramSettings::default();
        options.split(',').for_each(|o| s.apply(o));
        s
    }

    #[test]
    fn profiles_set_level_slices_and_methods_in_option_order() {
        let s = settings("seqs_per_slice=500,archive,level=9");
        assert_eq!(s.seqs_per_slice, 100_000);
        assert_eq!(s.profile, Profile { level: Some(9), bzip2: true, archive: true, ..s.profile });
        assert!(!s.profile.use_lzma && settings("level=8,archive").profile.use_lzma);
        let s = settings("level=3,small,seqs_per_slice=700");
        assert_eq!((s.seqs_per_slice, s.profile.level, s.profile.bzip2), (700, Some(3), true));
        assert_eq!(settings("fast").profile.level, Some(1));
        assert_eq!(settings("version=3.0").profile, Profile::default());
        let s = settings("use_bzip2=1,use_lzma=1,use_arith=0");
        assert!(s.profile.bzip2 && s.profile.use_lzma && !s.profile.use_arith);
    }
}
