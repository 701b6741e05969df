//! `targetcut` and `phase` against the samtools 1.24 oracle: hand-written sparse reads (gaps,
//! deletions, insertions, reference skips, soft clips, N bases, low qualities, filtered flags, a
//! read past its reference's end) and simulated deep reads (over 255 at a position, where htslib
//! shuffles the bases with `drand48`), every option, BAQ with `-f`; two-haplotype simulated data
//! for `phase`. stdout, stderr and the exit status are compared byte for byte; `phase -b`'s files
//! record by record.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use mdsam::simulate::{Order, SimulateOptions};

use crate::support::{
    assert_same_sam, mdsam_bin, oracle, run, sam_without_pg, scratch_dir, simulated_fasta,
    simulated_sam, to_sam,
};

/// mdsam with delegation to a real samtools off, so only the native command can answer.
fn native(args: &[&str]) -> Output {
    Command::new(mdsam_bin()).args(args).env("MDSAM_SAMTOOLS", "/bin/false").output().unwrap()
}

fn same(oracle: &Path, dir: &Path, args: &[&str]) {
    let ours = native(args);
    let theirs = run(oracle, args);
    let context = format!("{} (in {})", args.join(" "), dir.display());
    crate::support::assert_same_outcome(&ours, &theirs, &context);
}

/// A small deterministic generator (64-bit LCG) for the hand-written reads.
struct Lcg(u64);

impl Lcg {
    fn below(&mut self, n: u64) -> u64 {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (self.0 >> 33) % n
    }
}

/// Sparse reads in three blocks per reference on `c1` and `c3` (none on `c2`), sorted, with
/// their FASTA (`ref.fa`); returns (SAM, FASTA, unsorted SAM).
fn sparse_reads(dir: &Path) -> (String, String, String) {
    let refs = [("c1", 3000u64), ("c2", 500), ("c3", 2000)];
    let mut rng = Lcg(7);
    let mut fasta = String::new();
    for (name, len) in refs {
        fasta.push_str(&format!(">{name}\n"));
        for i in 0..len {
            fasta.push(b"ACGT"[rng.below(4) as usize] as char);
            if i % 60 == 59 {
                fasta.push('\n');
            }
        }
        fasta.push('\n');
    }
    let mut header = String::from("@HD\tVN:1.6\tSO:coordinate\n");
    for (name, len) in refs {
        header.push_str(&format!("@SQ\tSN:{name}\tLN:{len}\n"));
    }
    let mut records: Vec<(usize, u64, String)> = Vec::new();
    for (tid, (name, len)) in refs.iter().enumerate() {
        if *name == "c2" {
            continue;
        }
        for (lo, hi) in [(100, 400), (900, 1000), (1500, 1900)] {
            for _ in 0..5 + rng.below(36) {
                let n = records.len();
                let l = 30 + rng.below(51);
                let pos = (lo + rng.below(hi - lo + 1)).min(len - l);
                let cigar = match rng.below(5) {
                    0 => format!("{l}M"),
                    1 => format!("10M2D{}M", l - 10),
                    2 => format!("5S{}M", l - 5),
                    3 => format!("20M3I{}M", l - 23),
                    _ => format!("15M100N{}M", l - 15),
                };
                let noisy = rng.below(20) == 0;
                let seq: String = (0..l)
                    .map(|_| {
                        (if noisy {
                            b"ACGTN"[rng.below(5) as usize]
                        } else {
                            b"ACGT"[rng.below(4) as usize]
                        }) as char
                    })
                    .collect();
                let qual: String = (0..l).map(|_| (35 + rng.below(39)) as u8 as char).collect();
                let flag = [0, 16, 0, 16, 1024, 256, 512, 0][rng.below(8) as usize];
                let mapq = [0, 5, 20, 60, 60][rng.below(5) as usize];
                let line = format!(
                    "r{n}\t{flag}\t{name}\t{pos}\t{mapq}\t{cigar}\t*\t0\t0\t{seq}\t{qual}\n"
                );
                records.push((tid, pos, line));
            }
        }
    }
    // A read running past c3's end (2000).
    let seq = "ACGT".repeat(10);
    records.push((
        2,
        1990,
        format!("past\t0\tc3\t1990\t60\t40M\t*\t0\t0\t{seq}\t{}\n", "I".repeat(40)),
    ));
    let unsorted: String = records.iter().rev().map(|r| r.2.as_str()).collect();
    records.sort_by_key(|r| (r.0, r.1));
    let sorted: String = records.iter().map(|r| r.2.as_str()).collect();
    let s = |p: PathBuf| p.to_str().unwrap().to_string();
    let (sam, fa, bad) = (dir.join("sparse.sam"), dir.join("ref.fa"), dir.join("unsorted.sam"));
    std::fs::write(&sam, format!("{header}{sorted}")).unwrap();
    std::fs::write(&bad, format!("{header}{unsorted}")).unwrap();
    std::fs::write(&fa, fasta).unwrap();
    (s(sam), s(fa), s(bad))
}

#[test]
fn targetcut_matches_the_oracle_on_sparse_reads() {
    let Some(oracle) = oracle() else { return };
    let dir = scratch_dir("targetcut_sparse");
    let (sam, fa, _) = sparse_reads(&dir);
    let (sam, fa) = (sam.as_str(), fa.as_str());
    let cases: &[&[&str]] = &[
        &[sam],
        &["-i", "10", sam],
        &["-i", "2", "-0", "1", sam],
        &["-Q", "0", "-i", "1", "-1", "5", sam],
        &["-i", "1", "-2", "1", sam],
        &["-Q", "30", "-i", "3", sam],
        &["-f", fa, "-i", "3", sam],
        &["--reference", fa, "-i", "1", "-Q", "20", sam],
    ];
    for args in cases {
        let mut full = vec!["targetcut"];
        full.extend_from_slice(args);
        same(&oracle, &dir, &full);
    }
}

#[test]
fn targetcut_matches_the_oracle_on_deep_simulated_reads() {
    let Some(oracle) = oracle() else { return };
    let dir = scratch_dir("targetcut_deep");
    // About 250 reads deep, more in places: over htslib's 255, where the bases are shuffled and cut.
    let opts = SimulateOptions {
        pairs: 2_000,
        seed: 5,
        n_refs: 1,
        ref_len: 1_200,
        read_len: 75,
        insert_mean: 150,
        insert_sd: 10,
        order: Order::Coordinate,
        ..SimulateOptions::default()
    };
    let sam = simulated_sam(&dir, &opts);
    let fa = simulated_fasta(&dir, &opts);
    let (sam, fa) = (sam.to_str().unwrap(), fa.to_str().unwrap());
    for args in [&[sam][..], &["-i", "20", "-Q", "25", sam], &["-f", fa, "-i", "5", sam]] {
        let mut full = vec!["targetcut"];
        full.extend_from_slice(args);
        same(&oracle, &dir, &full);
    }
}

#[test]
fn targetcut_failures_match_the_oracle() {
    let Some(oracle) = oracle() else { return };
    let dir = scratch_dir("targetcut_failures");
    let (sam, _, unsorted) = sparse_reads(&dir);
    let junk = dir.join("junk.txt");
    std::fs::write(&junk, "hello\n").unwrap();
    let missing = dir.join("missing.bam");
    let no_fasta = dir.join("none.fa");
    let (sam, junk) = (sam.as_str(), junk.to_str().unwrap());
    let (missing, no_fasta) = (missing.to_str().unwrap(), no_fasta.to_str().unwrap());
    let cases: &[&[&str]] = &[
        &[],
        &["-i", "10", &unsorted],
        &["-o", "x", sam],
        &["-x", sam],
        &["--threads", "2", sam],
        &["--verbosity", "x", sam],
        &["--input-fmt-option", "foo", sam],
        &[missing],
        &[junk],
        &["-f", no_fasta],
        &["-f", no_fasta, "-i", "5", sam],
    ];
    for args in cases {
        let mut full = vec!["targetcut"];
        full.extend_from_slice(args);
        same(&oracle, &dir, &full);
    }
}

/// A site where the second haplotype differs: dense (every 23 bases) in the first kilobase of
/// each five, every 61 in the second, one lone site in the fourth and none elsewhere, so reads
/// span many sites in places and phase sets break at the gaps (the lone site a set of one).
fn is_snp(p: i64) -> bool {
    match (p / 1000) % 5 {
        0 => p % 23 == 0,
        1 => p % 61 == 0,
        3 => p % 1000 == 500,
        _ => false,
    }
}

/// FNV-1a of a read name: which haplotype its template comes from.
fn name_hash(name: &str) -> u64 {
    name.bytes().fold(0xcbf29ce484222325, |h, b| (h ^ u64::from(b)).wrapping_mul(0x100000001b3))
}

/// The simulated reads as two haplotypes: templates of odd hash carry the other base (the next
/// of ACGT) at every site; one template in five switches haplotype between its mates (a
/// chimera). Returns the SAM path.
fn two_haplotypes(dir: &Path, opts: &SimulateOptions) -> String {
    let sam = simulated_sam(dir, opts);
    let text = std::fs::read_to_string(&sam).unwrap();
    let mut out = String::with_capacity(text.len());
    for line in text.lines() {
        let mut f: Vec<String> = line.split('\t').map(str::to_string).collect();
        if line.starts_with('@') || f[5] == "*" {
            out.push_str(line);
            out.push('\n');
            continue;
        }
        let flag: u32 = f[1].parse().unwrap();
        let h = name_hash(&f[0]);
        let mut hap = h % 2;
        if h.is_multiple_of(5) && flag & 128 != 0 {
            hap = 1 - hap;
        }
        if hap == 1 && flag & 4 == 0 {
            let mut seq = f[9].clone().into_bytes();
            let (mut pos, mut q) = (f[3].parse::<i64>().unwrap() - 1, 0usize);
            let mut len = 0i64;
            for c in f[5].bytes() {
                if c.is_ascii_digit() {
                    len = len * 10 + i64::from(c - b'0');
                    continue;
                }
                match c {
                    b'M' | b'=' | b'X' => {
                        for i in 0..len {
                            if is_snp(pos + i) {
                                let b = &mut seq[q + i as usize];
                                *b = match *b {
                                    b'A' => b'C',
                                    b'C' => b'G',
                                    b'G' => b'T',
                                    b'T' => b'A',
                                    other => other,
                                };
                            }
                        }
                        pos += len;
                        q += len as usize;
                    }
                    b'I' | b'S' => q += len as usize,
                    b'D' | b'N' => pos += len,
                    _ => {}
                }
                len = 0;
            }
            f[9] = String::from_utf8(seq).unwrap();
        }
        out.push_str(&f.join("\t"));
        out.push('\n');
    }
    let path = dir.join("two-haplotypes.sam");
    std::fs::write(&path, out).unwrap();
    path.to_str().unwrap().to_string()
}

fn haplotype_options(pairs: u64, ref_len: u32) -> SimulateOptions {
    SimulateOptions {
        pairs,
        seed: 3,
        n_refs: 2,
        ref_len,
        order: Order::Coordinate,
        ..SimulateOptions::default()
    }
}

#[test]
fn phase_matches_the_oracle_on_two_haplotypes() {
    let Some(oracle) = oracle() else { return };
    let dir = scratch_dir("phase_two_haplotypes");
    let sam = two_haplotypes(&dir, &haplotype_options(1_200, 10_000));
    // Sites listed with -l (1-based): some planted, some not, a name the header lacks.
    let sites = dir.join("sites.txt");
    std::fs::write(&sites, "chr1 24\nchr1\t47 x\nchr1 1000\nchrX 5\n  chr2 24\nchr2 70\n").unwrap();
    let (sam, sites) = (sam.as_str(), sites.to_str().unwrap());
    let cases: &[&[&str]] = &[
        &[sam],
        &["-k", "3", sam],
        &["-k", "8", "-A", sam],
        &["-F", sam],
        &["-q", "20", "-Q", "20", sam],
        &["-D", "40", "--min-BQ", "30", sam],
        &["-q", "0", "-k", "1", sam],
        &["-l", sites, sam],
        &["-l", sites, "-e", sam],
    ];
    for args in cases {
        let mut full = vec!["phase"];
        full.extend_from_slice(args);
        same(&oracle, &dir, &full);
    }
}

#[test]
fn phase_writes_the_oracles_reads_with_b() {
    let Some(oracle) = oracle() else { return };
    let dir = scratch_dir("phase_outputs");
    let sam = two_haplotypes(&dir, &haplotype_options(1_200, 10_000));
    for (extra, ext) in [(&[][..], "bam"), (&["-A", "-F", "--output-fmt", "sam"][..], "sam")] {
        let theirs_prefix = dir.join("theirs").to_str().unwrap().to_string();
        let ours_prefix = dir.join("ours").to_str().unwrap().to_string();
        let args = |prefix: &str| {
            let mut a = vec!["phase".to_string(), "-b".into(), prefix.to_string()];
            a.extend(extra.iter().map(|s| s.to_string()));
            a.push(sam.clone());
            a
        };
        let theirs_args = args(&theirs_prefix);
        let ours_args = args(&ours_prefix);
        let theirs = run(&oracle, &theirs_args.iter().map(String::as_str).collect::<Vec<_>>());
        let ours = native(&ours_args.iter().map(String::as_str).collect::<Vec<_>>());
        assert!(ours.stdout == theirs.stdout, "phase -b {extra:?}: stdout differs");
        assert_eq!(ours.status.code(), theirs.status.code());
        for middle in ["0", "1", "chimera"] {
            let t = sam_without_pg(&to_sam(
                &oracle,
                Path::new(&format!("{theirs_prefix}.{middle}.{ext}")),
            ));
            let o = sam_without_pg(&to_sam(
                &oracle,
                Path::new(&format!("{ours_prefix}.{middle}.{ext}")),
            ));
            assert!(t.split(|&c| c == b'\n').filter(|l| !l.starts_with(b"@")).count() > 10);
            assert_same_sam(&o, &t, &format!("phase -b {extra:?}: {middle}"));
        }
    }
}

#[test]
fn phase_matches_the_oracle_on_deep_columns() {
    let Some(oracle) = oracle() else { return };
    let dir = scratch_dir("phase_deep");
    // About 300 reads deep: over -D 256 (columns passed over) and over htslib's 255 (bases
    // shuffled with drand48) when -D allows them.
    let opts = SimulateOptions {
        read_len: 75,
        insert_mean: 150,
        insert_sd: 10,
        ..haplotype_options(2_500, 1_200)
    };
    let opts = SimulateOptions { n_refs: 1, ..opts };
    let sam = two_haplotypes(&dir, &opts);
    for args in [
        &[sam.as_str()][..],
        &["-D", "1000", sam.as_str()],
        &["-D", "1000", "-k", "4", sam.as_str()],
    ] {
        let mut full = vec!["phase"];
        full.extend_from_slice(args);
        same(&oracle, &dir, &full);
    }
}

#[test]
fn phase_failures_match_the_oracle() {
    let Some(oracle) = oracle() else { return };
    let dir = scratch_dir("phase_failures");
    let sam = two_haplotypes(&dir, &haplotype_options(300, 8_000));
    let text = std::fs::read_to_string(&sam).unwrap();
    let (head, body): (Vec<&str>, Vec<&str>) = text.lines().partition(|l| l.starts_with('@'));
    let unsorted = dir.join("unsorted.sam");
    let reversed: Vec<&str> = head.iter().chain(body.iter().rev()).copied().collect();
    std::fs::write(&unsorted, reversed.join("\n") + "\n").unwrap();
    let junk = dir.join("junk.txt");
    std::fs::write(&junk, "hello\n").unwrap();
    let missing = dir.join("missing.bam");
    let bad_prefix = dir.join("no-such-dir/out");
    let (unsorted, junk) = (unsorted.to_str().unwrap(), junk.to_str().unwrap());
    let (missing, bad_prefix) = (missing.to_str().unwrap(), bad_prefix.to_str().unwrap());
    let no_sites = dir.join("none.txt");
    let no_sites = no_sites.to_str().unwrap();
    let cases: &[&[&str]] = &[
        &[],
        &["-x", &sam],
        &[missing],
        &[junk],
        &[unsorted],
        &["--threads", "2", &sam],
        &["--input-fmt", "sam", &sam],
        &["--input-fmt-option", "foo", &sam],
        // 2^40 counts per site: samtools' allocation fails after the set's PS line.
        &["-k", "40", &sam],
        &["--output-fmt", "xyz", "-b", bad_prefix, &sam],
        &["-b", bad_prefix, &sam],
        &["-l", no_sites, &sam],
    ];
    for args in cases {
        let mut full = vec!["phase"];
        full.extend_from_slice(args);
        same(&oracle, &dir, &full);
    }
}
