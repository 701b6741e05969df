//! Barcode tags (BC/QT, CR/CY, OX/BZ, RX/QX) of first fragments: bases and qualities per
//! barcode cycle (samtools' `collect_barcode_stats`). The first barcode of a tag fixes its
//! length and separator, so these are counted in input order.

use super::QUALITY_SLOTS;
use super::counters::BaseCounts;
use crate::record::RecordRef;

/// Messages about malformed barcodes stop after this many (samtools' `ERROR_LIMIT`).
const MESSAGE_LIMIT: u32 = 200;

pub struct BarcodeTag {
    pub tag: [u8; 2],
    pub quality_tag: [u8; 2],
    /// The length of the first barcode seen (0: none yet).
    pub len: usize,
    /// The cycle of the separator (a base other than ACGTN), if any.
    pub separator: Option<usize>,
    /// The highest quality seen (-1: none).
    pub max_quality: i32,
    pub bases: Vec<BaseCounts>,
    /// `QUALITY_SLOTS` counts per cycle.
    pub qualities: Vec<u64>,
}

pub struct Barcodes {
    pub tags: Vec<BarcodeTag>,
    messages: u32,
}

impl Default for Barcodes {
    fn default() -> Self {
        let tag = |t: &[u8; 2], q: &[u8; 2]| BarcodeTag {
            tag: *t,
            quality_tag: *q,
            len: 0,
            separator: None,
            max_quality: -1,
            bases: Vec::new(),
            qualities: Vec::new(),
        };
        Barcodes {
            tags: vec![tag(b"BC", b"QT"), tag(b"CR", b"CY"), tag(b"OX", b"BZ"), tag(b"RX", b"QX")],
            messages: 0,
        }
    }
}

/// A `Z` (or `H`) tag's text up to its first NUL.
fn text<'a>(r: &RecordRef<'a>, tag: [u8; 2]) -> Option<&'a [u8]> {
    let f = r.aux_get(tag)?;
    if f.ty != b'Z' && f.ty != b'H' {
        return None;
    }
    Some(&f.value[..f.value.iter().position(|&b| b == 0).unwrap_or(f.value.len())])
}

impl Barcodes {
    /// Counts `r`'s barcodes; the warnings are samtools' stderr lines.
    pub fn add(&mut self, r: &RecordRef<'_>, warnings: &mut Vec<String>) {
        let qname = || String::from_utf8_lossy(r.read_name()).into_owned();
        for t in &mut self.tags {
            let Some(barcode) = text(r, t.tag).filter(|b| !b.is_empty()) else {
                continue;
            };
            let tag_bytes = t.tag;
            let tag = std::str::from_utf8(&tag_bytes).unwrap_or("");
            if t.len == 0 {
                t.len = barcode.len();
                t.bases = vec![BaseCounts::default(); t.len];
                t.qualities = vec![0; t.len * QUALITY_SLOTS];
            }
            if barcode.len() > t.len {
                warnings.push(format!(
                    "Barcodes with tag {tag} differ in length at sequence '{}'",
                    qname()
                ));
                continue;
            }
            let mut malformed = false;
            for (i, &b) in barcode.iter().enumerate() {
                let c = &mut t.bases[i];
                match b {
                    b'A' => c.a += 1,
                    b'C' => c.c += 1,
                    b'G' => c.g += 1,
                    b'T' => c.t += 1,
                    b'N' => c.n += 1,
                    _ => match t.separator {
                        Some(s) if s != i => {
                            if self.messages < MESSAGE_LIMIT {
                                warnings.push(format!(
                                    "Barcode separator for tag {tag} is in a different position or wrong barcode content('{}') at sequence '{}'",
                                    String::from_utf8_lossy(barcode),
                                    qname()
                                ));
                                self.messages += 1;
                            }
                            malformed = true;
                            break;
                        }
                        Some(_) => {}
                        None => t.separator = Some(i),
                    },
                }
            }
            if malformed {
                continue;
            }
            let Some(quals) = text(r, t.quality_tag) else {
                continue;
            };
            if quals.len() != barcode.len() {
                if self.messages < MESSAGE_LIMIT {
                    warnings.push(format!(
                        "{tag} length and {} length don't match for sequence '{}'",
                        String::from_utf8_lossy(&t.quality_tag),
                        qname()
                    ));
                }
                self.messages += 1;
                continue;
            }
            for (i, &q) in quals.iter().enumerate() {
                let q = i32::from(q as i8) - i32::from(b'!');
                if (0..QUALITY_SLOTS as i32).contains(&q) {
                    t.qualities[i * QUALITY_SLOTS + q as usize] += 1;
                    t.max_quality = t.max_quality.max(q);
                }
            }
        }
    }
}
