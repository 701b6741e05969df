//! `calmd -r` (BAQ: `BQ`, `-A`'s `ZQ`, `-E`) and `-C` (mapping-quality cap) against the samtools
//! 1.24 oracle: simulated coordinate-sorted reads with indels, unmapped reads and reads without
//! bases (SAM and BAM, reference plain and BGZF, SAM and BAM out, mdsam at `-@ 0` and `-@ 2`);
//! hand-made reads at contig ends and with every CIGAR operation, long reads, missing qualities;
//! inputs that already carry `BQ`/`ZQ`, good and bad; a reference missing from the FASTA.
//!
//! The oracle (pysam) prints htslib's log lines before samtools' own: where a run has both,
//! stderr is compared as a sorted list of lines.

use std::path::{Path, PathBuf};

use mdsam::simulate::{Order, SimulateOptions};

use crate::support::{
    assert_same_sam, mdsam_bin, oracle, run, scratch_dir, simulated_fasta, simulated_sam,
};

fn s(p: &Path) -> &str {
    p.to_str().expect("UTF-8 path")
}

fn options() -> SimulateOptions {
    SimulateOptions {
        pairs: 1_500,
        seed: 41,
        n_refs: 3,
        ref_len: 60_000,
        order: Order::Coordinate,
        mate_unmapped_rate: 0.05,
        unmapped_pair_rate: 0.02,
        ..SimulateOptions::default()
    }
}

/// Sorted lines of `text` (see the module note on the oracle's stderr).
fn sorted_lines(text: &[u8]) -> Vec<String> {
    let mut lines: Vec<String> = String::from_utf8_lossy(text).lines().map(String::from).collect();
    lines.sort();
    lines
}

/// Runs `calmd args… input reference` with both tools and compares stdout (SAM, or BAM read
/// back as SAM when `bam`), stderr (in order unless `mixed_stderr`) and the exit status.
fn compare(oracle: &Path, args: &[&str], input: &Path, reference: &Path, bam: bool, mixed: bool) {
    let mut full = vec!["calmd", "--no-PG"];
    full.extend_from_slice(args);
    full.extend_from_slice(&[s(input), s(reference)]);
    let expected = run(oracle, &full);
    let as_sam = |out: &[u8], tag: &str| -> Vec<u8> {
        if !bam {
            return out.to_vec();
        }
        let path = input.with_extension(format!("{tag}.bam"));
        std::fs::write(&path, out).unwrap();
        run(oracle, &["view", "-h", "--no-PG", s(&path)]).stdout
    };
    let want = as_sam(&expected.stdout, "oracle");
    for threads in ["0", "2"] {
        let mut mine = vec!["calmd", "-@", threads];
        mine.extend_from_slice(&full[1..]);
        let got = run(&mdsam_bin(), &mine);
        let context = format!("{} (-@ {threads})", full.join(" "));
        assert_eq!(got.status.code(), expected.status.code(), "{context}: exit status");
        assert_same_sam(&as_sam(&got.stdout, "mdsam"), &want, &context);
        if mixed {
            assert_eq!(sorted_lines(&got.stderr), sorted_lines(&expected.stderr), "{context}");
        } else {
            assert_eq!(
                String::from_utf8_lossy(&got.stderr),
                String::from_utf8_lossy(&expected.stderr),
                "{context}: stderr"
            );
        }
    }
}

const BAQ_ARGS: &[&[&str]] = &[
    &["-r"],
    &["-E", "-r"],
    &["-Ar"],
    &["-AEr"],
    &["-C", "50"],
    &["-C", "50", "-r"],
    &["-e", "-r"],
    &["-C", "11", "-Ar", "-q"],
];

#[test]
fn baq_and_mapq_cap_match_the_oracle_on_simulated_reads() {
    let Some(oracle) = oracle() else { return };
    let dir = scratch_dir("calmd_baq_simulated");
    let opts = options();
    let sam = simulated_sam(&dir, &opts);
    let fasta = simulated_fasta(&dir, &opts);
    let gz = dir.join("ref.fa.gz");
    std::fs::write(&gz, crate::faidx::bgzf(&std::fs::read(&fasta).unwrap())).unwrap();
    let bam = dir.join("in.bam");
    run(&oracle, &["view", "-b", "--no-PG", "-o", s(&bam), s(&sam)]);
    for args in BAQ_ARGS {
        compare(&oracle, args, &sam, &fasta, false, false);
    }
    for args in [&["-r"][..], &["-AEr"], &["-C", "50", "-r"]] {
        compare(&oracle, args, &bam, &gz, false, false);
    }
    compare(&oracle, &["-rb"], &sam, &fasta, true, false);
    compare(&oracle, &["-Aru"], &bam, &gz, true, false);
}

/// Reference sequences of a FASTA file written by the simulator, by name.
fn read_fasta(path: &Path) -> Vec<(String, Vec<u8>)> {
    let mut refs: Vec<(String, Vec<u8>)> = Vec::new();
    for line in std::fs::read_to_string(path).unwrap().lines() {
        match line.strip_prefix('>') {
            Some(name) => refs.push((name.split_whitespace().next().unwrap().into(), Vec::new())),
            None => refs.last_mut().unwrap().1.extend_from_slice(line.as_bytes()),
        }
    }
    refs
}

/// A small deterministic generator.
struct Lcg(u64);

impl Lcg {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        self.0 >> 33
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    /// `bases` with about `percent` % of them changed.
    fn mutate(&mut self, bases: &[u8], percent: usize) -> Vec<u8> {
        bases
            .iter()
            .map(|&b| {
                if self.below(100) < percent {
                    b"CGTA"[b"ACGT".iter().position(|&c| c == b).unwrap_or(0)]
                } else {
                    b
                }
            })
            .collect()
    }
}

/// One hand-made read: (name, flag, position (1-based), CIGAR, bases, qualities or `*`).
type Read = (String, u16, usize, String, Vec<u8>, String);

/// Reads of one `kind` on reference `seq`: at its start and end, past its end, with `=`/`X`,
/// `H`/`P`, `N`, long (over 1000 bases, htslib's long-read parameters), many mismatches,
/// long insertions, `N` bases, missing qualities.
fn edge_read(rng: &mut Lcg, seq: &[u8], kind: usize) -> (usize, String, Vec<u8>) {
    let l = seq.len();
    let rl = [50, 100, 150][rng.below(3)];
    let at = |rng: &mut Lcg, room: usize| 1 + rng.below(l - room);
    let slice = |from: usize, to: usize| seq[from - 1..(to - 1).min(l)].to_vec();
    match kind {
        0 => (
            1,
            format!("3S{}M", rl - 3),
            [b"ACG".to_vec(), rng.mutate(&slice(1, rl - 2), 2)].concat(),
        ),
        1 => {
            let pos = l - rl + 20;
            let mut bases = rng.mutate(&slice(pos, l + 1), 2);
            bases.extend(b"ACGTTGCAAC".iter().cycle().take(rl - bases.len()));
            (pos, format!("{rl}M"), bases)
        }
        2 => (l - rl + 1, format!("{rl}M"), rng.mutate(&slice(l - rl + 1, l + 1), 2)),
        3 => {
            let pos = l - rl - 5;
            let bases = [slice(pos, pos + 40), slice(pos + 44, pos + rl + 4)].concat();
            (pos, format!("40M4D{}M", rl - 40), rng.mutate(&bases, 2))
        }
        4 => {
            let pos = at(rng, 300);
            let bases =
                [slice(pos, pos + 30), b"GG".to_vec(), slice(pos + 30, pos + rl - 2)].concat();
            (pos, format!("20=10M2I{}X", rl - 32), rng.mutate(&bases, 2))
        }
        5 => {
            let pos = at(rng, 300);
            (
                pos,
                format!("5H{}M2P{}M7H", rl / 2, rl - rl / 2),
                rng.mutate(&slice(pos, pos + rl), 2),
            )
        }
        6 => {
            let pos = at(rng, 600);
            let bases = [slice(pos, pos + 50), slice(pos + 250, pos + 200 + rl)].concat();
            (pos, format!("50M200N{}M", rl - 50), rng.mutate(&bases, 2))
        }
        7 => {
            let pos = at(rng, 1500);
            let bases = [slice(pos, pos + 600), slice(pos + 603, pos + 1203)].concat();
            (pos, "600M3D600M".into(), rng.mutate(&bases, 5))
        }
        8 => {
            let pos = at(rng, 300);
            let bases = [slice(pos, pos + 60), slice(pos + 80, pos + 170)].concat();
            (pos, "60M20D90M".into(), rng.mutate(&bases, 15))
        }
        9 => {
            let pos = at(rng, 300);
            let bases = [
                slice(pos, pos + 50),
                vec![b'T'; 12],
                slice(pos + 50, pos + 100),
                b"ACGT".repeat(5),
            ]
            .concat();
            (pos, "50M12I50M20S".into(), rng.mutate(&bases, 2))
        }
        _ => {
            let pos = at(rng, 300);
            let mut bases = rng.mutate(&slice(pos, pos + rl), 30);
            bases.iter_mut().step_by(7).for_each(|b| *b = b'N');
            (pos, format!("{rl}M"), bases)
        }
    }
}

/// A SAM file of hand-made reads against the references of `fasta` (header from `header_of`).
fn edge_sam(dir: &Path, fasta: &Path, header_of: &Path) -> PathBuf {
    let mut rng = Lcg(5);
    let mut reads: Vec<(usize, Read)> = Vec::new();
    for (tid, (name, seq)) in read_fasta(fasta).iter().enumerate() {
        for i in 0..55 {
            let (pos, cigar, bases) = edge_read(&mut rng, seq, i % 11);
            let qual = if i % 11 == 10 && i % 2 == 0 {
                "*".to_string()
            } else {
                (0..bases.len()).map(|_| (b'#' + rng.below(40) as u8) as char).collect()
            };
            let flag = [0, 16, 0, 16, 256, 2048][rng.below(6)];
            reads.push((tid, (format!("r{i}_{name}"), flag, pos, cigar, bases, qual)));
        }
        let far = seq.len() + 5;
        reads.push((
            tid,
            (format!("past_end_{name}"), 0, far, "20M".into(), b"ACGT".repeat(5), "*".into()),
        ));
        reads.push((
            tid,
            (
                format!("unmapped_{name}"),
                4,
                200,
                "*".into(),
                b"ACGTACGTAC".to_vec(),
                "I".repeat(10),
            ),
        ));
    }
    reads.sort_by_key(|(tid, r)| (*tid, r.2));
    let names: Vec<String> = read_fasta(fasta).into_iter().map(|(n, _)| n).collect();
    let header: String = std::fs::read_to_string(header_of)
        .unwrap()
        .lines()
        .filter(|l| l.starts_with("@SQ") || l.starts_with("@HD"))
        .map(|l| format!("{l}\n"))
        .collect();
    let mut text = header;
    for (tid, (name, flag, pos, cigar, bases, qual)) in reads {
        let mapq = [0, 3, 30, 60, 255][pos % 5];
        let bases = String::from_utf8(bases).unwrap();
        text.push_str(&format!(
            "{name}\t{flag}\t{}\t{pos}\t{mapq}\t{cigar}\t*\t0\t0\t{bases}\t{qual}\n",
            names[tid]
        ));
    }
    text.push_str("unplaced\t4\t*\t0\t0\t*\t*\t0\t0\tACGT\tIIII\n");
    let path = dir.join("edge.sam");
    std::fs::write(&path, text).unwrap();
    path
}

#[test]
fn baq_matches_the_oracle_at_contig_ends_and_on_every_cigar_operation() {
    let Some(oracle) = oracle() else { return };
    let dir = scratch_dir("calmd_baq_edges");
    let opts = SimulateOptions { pairs: 10, ..options() };
    let fasta = simulated_fasta(&dir, &opts);
    let sam = edge_sam(&dir, &fasta, &simulated_sam(&dir, &opts));
    for args in BAQ_ARGS {
        compare(&oracle, args, &sam, &fasta, false, false);
    }
}

/// `text` with `edit` applied to the first field starting with `prefix` of the records whose
/// number `n` (from 0) `pick`s.
fn edit_tags(
    text: &[u8],
    prefix: &str,
    pick: impl Fn(usize) -> bool,
    edit: impl Fn(&str) -> String,
) -> Vec<u8> {
    let mut out = String::new();
    let mut n = 0;
    for line in String::from_utf8_lossy(text).lines() {
        if line.starts_with('@') {
            out.push_str(line);
        } else {
            let fields: Vec<String> = line
                .split('\t')
                .map(|f| if f.starts_with(prefix) && pick(n) { edit(f) } else { f.to_string() })
                .collect();
            out.push_str(&fields.join("\t"));
            n += 1;
        }
        out.push('\n');
    }
    out.into_bytes()
}

#[test]
fn existing_bq_and_zq_tags_are_used_checked_or_refused_as_samtools_does() {
    let Some(oracle) = oracle() else { return };
    let dir = scratch_dir("calmd_baq_tags");
    let opts = SimulateOptions { pairs: 400, ..options() };
    let sam = simulated_sam(&dir, &opts);
    let fasta = simulated_fasta(&dir, &opts);
    let first = |args: &[&str]| {
        let mut full = vec!["calmd", "-Q", "--no-PG"];
        full.extend_from_slice(args);
        full.extend_from_slice(&[s(&sam), s(&fasta)]);
        run(&mdsam_bin(), &full).stdout
    };
    let with_bq = dir.join("bq.sam");
    std::fs::write(&with_bq, first(&["-r"])).unwrap();
    let with_zq = dir.join("zq.sam");
    std::fs::write(&with_zq, first(&["-Ar"])).unwrap();
    for input in [&with_bq, &with_zq] {
        for args in [&["-r"][..], &["-Ar"], &["-Er"]] {
            compare(&oracle, args, input, &fasta, false, false);
        }
    }
    // A BQ of the wrong type or length is warned about and computed again.
    let bad_bq = dir.join("bad-bq.sam");
    let text = std::fs::read(&with_bq).unwrap();
    let text = edit_tags(&text, "BQ:Z:", |n| n % 40 == 1, |_| "BQ:i:5".into());
    let text = edit_tags(&text, "BQ:Z:", |n| n % 40 == 2, |f| f[..f.len() - 3].into());
    std::fs::write(&bad_bq, text).unwrap();
    for args in [&["-r"][..], &["-Ar"]] {
        compare(&oracle, args, &bad_bq, &fasta, false, true);
    }
    // A ZQ of the wrong length ends the run there.
    let bad_zq = dir.join("bad-zq.sam");
    let text = std::fs::read(&with_zq).unwrap();
    std::fs::write(&bad_zq, edit_tags(&text, "ZQ:Z:", |n| n == 300, |f| f[..f.len() - 3].into()))
        .unwrap();
    for args in [&["-r"][..], &["-Ar"]] {
        compare(&oracle, args, &bad_zq, &fasta, false, true);
    }
}

#[test]
fn a_reference_missing_from_the_fasta_stops_baq_and_the_cap() {
    let Some(oracle) = oracle() else { return };
    let dir = scratch_dir("calmd_baq_missing_ref");
    let opts = SimulateOptions { pairs: 400, ..options() };
    let sam = simulated_sam(&dir, &opts);
    let fasta = simulated_fasta(&dir, &opts);
    // The FASTA without chr2.
    let text = std::fs::read_to_string(&fasta).unwrap();
    let mut kept = String::new();
    let mut keep = true;
    for line in text.lines() {
        if let Some(name) = line.strip_prefix('>') {
            keep = name.split_whitespace().next() != Some("chr2");
        }
        if keep {
            kept.push_str(line);
            kept.push('\n');
        }
    }
    let partial = dir.join("partial.fa");
    std::fs::write(&partial, kept).unwrap();
    for args in [&["-r"][..], &["-C", "50"], &["-C", "5"], &[]] {
        compare(&oracle, args, &sam, &partial, false, true);
    }
    compare(&oracle, &["-rb"], &sam, &partial, true, true);
}
