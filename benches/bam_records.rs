//! BAM record validation and key extraction: the per-record work of reading BAM into the store
//! (every length field and the aux block are checked) and the packed coordinate key sort uses.

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use mdsam::io::sam::parse::parse_line;
use mdsam::record::{Batch, Header, view};
use mdsam::simulate::{SimulateOptions, write_sam};

fn records() -> Batch {
    let mut sam = Vec::new();
    write_sam(&SimulateOptions { pairs: 2000, ..Default::default() }, &mut sam).unwrap();
    let text: Vec<&[u8]> = sam.split(|&b| b == b'\n').filter(|l| !l.is_empty()).collect();
    let header_text: Vec<u8> =
        text.iter().filter(|l| l.starts_with(b"@")).flat_map(|l| [*l, b"\n"].concat()).collect();
    let header = Header::from_sam_text(header_text).unwrap();
    let mut batch = Batch::default();
    for l in text.iter().filter(|l| !l.starts_with(b"@")) {
        parse_line(l, &header, &mut batch, &mut Vec::new()).unwrap();
    }
    batch
}

fn bench(c: &mut Criterion) {
    let batch = records();
    let mut group = c.benchmark_group("bam_records");
    group.throughput(Throughput::Elements(batch.len() as u64));
    group.bench_function("validate records", |b| {
        b.iter(|| (0..batch.len()).all(|i| view::validate(&batch.framed(i)[4..]).is_ok()))
    });
    group.bench_function("coordinate keys", |b| {
        b.iter(|| {
            batch
                .iter()
                .map(|r| {
                    ((r.ref_id() as u32 as u64) << 32 | (r.pos() as u32 as u64)) << 1
                        | ((r.flag() >> 4) & 1) as u64
                })
                .fold(0u64, |a, k| a ^ k)
        })
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
