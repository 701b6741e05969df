//! `sort`: read every record into one [`RecordStore`], compute one key per record in parallel,
//! sort the handles by (key, input position) on the pool, write in the new order.
//!
//! Ties keep input order, as samtools' sorts do. Record bytes never move; only `-M` edits records
//! in place (reverse-complementing unplaced reads). Everything is in memory: `-m` and `-T` are
//! accepted for compatibility but nothing spills to temporary files.

use rayon::prelude::*;

use crate::error::Error;
use crate::io::open::{self, Opened};
use crate::io::sam::format::format_record;
use crate::ops::sort::keys::{self, TagValue, TemplateKey};
use crate::ops::sort::minhash::{self, MinKey};
use crate::ops::sort::{NameKey, NameOrder, SortOrder};
use crate::pipeline::sink::{Encoded, OutputFormat, RecordSink};
use crate::record::{Header, RecordIdx, RecordStore};

pub struct SortOptions {
    pub input: String,
    pub output: String,
    pub format: OutputFormat,
    pub level: i32,
    pub threads: usize,
    pub order: SortOrder,
    /// `@PG` fields to add (`None` with `--no-PG`).
    pub pg: Option<Vec<(String, String)>>,
    /// `--write-index`: (index path, BAI?) with the output path already stripped of `##idx##`.
    pub index: Option<(String, bool)>,
}

/// Records per parallel work unit when building keys and encoding output.
const CHUNK: usize = 8192;

/// Name keys of records in `handles` order, with their bytes in one arena.
fn name_keys(
    store: &RecordStore,
    handles: &[RecordIdx],
    order: NameOrder,
) -> (Vec<NameKey>, Vec<u8>) {
    let parts: Vec<(Vec<NameKey>, Vec<u8>)> = handles
        .par_chunks(CHUNK)
        .map(|chunk| {
            let mut arena = Vec::with_capacity(chunk.len() * 24);
            let keys =
                chunk.iter().map(|&h| NameKey::build(&store.get(h), order, &mut arena)).collect();
            (keys, arena)
        })
        .collect();
    let mut all_keys = Vec::with_capacity(handles.len());
    let mut arena = Vec::with_capacity(parts.iter().map(|p| p.1.len()).sum());
    for (keys, part) in parts {
        let base = arena.len() as u32;
        all_keys.extend(keys.into_iter().map(|k| NameKey { start: k.start + base, ..k }));
        arena.extend_from_slice(&part);
    }
    (all_keys, arena)
}

/// The sorted order of the store's handles. Ties keep input order.
pub fn sorted_order(
    store: &RecordStore,
    header: &Header,
    order: SortOrder,
    min_keys: Option<&[Vec<Option<MinKey>>]>,
) -> Result<Vec<RecordIdx>, Error> {
    let handles = &store.order;
    let n_refs = header.refs().len();
    let pick = |positions: Vec<u32>| positions.into_iter().map(|p| handles[p as usize]).collect();
    match order {
        SortOrder::Coordinate => {
            let mut k: Vec<u128> = handles
                .par_iter()
                .enumerate()
                .map(|(i, &h)| {
                    (keys::coordinate_key(&store.get(h), n_refs) as u128) << 32 | i as u128
                })
                .collect();
            k.par_sort_unstable();
            Ok(k.into_iter().map(|k| handles[(k as u32) as usize]).collect())
        }
        SortOrder::Name(name_order) => {
            let (k, arena) = name_keys(store, handles, name_order);
            let mut pos: Vec<u32> = (0..handles.len() as u32).collect();
            pos.par_sort_unstable_by(|&a, &b| {
                k[a as usize].cmp(&arena, &k[b as usize], &arena).then(a.cmp(&b))
            });
            Ok(pick(pos))
        }
        SortOrder::Tag { tag, then } => {
            let tags: Vec<TagValue<'_>> =
                handles.par_iter().map(|&h| keys::tag_value(&store.get(h), tag)).collect();
            let mut pos: Vec<u32> = (0..handles.len() as u32).collect();
            match then {
                None => {
                    let coords: Vec<u64> = handles
                        .par_iter()
                        .map(|&h| keys::coordinate_key(&store.get(h), n_refs))
                        .collect();
                    pos.par_sort_unstable_by(|&a, &b| {
                        let (a, b) = (a as usize, b as usize);
                        keys::cmp_tag(&tags[a], &tags[b])
                            .then(coords[a].cmp(&coords[b]))
                            .then(a.cmp(&b))
                    });
                }
                Some(name_order) => {
                    let (k, arena) = name_keys(store, handles, name_order);
                    pos.par_sort_unstable_by(|&a, &b| {
                        let (a, b) = (a as usize, b as usize);
                        keys::cmp_tag(&tags[a], &tags[b])
                            .then_with(|| k[a].cmp(&arena, &k[b], &arena))
                            .then(a.cmp(&b))
                    });
                }
            }
            Ok(pick(pos))
        }
        SortOrder::TemplateCoordinate => {
            let libraries = keys::library_lookup(header.lines());
            let k: Vec<TemplateKey<'_>> = handles
                .par_iter()
                .map(|&h| keys::template_key(&store.get(h), &libraries))
                .collect::<Result<_, String>>()
                .map_err(Error::Bare)?;
            let mut pos: Vec<u32> = (0..handles.len() as u32).collect();
            pos.par_sort_unstable_by(|&a, &b| {
                keys::cmp_template(&k[a as usize], &k[b as usize]).then(a.cmp(&b))
            });
            Ok(pick(pos))
        }
        SortOrder::MinHash(_) => {
            let min_keys =
                min_keys.ok_or_else(|| Error::Message("minimiser keys missing".into()))?;
            let mut k: Vec<(u64, MinKey, bool, u32)> = handles
                .par_iter()
                .enumerate()
                .map(|(i, &h)| {
                    let r = store.get(h);
                    match min_keys[h.batch as usize][h.record as usize] {
                        Some(m) => (
                            u64::MAX,
                            m,
                            r.flag() & crate::record::layout::flags::REVERSE != 0,
                            i as u32,
                        ),
                        None => (
                            keys::coordinate_key(&r, n_refs),
                            MinKey { hash: 0, pos_desc: 0 },
                            false,
                            i as u32,
                        ),
                    }
                })
                .collect();
            k.par_sort_unstable();
            Ok(k.into_iter().map(|k| handles[k.3 as usize]).collect())
        }
    }
}

/// `-M`: computes the minimiser key of every unplaced record, editing those records in place.
fn apply_minhash(store: &mut RecordStore, m: minhash::Minimiser) -> Vec<Vec<Option<MinKey>>> {
    store
        .batches
        .par_iter_mut()
        .map(|batch| {
            let starts = batch.starts.clone();
            let data = &mut batch.data;
            starts
                .iter()
                .map(|&at| {
                    let at = at as usize;
                    let size =
                        u32::from_le_bytes(data[at..at + 4].try_into().unwrap_or([0; 4])) as usize;
                    minhash::apply(&mut data[at + 4..at + 4 + size], m)
                })
                .collect()
        })
        .collect()
}

/// Reads everything, sorts, writes.
pub fn run(opts: SortOptions) -> Result<(), Error> {
    let Opened { mut reader, header: input_header, .. } = open::open(&opts.input, opts.threads)?;
    let mut store = RecordStore::default();
    loop {
        match reader.read_batches(&opts.input) {
            Ok(Some((batches, warnings))) => {
                for w in warnings {
                    eprintln!("{w}");
                }
                for b in batches {
                    store.push_batch(b);
                }
            }
            Ok(None) => break,
            Err(e) => {
                eprintln!("{e}");
                return Err(Error::Message("truncated file. Aborting".into()));
            }
        }
    }
    let placed = store.batches.par_iter().any(|b| b.iter().any(|r| r.ref_id() >= 0));
    let min_keys = match opts.order {
        SortOrder::MinHash(m) => Some(apply_minhash(&mut store, m)),
        _ => None,
    };
    store.order = sorted_order(&store, &input_header, opts.order, min_keys.as_deref())?;
    let mut header = input_header;
    opts.order.update_header(&mut header, placed);
    if let Some(pg) = &opts.pg {
        let fields: Vec<(&str, &str)> = pg.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        header.add_pg("samtools", &fields);
    }
    let mut sink =
        RecordSink::create(&opts.output, opts.format, opts.level, opts.threads, &header, true)?;
    if let Some((path, bai)) = &opts.index {
        sink.write_index(path, *bai, &header)?;
    }
    write_in_order(&store, &header, &mut sink)?;
    sink.finish()
}

/// Encodes the store's records in its current order, in parallel, and writes them in order.
pub fn write_in_order(
    store: &RecordStore,
    header: &Header,
    sink: &mut RecordSink,
) -> Result<(), Error> {
    let format = sink.format();
    if format == OutputFormat::Bam {
        let framed: Vec<&[u8]> = store
            .order
            .par_iter()
            .map(|h| store.batches[h.batch as usize].framed(h.record as usize))
            .collect();
        return sink.write_framed(&framed);
    }
    let group = CHUNK * rayon::current_num_threads().max(1) * 4;
    for handles in store.order.chunks(group) {
        let encoded: Vec<Encoded> = handles
            .par_chunks(CHUNK)
            .map(|chunk| {
                let mut out = Encoded::default();
                for &h in chunk {
                    if format == OutputFormat::Bam {
                        out.data.extend_from_slice(
                            store.batches[h.batch as usize].framed(h.record as usize),
                        );
                        out.end_unit();
                    } else {
                        format_record(&mut out.data, &store.get(h), header);
                        out.end_unit();
                    }
                }
                out
            })
            .collect();
        for e in &encoded {
            sink.write(e)?;
        }
    }
    Ok(())
}

/// Runs `sort` on a pool of `opts.threads` threads.
pub fn run_on_pool(opts: SortOptions) -> Result<(), Error> {
    crate::pipeline::threads::pool(opts.threads).install(|| run(opts))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::Batch;

    fn rec(name: &str, tid: i32, pos: i32, flag: u16) -> Vec<u8> {
        let mut b = vec![0u8; 32];
        b[0..4].copy_from_slice(&tid.to_le_bytes());
        b[4..8].copy_from_slice(&pos.to_le_bytes());
        b[8] = name.len() as u8 + 1;
        b[14..16].copy_from_slice(&flag.to_le_bytes());
        b[20..24].copy_from_slice(&(-1i32).to_le_bytes());
        b[24..28].copy_from_slice(&(-1i32).to_le_bytes());
        b.extend_from_slice(name.as_bytes());
        b.push(0);
        b
    }

    fn store(recs: &[Vec<u8>]) -> RecordStore {
        let mut s = RecordStore::default();
        // Two batches, to check handles across batches.
        let mid = recs.len() / 2;
        for part in [&recs[..mid], &recs[mid..]] {
            let mut b = Batch::default();
            for r in part {
                b.push(r);
            }
            s.push_batch(b);
        }
        s
    }

    fn names(s: &RecordStore, order: &[RecordIdx]) -> Vec<String> {
        order.iter().map(|&h| String::from_utf8_lossy(s.get(h).read_name()).into_owned()).collect()
    }

    #[test]
    fn coordinate_is_stable_with_unplaced_last() {
        let header =
            Header::from_sam_text(b"@SQ\tSN:a\tLN:100\n@SQ\tSN:b\tLN:100\n".to_vec()).unwrap();
        let recs = vec![
            rec("u1", -1, -1, 4),
            rec("b5", 1, 5, 0),
            rec("a5r", 0, 5, 16),
            rec("a5x", 0, 5, 0),
            rec("a5y", 0, 5, 0),
            rec("u2", -1, -1, 4),
            rec("a1", 0, 1, 0),
        ];
        let s = store(&recs);
        let order = sorted_order(&s, &header, SortOrder::Coordinate, None).unwrap();
        assert_eq!(names(&s, &order), ["a1", "a5x", "a5y", "a5r", "b5", "u1", "u2"]);
    }

    #[test]
    fn name_orders_and_flag_ties() {
        let header = Header::default();
        let recs = vec![
            rec("r10", 0, 0, 0x80),
            rec("r9", 0, 0, 0),
            rec("r10", 0, 0, 0x840),
            rec("r10", 0, 0, 0x40),
            rec("r010", 0, 0, 0x140),
            rec("r2", 0, 0, 0),
        ];
        let s = store(&recs);
        let order = sorted_order(&s, &header, SortOrder::Name(NameOrder::Natural), None).unwrap();
        let flags: Vec<(String, u16)> = order
            .iter()
            .map(|&h| (String::from_utf8_lossy(s.get(h).read_name()).into_owned(), s.get(h).flag()))
            .collect();
        assert_eq!(
            flags,
            [("r2", 0), ("r9", 0), ("r10", 0x40), ("r10", 0x840), ("r010", 0x140), ("r10", 0x80)]
                .map(|(n, f)| (n.to_string(), f))
        );
        let order =
            sorted_order(&s, &header, SortOrder::Name(NameOrder::Lexicographic), None).unwrap();
        assert_eq!(names(&s, &order), ["r010", "r10", "r10", "r10", "r2", "r9"]);
    }
}
