//! Which compression method each external block of a CRAM container gets, learned as htslib
//! learns it (`cram_compress_block2`: a few trial blocks try every method, the ones after use
//! the winner until the next trial), but scheduled by container number, so the bytes written do
//! not depend on the thread count or on how the input arrived.
//!
//! Trying rANS order 0, order 1 and gzip on every block took half the encoder's CPU time; a data
//! series keeps its character through a file, so the winner of a few containers holds for the
//! next ones (measured: the file stays within 0.1 % of trying every method on every block).

use std::collections::HashMap;

use super::records_out::id;

/// Block compression methods as the block header names them (§8.1).
pub const RAW: u8 = 0;
pub const GZIP: u8 = 1;
pub const BZIP2: u8 = 2;
pub const LZMA: u8 = 3;
pub const RANS: u8 = 4;
pub const RANS_NX16: u8 = 5;
pub const ARITH: u8 = 6;
pub const TOK3: u8 = 8;

/// What `level=N` and the `small` and `archive` profiles add (htslib's `fd->level`, `use_bz2`,
/// `use_lzma`). With none of them the methods and levels are mdsam's defaults, unchanged.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Profile {
    /// The compression level given or set by a profile.
    pub level: Option<u32>,
    pub bzip2: bool,
    /// The `archive` profile: in CRAM 3.1 the arithmetic coder.
    pub archive: bool,
    /// xz: `use_lzma=1`, or `archive` read at a level above 7.
    pub use_lzma: bool,
    /// `use_arith=1`: the arithmetic coder whatever the profile.
    pub use_arith: bool,
    /// The file is CRAM 3.1 (its codecs may be used).
    pub version_3_1: bool,
    /// `version=3.1` was asked for: htslib's 3.1 methods (rANS Nx16 with its transforms, the
    /// name tokeniser) replace rANS 4x8, tried and weighed as htslib does. mdsam's default
    /// output, also 3.1, keeps its own faster choice.
    pub nx16: bool,
}

impl Profile {
    /// Whether every method is tried on every data series, as htslib does from level 5 (its
    /// default, which mdsam's default trims for speed; a profile asks for size).
    fn tries_everything(self) -> bool {
        self.level.is_some() || self.bzip2 || self.archive || self.use_lzma || self.use_arith
    }

    fn arith(self) -> bool {
        (self.archive || self.use_arith) && self.version_3_1
    }

    fn lzma(self) -> bool {
        self.use_lzma
    }

    fn nx16(self) -> bool {
        self.nx16 && self.version_3_1
    }

    /// htslib's relative cost of a method (`meth_cost` in `cram_compress_block3`), by which
    /// the trials' sizes are scaled before the smallest is chosen: less weight as the level
    /// rises, none above 7.
    fn cost(self, method: Method) -> f64 {
        let cost = match method {
            Method::Raw | Method::NxOrder0 | Method::NxRle | Method::NxPack => 1.0,
            Method::Gzip | Method::ArithOrder0 | Method::ArithOrder1 => 1.04,
            Method::Bzip2 => 1.07,
            Method::Lzma => 1.08,
            Method::Tok3 => 1.05,
            Method::GzipFast | Method::NxOrder1 | Method::NxPackRleOrder1 => 1.01,
            Method::NxStripe => 1.03,
            Method::RansOrder0 => 1.0,
            Method::RansOrder1 => 1.01,
        };
        match self.level.unwrap_or(5) {
            0..=1 => 1.0 + (cost - 1.0) * 4.0,
            2..=3 => cost,
            4..=6 => 1.0 + (cost - 1.0) / 2.0,
            7 => 1.0 + (cost - 1.0) / 3.0,
            _ => 1.0,
        }
    }

    /// htslib's `libdeflate_deflate` level for CRAM level `l`: `l * 1.23`, one more from 8,
    /// at most 12 (5 → 6, 7 → 9, 9 → 12); mdsam's default, 6, is its default level 5's.
    fn gzip_level(self) -> i32 {
        self.level.map_or(6, |l| {
            let l = (l.max(1) as f64 * 1.23) as i32;
            (l + i32::from(l >= 8)).min(12)
        })
    }

    /// bzip2 and xz take levels 1 to 9.
    fn level_1_to_9(self) -> u32 {
        self.level.unwrap_or(6).clamp(1, 9)
    }
}

/// Every `TRIAL_SPAN`-th container starts `TRIALS` trial containers (htslib: a trial of 3
/// blocks every 70).
const TRIAL_SPAN: u64 = 64;
const TRIALS: u64 = 3;

/// A way to store a block.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Method {
    Raw,
    RansOrder0,
    RansOrder1,
    Gzip,
    Bzip2,
    Lzma,
    ArithOrder0,
    ArithOrder1,
    /// gzip at level 1 (htslib's `GZIP_1`).
    GzipFast,
    /// rANS Nx16 as htslib's `RANS_PR0`, `PR1`, `PR64` (runs), `PR9` (4 stripes, order 1),
    /// `PR128` (packed) and `PR193` (packed, runs, order 1).
    NxOrder0,
    NxOrder1,
    NxRle,
    NxStripe,
    NxPack,
    NxPackRleOrder1,
    /// The name tokeniser.
    Tok3,
}

const METHODS: [Method; 16] = [
    Method::Raw,
    Method::RansOrder0,
    Method::RansOrder1,
    Method::Gzip,
    Method::Bzip2,
    Method::Lzma,
    Method::ArithOrder0,
    Method::ArithOrder1,
    Method::GzipFast,
    Method::NxOrder0,
    Method::NxOrder1,
    Method::NxRle,
    Method::NxStripe,
    Method::NxPack,
    Method::NxPackRleOrder1,
    Method::Tok3,
];

/// Stored sizes, one a method.
type Sizes = [u64; METHODS.len()];

impl Method {
    fn index(self) -> usize {
        self as usize
    }

    /// Whether this method is worth trying on the data series `content_id`. Quality scores try
    /// rANS order 1 and gzip, as htslib's default profile: gzip wins on binned or old-style
    /// qualities (peer case cramsize-01's QS: 57.7 KB gzip against 60.0 KB rANS), and only
    /// trial containers try it. Otherwise gzip is tried only on text-like blocks (names,
    /// clipped, inserted and verbatim bases, tags), where it wins: tried on the integer series
    /// too it took a fifth of the encoder's time and saved nothing. Verbatim bases of
    /// overlapping reads repeat, which gzip finds (a third of rANS's size).
    fn tried_on(self, content_id: i32, profile: Profile) -> bool {
        if profile.nx16() {
            return self.tried_at_3_1(content_id, profile);
        }
        match self {
            Method::Bzip2 => return profile.bzip2,
            Method::Lzma => return profile.lzma(),
            Method::ArithOrder0 | Method::ArithOrder1 => return profile.arith(),
            // htslib's 3.1 methods only where `version=3.1` asks for them.
            Method::GzipFast | Method::Tok3 => return false,
            Method::NxOrder0 | Method::NxOrder1 | Method::NxRle | Method::NxStripe => return false,
            Method::NxPack | Method::NxPackRleOrder1 => return false,
            _ if profile.tries_everything() => return true,
            _ => {}
        }
        let quality = content_id == id::QS;
        let text = matches!(content_id, id::RN | id::SC | id::IN | id::BB | id::BB_LEN)
            || content_id > 0xff;
        match self {
            Method::Raw | Method::RansOrder1 => true,
            Method::RansOrder0 => !quality,
            Method::Gzip => text || quality,
            _ => false,
        }
    }

    /// htslib's methods for CRAM 3.1 (`cram_compress_slice`): rANS Nx16 in its six variants
    /// and gzip at the level and at 1 on every series but the read names, which try gzip and
    /// the name tokeniser instead; bzip2, xz and the arithmetic coder where asked for.
    fn tried_at_3_1(self, content_id: i32, profile: Profile) -> bool {
        let names = content_id == id::RN;
        match self {
            Method::Raw | Method::Gzip | Method::GzipFast => true,
            Method::Bzip2 => profile.bzip2,
            Method::Lzma => profile.lzma(),
            Method::ArithOrder0 | Method::ArithOrder1 => profile.arith(),
            Method::RansOrder0 | Method::RansOrder1 => false,
            Method::Tok3 => names,
            Method::NxOrder0 | Method::NxOrder1 | Method::NxRle | Method::NxStripe => !names,
            Method::NxPack | Method::NxPackRleOrder1 => !names,
        }
    }

    /// The rANS Nx16 flags of an Nx16 method.
    fn nx16_flags(self) -> u8 {
        use super::rans_nx16_encode::{ORDER1, PACK, RLE, STRIPE};
        match self {
            Method::NxOrder1 => ORDER1,
            Method::NxRle => RLE,
            Method::NxStripe => STRIPE | ORDER1,
            Method::NxPack => PACK,
            Method::NxPackRleOrder1 => PACK | RLE | ORDER1,
            _ => 0,
        }
    }

    /// `data` stored this way: the method byte and the stored bytes (`RAW` and the data where
    /// the method cannot code it).
    fn apply(self, data: &[u8], profile: Profile) -> (u8, Vec<u8>) {
        let or_raw = |byte: u8, packed: Option<Vec<u8>>| match packed {
            Some(packed) => (byte, packed),
            None => (RAW, data.to_vec()),
        };
        match self {
            Method::Raw => (RAW, data.to_vec()),
            Method::RansOrder0 => (RANS, super::rans::encode(data, false)),
            Method::RansOrder1 => (RANS, super::rans::encode(data, true)),
            Method::Gzip => (GZIP, gzip(data, profile.gzip_level())),
            Method::Bzip2 => (BZIP2, bzip2(data, profile.level_1_to_9())),
            Method::Lzma => (LZMA, xz(data, profile.level_1_to_9())),
            Method::ArithOrder0 => (ARITH, super::arith_dynamic::encode(data, false)),
            Method::ArithOrder1 => (ARITH, super::arith_dynamic::encode(data, true)),
            Method::GzipFast => (GZIP, gzip(data, 1)),
            Method::NxOrder0
            | Method::NxOrder1
            | Method::NxRle
            | Method::NxStripe
            | Method::NxPack
            | Method::NxPackRleOrder1 => {
                or_raw(RANS_NX16, super::rans_nx16_encode::compress(data, self.nx16_flags(), true))
            }
            Method::Tok3 => or_raw(TOK3, super::tok3_encode::encode(data)),
        }
    }
}

/// Whether container number `ordinal` (from 0, in file order) is a trial container.
pub fn is_trial(ordinal: u64) -> bool {
    ordinal % TRIAL_SPAN < TRIALS
}

/// Whether container `ordinal` is the last trial of its span, after which a choice is made.
pub fn ends_trials(ordinal: u64) -> bool {
    ordinal % TRIAL_SPAN == TRIALS - 1
}

/// The stored sizes each method gave each data series in trial containers.
#[derive(Debug, Default)]
pub struct TrialSizes {
    sizes: HashMap<i32, Sizes>,
    profile: Profile,
}

impl TrialSizes {
    pub fn new(profile: Profile) -> TrialSizes {
        TrialSizes { sizes: HashMap::new(), profile }
    }

    /// Adds another trial container's sizes.
    pub fn add(&mut self, other: &TrialSizes) {
        for (&content_id, sizes) in &other.sizes {
            let total = self.sizes.entry(content_id).or_insert([0; METHODS.len()]);
            // An untried method's size is `u64::MAX`: the totals saturate (a plain sum
            // overflowed, a panic in debug builds, once two containers' trials were added).
            for (t, s) in total.iter_mut().zip(sizes) {
                *t = t.saturating_add(*s);
            }
        }
    }

    /// Each data series' method of smallest total size; the sizes are then cleared.
    pub fn choose(&mut self) -> Learned {
        let profile = self.profile;
        let chosen = self.sizes.drain().map(|(content_id, sizes)| {
            let tried = METHODS.into_iter().filter(|m| m.tried_on(content_id, profile));
            let best = if profile.nx16() {
                let weighed = |m: &Method| sizes[m.index()] as f64 * profile.cost(*m);
                tried.min_by(|a, b| weighed(a).total_cmp(&weighed(b)))
            } else {
                tried.min_by_key(|m| sizes[m.index()])
            };
            let best = best.unwrap_or(Method::Raw);
            (content_id, best)
        });
        Learned { chosen: chosen.collect(), profile }
    }
}

/// The method chosen for each data series by the last trials.
#[derive(Debug, Default)]
pub struct Learned {
    chosen: HashMap<i32, Method>,
    profile: Profile,
}

impl Learned {
    /// Nothing learned yet.
    pub fn new(profile: Profile) -> Learned {
        Learned { chosen: HashMap::new(), profile }
    }
}

/// How a container picks its blocks' methods.
pub enum Choice<'a> {
    /// Try every method on every block, keep the smallest, and record the sizes.
    Trial(&'a mut TrialSizes),
    /// Use the learned method (every method for a data series the trials did not see).
    Learned(&'a Learned),
}

impl Choice<'_> {
    /// `data` of data series `content_id` compressed: the method byte and the stored bytes.
    /// Short blocks stay raw; a method that does not shrink the data gives way to raw.
    pub fn compress(&mut self, data: &[u8], content_id: i32) -> (u8, Vec<u8>) {
        if data.len() < 16 {
            return (RAW, data.to_vec());
        }
        let profile = match self {
            Choice::Trial(trials) => trials.profile,
            Choice::Learned(learned) => learned.profile,
        };
        if let Choice::Learned(learned) = self
            && let Some(&method) = learned.chosen.get(&content_id)
        {
            let (byte, packed) = method.apply(data, profile);
            // A method that cannot code this block (the name tokeniser on a name it refuses)
            // gives way to trying them all, as htslib redoes a trial.
            if byte != RAW || method == Method::Raw {
                let shrunk = packed.len() < data.len();
                return if shrunk { (byte, packed) } else { (RAW, data.to_vec()) };
            }
        }
        let mut sizes = [u64::MAX; METHODS.len()];
        let mut best = (RAW, data.to_vec());
        for method in METHODS.into_iter().filter(|m| m.tried_on(content_id, profile)) {
            let (byte, packed) =
                if method == Method::Raw { (RAW, Vec::new()) } else { method.apply(data, profile) };
            let len = if method == Method::Raw { data.len() } else { packed.len() };
            // htslib adds 2000 to each trial's sizes, so that small blocks do not decide.
            sizes[method.index()] = len as u64 + if profile.nx16() { 2000 } else { 0 };
            if len < best.1.len() {
                best = (byte, packed);
            }
        }
        if let Choice::Trial(trials) = self {
            let total = trials.sizes.entry(content_id).or_insert([0; METHODS.len()]);
            for (t, s) in total.iter_mut().zip(sizes) {
                *t = t.saturating_add(s);
            }
        }
        best
    }
}

fn gzip(data: &[u8], level: i32) -> Vec<u8> {
    let level = libdeflater::CompressionLvl::new(level).unwrap_or_default();
    let mut compressor = libdeflater::Compressor::new(level);
    let mut out = vec![0; compressor.gzip_compress_bound(data.len())];
    let n = compressor.gzip_compress(data, &mut out).unwrap_or(0);
    out.truncate(n);
    if n == 0 { data.to_vec() } else { out }
}

/// bzip2 at `level` (its block size in 100 kB), as htslib's `BZ2_bzBuffToBuffCompress`.
fn bzip2(data: &[u8], level: u32) -> Vec<u8> {
    use std::io::Write;
    let mut encoder = bzip2::write::BzEncoder::new(Vec::new(), bzip2::Compression::new(level));
    // Writing to memory cannot fail; an empty result loses to every other method.
    if encoder.write_all(data).is_err() {
        return data.to_vec();
    }
    encoder.finish().unwrap_or_else(|_| data.to_vec())
}

/// xz at preset `level` with a CRC32 check, as htslib's `lzma_easy_buffer_encode`.
fn xz(data: &[u8], level: u32) -> Vec<u8> {
    use std::io::Write;
    let mut options = lzma_rust2::XzOptions::with_preset(level);
    options.set_check_sum_type(lzma_rust2::CheckType::Crc32);
    // A dictionary past the data finds nothing more; the preset's (up to 64 MiB) was allocated
    // for every block tried and took most of the time.
    let fits = (data.len() as u32).next_power_of_two().max(4096);
    options.lzma_options.dict_size = options.lzma_options.dict_size.min(fits);
    let Ok(mut writer) = lzma_rust2::XzWriter::new(Vec::new(), options) else {
        return data.to_vec();
    };
    if writer.write_all(data).is_err() {
        return data.to_vec();
    }
    writer.finish().unwrap_or_else(|_| data.to_vec())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Names-like text: gzip wins; small-alphabet integers: rANS wins.
    fn text_block() -> Vec<u8> {
        let names = (0..2000).map(|i| format!("SIM:1:FCX:1:{}:{}:{}\0", i % 7, i * 3, i * 7));
        names.collect::<String>().into_bytes()
    }

    #[test]
    fn trials_keep_the_smallest_and_the_learned_choice_repeats_it() {
        let data = text_block();
        let mut trials = TrialSizes::default();
        let tried = Choice::Trial(&mut trials).compress(&data, id::RN);
        let mut totals = TrialSizes::default();
        totals.add(&trials);
        let learned = totals.choose();
        let again = Choice::Learned(&learned).compress(&data, id::RN);
        assert_eq!(tried, again);
        assert!(tried.1.len() < data.len() / 2, "text did not compress");
    }

    #[test]
    fn trials_of_several_containers_add_up_without_overflow() {
        // Qualities are not tried with gzip or rANS order 0: those sizes are `u64::MAX`.
        let data = text_block();
        let mut totals = TrialSizes::default();
        let mut tried = (RAW, Vec::new());
        for _ in 0..3 {
            let mut trials = TrialSizes::default();
            tried = Choice::Trial(&mut trials).compress(&data, id::QS);
            totals.add(&trials);
        }
        let learned = totals.choose();
        assert_eq!(Choice::Learned(&learned).compress(&data, id::QS), tried);
    }

    #[test]
    fn a_series_the_trials_missed_tries_every_method() {
        let data = text_block();
        let learned = TrialSizes::default().choose();
        let mut trials = TrialSizes::default();
        let tried = Choice::Trial(&mut trials).compress(&data, id::SC);
        assert_eq!(Choice::Learned(&learned).compress(&data, id::SC), tried);
    }

    #[test]
    fn incompressible_or_short_data_stays_raw() {
        let mut x = 0x1234_5678u32;
        let noise: Vec<u8> = (0..4096)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 17;
                x ^= x << 5;
                x as u8
            })
            .collect();
        let mut trials = TrialSizes::default();
        assert_eq!(Choice::Trial(&mut trials).compress(&noise, id::RN).0, RAW);
        let learned = trials.choose();
        assert_eq!(Choice::Learned(&learned).compress(&noise, id::RN).0, RAW);
        assert_eq!(Choice::Learned(&learned).compress(b"short", id::RN), (RAW, b"short".to_vec()));
    }

    #[test]
    fn trial_containers_open_every_span() {
        let trials: Vec<u64> = (0..140).filter(|&o| is_trial(o)).collect();
        assert_eq!(trials, [0, 1, 2, 64, 65, 66, 128, 129, 130]);
        assert!(ends_trials(2) && ends_trials(66) && !ends_trials(65));
    }
}
