//! `samtools cram-size` (samtools 1.24 `cram_size.c`): the stored and raw sizes of a CRAM's
//! blocks summed by content id and compression method, each id with the data series and tags
//! whose encodings read it, then the file's container, slice, record and base counts.
//!
//! The walk of the file is [`crate::io::cram::structure`]'s; this is the tally and the text.

pub mod methods;

use std::collections::HashMap;

/// A content id's sizes by method kind ([`methods`]).
#[derive(Clone)]
struct Sizes {
    stored: [i64; methods::COUNT],
    raw: [i64; methods::COUNT],
}

impl Sizes {
    /// The kinds by stored size, largest first, ties in kind order (samtools' `sort_cusize`).
    fn kinds_by_size(&self) -> Vec<usize> {
        let mut kinds: Vec<usize> = (0..methods::COUNT).collect();
        kinds.sort_by(|&a, &b| self.stored[b].cmp(&self.stored[a]).then(a.cmp(&b)));
        kinds
    }
}

/// The sums `cram-size` reports.
#[derive(Default)]
pub struct CramSizes {
    sizes: HashMap<i32, Sizes>,
    /// Each content id's data series and tags, the last met first (htslib's
    /// `cram_update_cid2ds_map` pushes each new one on the front of its list).
    data_series: HashMap<i32, Vec<u32>>,
    /// The content id of the embedded reference, once a slice names one.
    embedded_reference: Option<i32>,
    pub containers: i64,
    pub slices: i64,
    pub sequences: i64,
    pub bases: i64,
}

/// htslib's warning for embedded references in blocks of different content ids.
pub const INCONSISTENT_REFERENCE: &str = "Embedded reference is not consistently using the same Content-Id.\n\
     Reported figures for reference will be invalid.";

impl CramSizes {
    /// A container with `records`, `bases` and `slices`, and its codecs: each data series or
    /// tag key with the two content ids its encoding reads (`-1` core, `-2` none).
    pub fn container(
        &mut self,
        records: i64,
        bases: i64,
        slices: usize,
        codecs: impl IntoIterator<Item = (u32, [i32; 2])>,
    ) {
        self.sequences += records;
        self.bases += bases;
        self.containers += 1;
        self.slices += slices as i64;
        for (key, ids) in codecs {
            for id in ids.into_iter().filter(|&id| id > -2) {
                let list = self.data_series.entry(id).or_default();
                if !list.contains(&key) {
                    list.insert(0, key);
                }
            }
        }
    }

    /// A slice whose embedded reference is in block `content_id` (`-1`: none); the warning
    /// to print when it differs from an earlier slice's.
    pub fn slice(&mut self, content_id: i32) -> Option<&'static str> {
        if content_id < 0 {
            return None;
        }
        match self.embedded_reference {
            None => self.embedded_reference = Some(content_id),
            Some(id) if id != content_id => return Some(INCONSISTENT_REFERENCE),
            Some(_) => {}
        }
        None
    }

    /// A block of `content_id` (`-1` core) of method `kind`, with its stored and raw sizes.
    pub fn block(&mut self, content_id: i32, kind: usize, stored: i64, raw: i64) {
        let sizes = self
            .sizes
            .entry(content_id)
            .or_insert_with(|| Sizes { stored: [0; methods::COUNT], raw: [0; methods::COUNT] });
        sizes.stored[kind] += stored;
        sizes.raw[kind] += raw;
    }

    /// The block table (`verbose`: a line per method) and the sum of stored sizes.
    pub fn report(&self, verbose: bool) -> (Vec<u8>, i64) {
        let mut out = Vec::new();
        out.extend_from_slice(
            format!(
                "#   Content_ID  Uncomp.size    Comp.size   Ratio Method{}  Data_series\n",
                if verbose { "    " } else { "" }
            )
            .as_bytes(),
        );
        let mut ids: Vec<i32> = self.sizes.keys().copied().collect();
        // samtools compares the keys as C ints made from a difference of unsigned ones.
        ids.sort_by(|&a, &b| ((a as u32).wrapping_sub(b as u32) as i32).cmp(&0));
        let mut total = 0;
        for id in ids {
            let sizes = &self.sizes[&id];
            let kinds = sizes.kinds_by_size();
            let series = self.series_text(id);
            if verbose {
                for (i, &kind) in kinds.iter().enumerate() {
                    if i > 0 && sizes.stored[kind] == 0 {
                        break;
                    }
                    if i > 0 {
                        out.push(b'\n');
                    }
                    let line = block_line(id, sizes.raw[kind], sizes.stored[kind]);
                    out.extend_from_slice(format!("{line} {:<11}", methods::name(kind)).as_bytes());
                    out.extend_from_slice(&series);
                }
            } else {
                let mut letters: Vec<u8> = kinds
                    .iter()
                    .take_while(|&&k| sizes.stored[k] != 0)
                    .map(|&k| methods::letter(k))
                    .collect();
                if letters.is_empty() {
                    letters.push(b'.');
                }
                let (raw, stored) = (sizes.raw.iter().sum(), sizes.stored.iter().sum());
                out.extend_from_slice(block_line(id, raw, stored).as_bytes());
                out.push(b' ');
                out.extend_from_slice(&letters);
                out.resize(out.len() + 7usize.saturating_sub(letters.len()), b' ');
                out.extend_from_slice(&series);
            }
            if id >= 0 && Some(id) == self.embedded_reference {
                out.extend_from_slice(b" embedded_ref");
            }
            out.push(b'\n');
            total += sizes.stored.iter().sum::<i64>();
        }
        (out, total)
    }

    /// The counts after the table; `file_size` is where reading ended.
    pub fn summary(&self, file_size: i64, stored_total: i64) -> String {
        format!(
            "\nNumber of containers  {:18}\nNumber of slices      {:18}\n\
             Number of sequences   {:18}\nNumber of bases       {:18}\n\
             Total file size       {:18}\nFormat overhead size  {:18}\n",
            self.containers,
            self.slices,
            self.sequences,
            self.bases,
            file_size,
            file_size - stored_total
        )
    }

    /// ` XX` for each data series and ` XXX` for each tag reading block `id`.
    fn series_text(&self, id: i32) -> Vec<u8> {
        let mut text = Vec::new();
        for &key in self.data_series.get(&id).into_iter().flatten() {
            text.push(b' ');
            if key > 0xffff {
                text.push((key >> 16) as u8);
            }
            text.extend_from_slice(&[(key >> 8) as u8, key as u8]);
        }
        text
    }
}

/// `BLOCK ID RAW STORED RATIO%` (samtools' `%8d %12 %12 %6.2f%%`; `>999%` past 999).
fn block_line(id: i32, raw: i64, stored: i64) -> String {
    let name = if id < 0 { "CORE".to_string() } else { id.to_string() };
    let ratio = 100.0 * (stored as f64 + 0.0001) / (raw as f64 + 0.0001);
    let ratio = if ratio > 999.0 { "   >999%".to_string() } else { format!(" {ratio:6.2}%") };
    format!("BLOCK {name:>8} {raw:12} {stored:12}{ratio}")
}

/// `-e`: a container's codecs, a line each (`\tKEY\tDESCRIPTION`), under its heading.
pub fn encodings_text<'a>(codecs: impl IntoIterator<Item = (u32, &'a str)>) -> Vec<u8> {
    let mut out = b"Container encodings\n".to_vec();
    for (key, description) in codecs {
        out.push(b'\t');
        if key >> 16 != 0 {
            out.push((key >> 16) as u8);
        }
        out.extend_from_slice(&[(key >> 8) as u8, key as u8, b'\t']);
        out.extend_from_slice(description.as_bytes());
        out.push(b'\n');
    }
    out.push(b'\n');
    out
}
