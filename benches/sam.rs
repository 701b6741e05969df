//! SAM text ⇄ BAM records: the per-record cost of SAM input and output (`view` SAM→BAM, BAM→SAM).

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use mdsam::io::sam::format::format_record;
use mdsam::io::sam::parse::{LineParser, parse_line};
use mdsam::record::{Batch, Header};
use mdsam::simulate::{SimulateOptions, write_sam};

fn input() -> (Header, Vec<u8>) {
    let mut sam = Vec::new();
    write_sam(&SimulateOptions { pairs: 2000, ..Default::default() }, &mut sam).unwrap();
    let body_at =
        sam.split(|&b| b == b'\n').take_while(|l| l.starts_with(b"@")).map(|l| l.len() + 1).sum();
    let header = Header::from_sam_text(sam[..body_at].to_vec()).unwrap();
    (header, sam[body_at..].to_vec())
}

fn bench(c: &mut Criterion) {
    let (header, body) = input();
    let lines: Vec<&[u8]> = body.split(|&b| b == b'\n').filter(|l| !l.is_empty()).collect();
    let mut group = c.benchmark_group("sam");
    group.throughput(Throughput::Bytes(body.len() as u64));
    group.bench_function("parse lines to BAM records", |b| {
        b.iter(|| {
            let mut batch = Batch::with_capacity(body.len(), lines.len());
            let mut warnings = Vec::new();
            // As the reader parses a range: one parser, NUL bytes checked once for the range.
            let mut parser = LineParser::new(&header);
            assert!(memchr::memchr(0, &body).is_none());
            for l in &lines {
                parser.parse(l, &mut batch, &mut warnings).unwrap();
            }
            batch
        })
    });
    let mut batch = Batch::default();
    for l in &lines {
        parse_line(l, &header, &mut batch, &mut Vec::new()).unwrap();
    }
    group.bench_function("format BAM records as SAM", |b| {
        b.iter(|| {
            let mut out = Vec::with_capacity(body.len());
            for r in batch.iter() {
                format_record(&mut out, &r, &header);
            }
            out
        })
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
