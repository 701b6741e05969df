//! CIGARs of more than 65,535 operations (BAM's placeholder `<l_seq>S<ref_len>N` + `CG:B:I`,
//! SAMv1 §4.2.2) against the samtools 1.24 oracle: SAM, BAM and CRAM in and out, `sort`, `depth`,
//! `stats`, `markdup`, `calmd`, and the warnings and refusals.

use std::path::{Path, PathBuf};

use crate::support::{self, assert_same_sam, oracle_ok, run, run_ok, sam_records};

const REF_LEN: usize = 400_000;

/// A tiny deterministic generator (the data must not change between runs).
struct Lcg(u64);

impl Lcg {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        self.0 >> 33
    }
    fn base(&mut self) -> u8 {
        b"ACGT"[(self.next() % 4) as usize]
    }
}

/// A read along `reference` from 0-based `pos`: `n_ops` operations cycling M, I, D, X of 1 to 3
/// bases; returns the CIGAR text and the sequence (M copies the reference, X differs from it).
fn alignment(reference: &[u8], pos: usize, n_ops: usize, rng: &mut Lcg) -> (String, Vec<u8>) {
    let mut cigar = String::with_capacity(3 * n_ops);
    let mut seq = Vec::new();
    let mut at = pos;
    for i in 0..n_ops {
        let len = 1 + i % 3;
        let op = b"MIDX"[i % 4];
        cigar.push_str(&format!("{len}{}", op as char));
        for _ in 0..len {
            match op {
                b'M' => seq.push(reference[at]),
                b'X' => {
                    seq.push(b"CGTA"[b"ACGT".iter().position(|&c| c == reference[at]).unwrap()])
                }
                b'I' => seq.push(rng.base()),
                _ => {}
            }
            if op != b'I' {
                at += 1;
            }
        }
    }
    (cigar, seq)
}

struct Data {
    dir: PathBuf,
    sam: PathBuf,
    fasta: PathBuf,
}

impl Data {
    fn path(&self, name: &str) -> PathBuf {
        self.dir.join(name)
    }
}

/// One SAM line; `mate` is (flag bits, mate 1-based pos, tlen) for paired reads.
fn line(name: &str, flag: u16, pos: usize, cigar: &str, seq: &[u8], mate: (usize, i64)) -> String {
    let (rnext, pnext) = if mate.0 > 0 { ("=", mate.0) } else { ("*", 0) };
    let qual: String = (0..seq.len()).map(|i| (b'!' + (i % 40) as u8) as char).collect();
    format!(
        "{name}\t{flag}\tchr1\t{}\t60\t{cigar}\t{rnext}\t{pnext}\t{}\t{}\t{qual}\tRG:Z:g1\n",
        pos + 1,
        mate.1,
        String::from_utf8_lossy(seq)
    )
}

/// A reference, then a SAM of ordinary reads and ultra-long ones (70,000 and 100,001
/// operations), unpaired and paired, with a duplicate pair for `markdup`. Unsorted.
fn write_data(test: &str) -> Data {
    let dir = support::scratch_dir(test);
    let mut rng = Lcg(43);
    let reference: Vec<u8> = (0..REF_LEN).map(|_| rng.base()).collect();
    let mut fasta = b">chr1\n".to_vec();
    for chunk in reference.chunks(60) {
        fasta.extend_from_slice(chunk);
        fasta.push(b'\n');
    }
    let fasta_path = dir.join("ref.fa");
    std::fs::write(&fasta_path, fasta).unwrap();

    let mut sam =
        format!("@HD\tVN:1.6\tSO:unsorted\n@SQ\tSN:chr1\tLN:{REF_LEN}\n@RG\tID:g1\tSM:s1\tLB:l1\n");
    let short = |at: usize| String::from_utf8_lossy(&reference[at..at + 50]).into_owned();
    sam += &line("short1", 0, 150_000, "50M", short(150_000).as_bytes(), (0, 0));
    let (c, s) = alignment(&reference, 20_000, 100_001, &mut rng);
    sam += &line("long2", 16, 20_000, &c, &s, (0, 0));
    let (c, s) = alignment(&reference, 1_000, 70_000, &mut rng);
    sam += &line("long1", 0, 1_000, &c, &s, (0, 0));
    // Two pairs at the same place: the second is a duplicate of the first.
    let (c1, s1) = alignment(&reference, 5_000, 70_001, &mut rng);
    let (c2, s2) = alignment(&reference, 40_000, 66_000, &mut rng);
    let end2 = 40_000 + (0..66_000).map(|i| if i % 4 == 1 { 0 } else { 1 + i % 3 }).sum::<usize>();
    let tlen = (end2 - 5_000) as i64;
    for name in ["pairA", "pairB"] {
        sam += &line(name, 99, 5_000, &c1, &s1, (40_001, tlen));
        sam += &line(name, 147, 40_000, &c2, &s2, (5_001, -tlen));
    }
    sam += &line("short2", 16, 30_000, "20M5I25M", &s[..50], (0, 0));
    let sam_path = dir.join("in.sam");
    std::fs::write(&sam_path, sam).unwrap();
    Data { dir, sam: sam_path, fasta: fasta_path }
}

fn p(path: &Path) -> &str {
    path.to_str().unwrap()
}

/// Records of any file as the oracle prints them.
fn oracle_records(oracle: &Path, path: &Path) -> Vec<u8> {
    sam_records(&oracle_ok(oracle, &["view", "--no-PG", p(path)]).stdout)
}

/// Records of any file as mdsam prints them.
fn mdsam_records(path: &Path, extra: &[&str]) -> Vec<u8> {
    let mut args = vec!["view", "--no-PG"];
    args.extend_from_slice(extra);
    args.push(p(path));
    sam_records(&run_ok(&support::mdsam_bin(), &args).stdout)
}

/// BGZF data inflated (both BAMs are uncompressed, `-u`, so the blocks are stored).
fn inflate_stored(bgzf: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    let mut at = 0;
    while at + 18 <= bgzf.len() {
        let bsize = u16::from_le_bytes([bgzf[at + 16], bgzf[at + 17]]) as usize + 1;
        let block = &bgzf[at..at + bsize];
        let isize = u32::from_le_bytes(block[bsize - 4..].try_into().unwrap()) as usize;
        // A stored deflate block: 1 header byte, LEN, NLEN, then the bytes.
        if isize > 0 {
            assert_eq!(block[18] & 0b110, 0, "not a stored block");
            out.extend_from_slice(&block[18 + 5..18 + 5 + isize]);
        }
        at += bsize;
    }
    out
}

#[test]
fn sam_to_bam_and_back_agrees_both_ways() {
    let Some(oracle) = support::oracle() else { return };
    let d = write_data("long_cigar_view");
    let mdsam = support::mdsam_bin();
    let (m_bam, o_bam) = (d.path("m.bam"), d.path("o.bam"));
    run_ok(&mdsam, &["view", "--no-PG", "-u", "-o", p(&m_bam), p(&d.sam)]);
    oracle_ok(&oracle, &["view", "--no-PG", "-u", "-o", p(&o_bam), p(&d.sam)]);
    let expected = oracle_records(&oracle, &d.sam);
    assert!(expected.windows(6).all(|w| w != b"CG:B:I"), "oracle SAM shows the real CIGAR");
    assert_same_sam(&oracle_records(&oracle, &m_bam), &expected, "mdsam BAM read by samtools");
    assert_same_sam(&mdsam_records(&o_bam, &[]), &expected, "samtools BAM read by mdsam");
    assert_same_sam(&mdsam_records(&m_bam, &[]), &expected, "mdsam BAM read by mdsam");
    assert_same_sam(&mdsam_records(&d.sam, &[]), &expected, "SAM read by mdsam");
    // The record bytes themselves: placeholder, data, then CG:B:I.
    let (m, o) = (std::fs::read(&m_bam).unwrap(), std::fs::read(&o_bam).unwrap());
    assert!(inflate_stored(&m) == inflate_stored(&o), "inflated BAM bytes differ");
}

/// SAM holding BAM's placeholder and `CG` tag (a conversion that kept it) gets the real CIGAR
/// back, with htslib's warning for each such record.
#[test]
fn placeholder_sam_gets_the_real_cigar_with_the_warning() {
    let Some(oracle) = support::oracle() else { return };
    let d = write_data("long_cigar_placeholder");
    // Each long read as BAM stores it: <l_seq>S<ref_len>N, the operations in CG:B:I last.
    let text = std::fs::read_to_string(&d.sam).unwrap();
    let mut placeholder = String::new();
    for l in text.lines() {
        let mut f: Vec<String> = l.split('\t').map(str::to_string).collect();
        if !l.starts_with('@') && f[5].len() > 2 * 65535 {
            let ops = parse_cigar(&f[5]);
            let span: u32 =
                ops.iter().filter(|&&o| matches!(o & 0xf, 0 | 2 | 3 | 7 | 8)).map(|o| o >> 4).sum();
            f[5] = format!("{}S{}N", f[9].len(), span);
            let values: Vec<String> = ops.iter().map(u32::to_string).collect();
            f.push(format!("CG:B:I,{}", values.join(",")));
        }
        placeholder += &f.join("\t");
        placeholder.push('\n');
    }
    let ph = d.path("placeholder.sam");
    std::fs::write(&ph, placeholder).unwrap();
    let want = run(&oracle, &["view", "--no-PG", p(&ph)]);
    let got = run(&support::mdsam_bin(), &["view", "--no-PG", p(&ph)]);
    assert!(
        want.status.success() && got.status.success(),
        "{}",
        String::from_utf8_lossy(&got.stderr)
    );
    assert_same_sam(&sam_records(&got.stdout), &sam_records(&want.stdout), "placeholder SAM");
    assert_same_sam(&sam_records(&got.stdout), &oracle_records(&oracle, &d.sam), "real CIGAR");
    assert_eq!(String::from_utf8_lossy(&got.stderr), String::from_utf8_lossy(&want.stderr));
    assert!(String::from_utf8_lossy(&want.stderr).contains("[W::bam_tag2cigar] long1 encodes"));
}

fn parse_cigar(text: &str) -> Vec<u32> {
    let mut ops = Vec::new();
    let mut len = 0u32;
    for c in text.bytes() {
        if c.is_ascii_digit() {
            len = len * 10 + u32::from(c - b'0');
        } else {
            ops.push(len << 4 | b"MIDNSHP=X".iter().position(|&o| o == c).unwrap() as u32);
            len = 0;
        }
    }
    ops
}

#[test]
fn sort_depth_and_stats_see_the_real_cigar() {
    let Some(oracle) = support::oracle() else { return };
    let d = write_data("long_cigar_sort");
    let mdsam = support::mdsam_bin();
    let bam = d.path("in.bam");
    oracle_ok(&oracle, &["view", "--no-PG", "-b", "-o", p(&bam), p(&d.sam)]);
    for order in [&["-n"][..], &[][..]] {
        // Position order last: its output is used below.
        let (m, o) = (d.path("m.sorted.bam"), d.path("o.sorted.bam"));
        let mut args = vec!["sort", "--no-PG", "-o"];
        run_ok(&mdsam, &[&args[..], &[p(&m)], order, &[p(&bam)]].concat());
        args.push(p(&o));
        oracle_ok(&oracle, &[&args[..], order, &[p(&bam)]].concat());
        let context = format!("sort {order:?}");
        assert_same_sam(&oracle_records(&oracle, &m), &oracle_records(&oracle, &o), &context);
    }
    // depth needs sorted, indexed input: samtools' sort, each tool's index (compared too).
    let sorted = d.path("o.sorted.bam");
    let (m_bai, o_bai) = (d.path("m.bai"), d.path("o.sorted.bam.bai"));
    run_ok(&mdsam, &["index", "-o", p(&m_bai), p(&sorted)]);
    oracle_ok(&oracle, &["index", "-o", p(&o_bai), p(&sorted)]);
    assert!(std::fs::read(&m_bai).unwrap() == std::fs::read(&o_bai).unwrap(), "BAI differs");
    for region in [&["-r", "chr1:900-200000"][..], &[][..]] {
        let args = [&["depth", "-a"][..], region, &[p(&sorted)]].concat();
        let (got, want) = (run_ok(&mdsam, &args), oracle_ok(&oracle, &args));
        assert!(got.stdout == want.stdout, "depth -a {region:?} differs");
    }
    let data_lines = |o: std::process::Output| -> Vec<String> {
        let text = String::from_utf8_lossy(&o.stdout).into_owned();
        text.lines().filter(|l| !l.starts_with('#')).map(str::to_string).collect()
    };
    // stats takes seconds on any long read, samtools' too: BAM input only.
    for input in [&bam] {
        let stats = ["stats", p(input)];
        let got = data_lines(run_ok(&mdsam, &stats));
        let want = data_lines(oracle_ok(&oracle, &stats));
        for (g, w) in got.iter().zip(&want) {
            assert_eq!(g, w, "stats on {}", input.display());
        }
        assert_eq!(got.len(), want.len());
    }
}

#[test]
fn markdup_after_fixmate_and_sort_matches() {
    let Some(oracle) = support::oracle() else { return };
    let d = write_data("long_cigar_markdup");
    let mdsam = support::mdsam_bin();
    // Both start from samtools' BAM: every step reads and writes the placeholder + CG form.
    let bam = d.path("in.bam");
    oracle_ok(&oracle, &["view", "--no-PG", "-b", "-o", p(&bam), p(&d.sam)]);
    let mut outputs = Vec::new();
    for (tool, tag) in [(&mdsam, "m"), (&oracle, "o")] {
        let named = d.path(&format!("{tag}.name.bam"));
        let fixed = d.path(&format!("{tag}.fix.bam"));
        let sorted = d.path(&format!("{tag}.pos.bam"));
        let marked = d.path(&format!("{tag}.md.bam"));
        run_ok(tool, &["sort", "--no-PG", "-n", "-o", p(&named), p(&bam)]);
        run_ok(tool, &["fixmate", "--no-PG", "-m", p(&named), p(&fixed)]);
        run_ok(tool, &["sort", "--no-PG", "-o", p(&sorted), p(&fixed)]);
        run_ok(tool, &["markdup", "--no-PG", p(&sorted), p(&marked)]);
        outputs.push(oracle_records(&oracle, &marked));
    }
    assert_same_sam(&outputs[0], &outputs[1], "fixmate, sort, markdup");
    // The duplicate pair is found through the long CIGARs' ends (reverse mates' 5' positions).
    let text = String::from_utf8_lossy(&outputs[0]).into_owned();
    let duplicates = text.lines().filter(|l| {
        let flag: u16 = l.split('\t').nth(1).unwrap().parse().unwrap();
        flag & 0x400 != 0
    });
    assert_eq!(duplicates.count(), 2, "one pair marked duplicate");
}

#[test]
fn cram_round_trip_keeps_the_real_cigar() {
    let Some(oracle) = support::oracle() else { return };
    let d = write_data("long_cigar_cram");
    let mdsam = support::mdsam_bin();
    let (m_cram, o_cram) = (d.path("m.cram"), d.path("o.cram"));
    let reference = format!("--reference={}", p(&d.fasta));
    run_ok(&mdsam, &["view", "--no-PG", "-C", &reference, "-o", p(&m_cram), p(&d.sam)]);
    oracle_ok(&oracle, &["view", "--no-PG", "-C", &reference, "-o", p(&o_cram), p(&d.sam)]);
    let expected = sam_records(&oracle_ok(&oracle, &["view", &reference, p(&o_cram)]).stdout);
    let by_oracle = sam_records(&oracle_ok(&oracle, &["view", &reference, p(&m_cram)]).stdout);
    assert_same_sam(&by_oracle, &expected, "mdsam CRAM read by samtools");
    assert_same_sam(
        &mdsam_records(&o_cram, &[&reference]),
        &expected,
        "samtools CRAM read by mdsam",
    );
}

#[test]
fn calmd_matches() {
    let Some(oracle) = support::oracle() else { return };
    let d = write_data("long_cigar_calmd");
    let args = ["calmd", "--no-PG", p(&d.sam), p(&d.fasta)];
    let got = run_ok(&support::mdsam_bin(), &args);
    let want = oracle_ok(&oracle, &args);
    assert_same_sam(&sam_records(&got.stdout), &sam_records(&want.stdout), "calmd");
}

/// BAM cannot hold a long CIGAR whose reference span reaches 2^28 (its placeholder's `N`):
/// samtools' error, exit 1; SAM output is fine.
#[test]
fn bam_refuses_a_span_beyond_the_placeholder() {
    let Some(oracle) = support::oracle() else { return };
    let dir = support::scratch_dir("long_cigar_span");
    let n = 70_000;
    let cigar: String = (0..n).map(|i| if i % 2 == 0 { "1M" } else { "8000N" }).collect();
    let seq = "A".repeat(n / 2);
    let sam =
        format!("@SQ\tSN:chr1\tLN:400000000\nwide\t0\tchr1\t1\t60\t{cigar}\t*\t0\t0\t{seq}\t*\n");
    let path = dir.join("wide.sam");
    std::fs::write(&path, sam).unwrap();
    let out = dir.join("o.bam");
    let args = ["view", "--no-PG", "-b", "-o", p(&out), p(&path)];
    let (got, want) = (run(&support::mdsam_bin(), &args), run(&oracle, &args));
    assert_eq!(got.status.code(), want.status.code());
    let first = |o: &std::process::Output| {
        String::from_utf8_lossy(&o.stderr).lines().next().map(str::to_string)
    };
    assert_eq!(first(&got), first(&want));
    let sam_out = run_ok(&support::mdsam_bin(), &["view", p(&path)]);
    assert_same_sam(&sam_records(&sam_out.stdout), &oracle_records(&oracle, &path), "SAM out");
}
