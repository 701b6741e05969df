//! BGZF block inflate and deflate at samtools' levels: the cost floor of every BAM command
//! (inflate is 80 % of `view -c` under perf; deflate dominates BAM output at the default level).

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use mdsam::io::bgzf::block::{self, Deflater};
use mdsam::io::bgzf::codec::{Engine, Inflater};
use mdsam::simulate::{SimulateOptions, write_sam};

/// One block's worth of realistic SAM text (compresses like BAM record data does).
fn block_payload() -> Vec<u8> {
    let mut sam = Vec::new();
    write_sam(&SimulateOptions { pairs: 400, ..Default::default() }, &mut sam).unwrap();
    sam.truncate(block::BLOCK_DATA_MAX);
    sam
}

fn bench(c: &mut Criterion) {
    let data = block_payload();
    let mut group = c.benchmark_group("bgzf");
    group.throughput(Throughput::Bytes(data.len() as u64));
    for engine in [Engine::Libdeflate, Engine::Isal] {
        for level in [0, 1, -1] {
            let mut d = Deflater::with_engine(level, engine);
            group.bench_function(format!("deflate level {level} {engine:?}"), |b| {
                b.iter(|| {
                    let mut out = Vec::with_capacity(block::BLOCK_MAX);
                    d.deflate_into(&data, &mut out);
                    out
                })
            });
        }
    }
    let mut compressed = Vec::new();
    Deflater::with_engine(-1, Engine::Libdeflate).deflate_into(&data, &mut compressed);
    for engine in [Engine::Libdeflate, Engine::Isal] {
        let mut inflater = Inflater::with_engine(engine);
        let mut out = vec![0; data.len()];
        group.bench_function(format!("inflate default-level block {engine:?}"), |b| {
            b.iter(|| block::inflate(&compressed, &mut out, &mut inflater).unwrap())
        });
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
