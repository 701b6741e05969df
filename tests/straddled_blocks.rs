//! Region queries on a BAM whose BGZF blocks cut records anywhere, as htsjdk (Picard, GATK)
//! writes them, where htslib keeps each record in one block: every indexed command gives what it
//! gives on the same records blocked as htslib blocks them. A record that starts at an index
//! chunk's end and runs into the next block once read as a truncated record (`bedcov`, found by
//! this test).

use std::io::Read;
use std::path::Path;

use mdsam::io::bgzf::block::{Deflater, EOF_BLOCK};
use mdsam::simulate::{Order, SimulateOptions};

use crate::support::{mdsam_native, scratch_dir, simulated_sam};

/// `bam`'s inflated bytes deflated again in blocks of `size` bytes, whatever records they cut;
/// says how many records a block's end cuts.
fn reblock(bam: &Path, out: &Path, size: usize) -> usize {
    let mut data = Vec::new();
    flate2::read::MultiGzDecoder::new(std::fs::File::open(bam).unwrap())
        .read_to_end(&mut data)
        .unwrap();
    let cut = records_cut(&data, size);
    let mut blocks = Vec::new();
    let mut deflater = Deflater::new(6);
    for piece in data.chunks(size) {
        deflater.deflate_into(piece, &mut blocks);
    }
    blocks.extend_from_slice(&EOF_BLOCK);
    std::fs::write(out, blocks).unwrap();
    cut
}

/// Records of inflated BAM `data` that run across a multiple of `size`.
fn records_cut(data: &[u8], size: usize) -> usize {
    let u32_at = |at: usize| u32::from_le_bytes(data[at..at + 4].try_into().unwrap()) as usize;
    let mut at = 8 + u32_at(4);
    let n_ref = u32_at(at);
    at += 4;
    for _ in 0..n_ref {
        at += 8 + u32_at(at);
    }
    let mut cut = 0;
    while at < data.len() {
        let end = at + 4 + u32_at(at);
        cut += usize::from(at / size != (end - 1) / size);
        at = end;
    }
    cut
}

fn stdout_of(args: &[&str]) -> Vec<u8> {
    let out = mdsam_native(args);
    assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
    out.stdout
}

#[test]
fn region_queries_read_records_cut_across_blocks() {
    let dir = scratch_dir("straddled_blocks");
    let opts = SimulateOptions {
        pairs: 20_000,
        seed: 5,
        n_refs: 3,
        ref_len: 200_000,
        order: Order::Coordinate,
        ..SimulateOptions::default()
    };
    let sam = simulated_sam(&dir, &opts);
    let p = |n: &str| dir.join(n).to_str().unwrap().to_string();
    let (whole, cut) = (p("whole.bam"), p("cut.bam"));
    stdout_of(&["view", "-b", "-o", &whole, sam.to_str().unwrap()]);
    // An odd block size: record ends meet block ends only by chance.
    let records_cut = reblock(Path::new(&whole), Path::new(&cut), 30_011);
    assert!(records_cut > 100, "only {records_cut} records cut");
    for bam in [&whole, &cut] {
        stdout_of(&["index", bam]);
    }
    let bed = p("r.bed");
    let mut lines = String::new();
    for i in 0..60u32 {
        let beg = (i * 7_919) % 190_000;
        lines.push_str(&format!("chr{}\t{beg}\t{}\n", 1 + i % 3, beg + 50 + i * 97));
    }
    std::fs::write(&bed, lines).unwrap();
    let regions = ["chr1:1000-2000", "chr2:5000-90000", "chr3", "chr1:150000-150001"];
    // Each command as (arguments before the BAM, arguments after it).
    let mut commands: Vec<(Vec<&str>, Vec<&str>)> = vec![
        (vec!["bedcov", &bed], vec![]),
        (vec!["view", "-c", "-L", &bed], vec![]),
        (vec!["view", "-M", "-L", &bed], vec![]),
        (vec!["view"], regions.to_vec()),
        (vec!["view", "-M"], regions.to_vec()),
    ];
    for r in regions {
        commands.push((vec!["depth", "-r", r], vec![]));
        commands.push((vec!["coverage", "-r", r], vec![]));
        commands.push((vec!["mpileup", "-r", r], vec![]));
        commands.push((vec!["consensus", "-a", "-r", r], vec![]));
        commands.push((vec!["merge", "-R", r, "-O", "SAM", "--no-PG", "-o", "-"], vec![]));
    }
    for (before, after) in &commands {
        let on = |bam: &str| stdout_of(&[before.as_slice(), &[bam], after.as_slice()].concat());
        let expected = on(&whole);
        assert!(!expected.is_empty(), "{before:?} {after:?} gave nothing");
        assert!(on(&cut) == expected, "{before:?} {after:?}: the re-blocked BAM reads differently");
    }
}
