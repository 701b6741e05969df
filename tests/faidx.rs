//! `faidx`, `fqidx` and `dict` against the samtools 1.24 oracle on a generated reference (several
//! sequences, line lengths, lower case, runs of N; plain and BGZF) and FASTQ: index files byte
//! for byte, region output, messages and exit statuses, `-o` outputs with their own indexes.

use std::path::{Path, PathBuf};
use std::process::Output;

use mdsam::io::bgzf::block::{BLOCK_DATA_MAX, Deflater, EOF_BLOCK};

use crate::support::{mdsam_bin, oracle, run, scratch_dir};

/// A small deterministic generator (no dependency on `rand`'s stream).
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

/// (name and description, length, bases per line, lower-case, N runs) of each sequence.
const SEQUENCES: &[(&str, usize, usize, bool, bool)] = &[
    ("chr1 first sequence", 150_000, 60, false, true),
    ("chr2", 3_333, 70, true, false),
    ("chrM\tmito", 1_000, 50, false, true),
    ("HLA:1", 777, 80, false, false),
    ("short", 7, 60, false, false),
];

fn reference_text() -> Vec<u8> {
    let mut rng = Lcg(19);
    let mut text = Vec::new();
    for &(name, len, width, lower, n_runs) in SEQUENCES {
        text.extend_from_slice(format!(">{name}\n").as_bytes());
        let mut seq: Vec<u8> = (0..len).map(|_| rng.base()).collect();
        if n_runs {
            seq[100..250].fill(b'N');
        }
        if lower {
            seq[10..400].make_ascii_lowercase();
        }
        for line in seq.chunks(width) {
            text.extend_from_slice(line);
            text.push(b'\n');
        }
    }
    text
}

fn fastq_text() -> Vec<u8> {
    let mut rng = Lcg(7);
    let mut text = Vec::new();
    for (i, len) in [150usize, 151, 90, 300].iter().enumerate() {
        let seq: Vec<u8> = (0..*len).map(|_| rng.base()).collect();
        let qual: Vec<u8> = (0..*len).map(|_| b'!' + (rng.next() % 41) as u8).collect();
        text.extend_from_slice(format!("@read{i} extra\n").as_bytes());
        // Two lines each for the long read: fqidx accepts wrapped records.
        let width = if *len > 200 { 200 } else { *len };
        for line in seq.chunks(width) {
            text.extend_from_slice(line);
            text.push(b'\n');
        }
        text.extend_from_slice(b"+\n");
        for line in qual.chunks(width) {
            text.extend_from_slice(line);
            text.push(b'\n');
        }
    }
    text
}

/// `text` as `bgzip` writes it: full 0xff00-byte blocks, then the end-of-file block.
pub(crate) fn bgzf(text: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    let mut deflater = Deflater::new(6);
    for chunk in text.chunks(BLOCK_DATA_MAX) {
        deflater.deflate_into(chunk, &mut out);
    }
    out.extend_from_slice(&EOF_BLOCK);
    out
}

/// Writes `name` with `bytes` into a fresh directory for each tool; returns (mdsam's, oracle's).
fn twin_inputs(test: &str, name: &str, bytes: &[u8]) -> (PathBuf, PathBuf) {
    let dir = scratch_dir(test);
    let paths: Vec<PathBuf> = ["mdsam", "oracle"]
        .iter()
        .map(|side| {
            std::fs::create_dir_all(dir.join(side)).unwrap();
            let path = dir.join(side).join(name);
            std::fs::write(&path, bytes).unwrap();
            path
        })
        .collect();
    (paths[0].clone(), paths[1].clone())
}

fn s(path: &Path) -> &str {
    path.to_str().unwrap()
}

/// Runs the same arguments through both tools, `{in}` standing for each side's input.
fn both(oracle: &Path, args: &[&str], inputs: (&Path, &Path)) -> (Output, Output) {
    let fill = |input: &Path| -> Vec<String> {
        args.iter()
            .map(|a| a.replace("{in}", s(input)).replace("{dir}", s(input.parent().unwrap())))
            .collect()
    };
    let mine = fill(inputs.0);
    let theirs = fill(inputs.1);
    let mine: Vec<&str> = mine.iter().map(String::as_str).collect();
    let theirs: Vec<&str> = theirs.iter().map(String::as_str).collect();
    (run(&mdsam_bin(), &mine), run(oracle, &theirs))
}

/// stderr as two lists: htslib's log lines (`[E::`, `[W::`) and samtools' own, each in order.
/// The pysam-built oracle sends samtools' own lines through a captured stream that it prints
/// after htslib's, so only the order within each list is samtools'.
fn stderr_streams(text: &str) -> (Vec<&str>, Vec<&str>) {
    text.lines().partition(|l| l.starts_with("[E::") || l.starts_with("[W::"))
}

/// Both tools gave the same stdout, stderr (paths made relative) and exit status.
fn assert_same(mine: &Output, theirs: &Output, inputs: (&Path, &Path), context: &str) {
    let strip = |text: &[u8], dir: &Path| String::from_utf8_lossy(text).replace(s(dir), "DIR");
    let (dm, dt) = (inputs.0.parent().unwrap(), inputs.1.parent().unwrap());
    assert_eq!(strip(&mine.stdout, dm), strip(&theirs.stdout, dt), "stdout of {context}");
    let (em, et) = (strip(&mine.stderr, dm), strip(&theirs.stderr, dt));
    assert_eq!(stderr_streams(&em), stderr_streams(&et), "stderr of {context}");
    assert_eq!(mine.status.code(), theirs.status.code(), "exit status of {context}");
}

/// Both sides wrote `file` (next to their input) with the same bytes.
fn assert_same_file(inputs: (&Path, &Path), file: &str) {
    let read = |input: &Path| {
        let path = input.parent().unwrap().join(file);
        std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
    };
    assert!(read(inputs.0) == read(inputs.1), "{file} differs");
}

#[test]
fn indexes_plain_and_bgzf_references_byte_for_byte() {
    let Some(oracle) = oracle() else { return };
    let text = reference_text();
    let (m, t) = twin_inputs("faidx-index-plain", "ref.fa", &text);
    let (mo, to) = both(&oracle, &["faidx", "{in}"], (&m, &t));
    assert_same(&mo, &to, (&m, &t), "faidx ref.fa");
    assert_same_file((&m, &t), "ref.fa.fai");

    let (m, t) = twin_inputs("faidx-index-bgzf", "ref.fa.gz", &bgzf(&text));
    let (mo, to) = both(&oracle, &["faidx", "{in}"], (&m, &t));
    assert_same(&mo, &to, (&m, &t), "faidx ref.fa.gz");
    assert_same_file((&m, &t), "ref.fa.gz.fai");
    assert_same_file((&m, &t), "ref.fa.gz.gzi");
    let gzi = std::fs::read(m.with_file_name("ref.fa.gz.gzi")).unwrap();
    assert!(gzi.len() > 8 && gzi[0] > 0, "the reference spans several blocks");

    // Named index files.
    let (mo, to) = both(
        &oracle,
        &["faidx", "--fai-idx", "{dir}/named.fai", "--gzi-idx", "{dir}/named.gzi", "{in}"],
        (&m, &t),
    );
    assert_same(&mo, &to, (&m, &t), "faidx --fai-idx --gzi-idx");
    assert_same_file((&m, &t), "named.fai");
    assert_same_file((&m, &t), "named.gzi");
}

/// Region sets and options, each run on the plain and the BGZF reference.
#[test]
fn regions_match_the_oracle() {
    let Some(oracle) = oracle() else { return };
    let text = reference_text();
    let cases: &[&[&str]] = &[
        &["chr1:70000-140000", "chr2:100-200", "HLA:1", "short"],
        &["chr1:1-1", "chr1:60-61", "chr2:1,000-1,100", "chrM:1k-1.2k"],
        &["chr1:0-5", "chr1:149990-160000", "chr2:5000-5010", "chr2:3333", "chr2:-10", "chr2:100-"],
        &["{HLA:1}:5-20", "chrM:900-0", "short:3"],
        &["nope"],
        &["chr1:10-5"],
        &["chr1:1-5x", "chr1:2-3"],
        &["-c", "nope", "chr1:1-3", "{bad"],
        &["-n", "7", "chr2:1-50", "chrM:1-20"],
        &["-n", "0", "chr1:1-300"],
        &["-n", "-4", "short"],
        &["-i", "chr2:1-80", "chrM:95-260"],
        &["-i", "--mark-strand", "sign", "chr1:1-10"],
        &["--mark-strand", "custom,+,-", "-i", "chr1:1-10"],
        &["--mark-strand", "no", "-i", "short"],
        &["--mark-strand", "bogus", "short"],
    ];
    for (name, bytes) in [("ref.fa", text.clone()), ("ref.fa.gz", bgzf(&text))] {
        let (m, t) = twin_inputs(&format!("faidx-regions-{name}"), name, &bytes);
        // Each side builds its own index on the first fetch.
        for case in cases {
            let mut args = vec!["faidx", "{in}"];
            args.extend_from_slice(case);
            let (mo, to) = both(&oracle, &args, (&m, &t));
            assert_same(&mo, &to, (&m, &t), &format!("{name} {case:?}"));
        }
        assert_same_file((&m, &t), &format!("{name}.fai"));
    }
}

#[test]
fn region_files_and_outputs_with_their_indexes() {
    let Some(oracle) = oracle() else { return };
    let (m, t) = twin_inputs("faidx-outputs", "ref.fa", &reference_text());
    for input in [&m, &t] {
        let list = "chr1:1-100\nchr2:3000-3400\r\nchrM\n";
        std::fs::write(input.with_file_name("regions.txt"), list).unwrap();
        std::fs::write(input.with_file_name("empty.txt"), "").unwrap();
    }
    let runs: &[(&[&str], &[&str])] = &[
        (&["-r", "{dir}/regions.txt", "short"], &[]),
        (&["-r", "{dir}/empty.txt", "short"], &[]),
        (&["-r", "{dir}/missing.txt"], &[]),
        (
            &["--write-index", "-n", "50", "-r", "{dir}/regions.txt", "-o", "{dir}/out.fa"],
            &["out.fa", "out.fa.fai"],
        ),
        (
            &["--write-index", "-i", "chr2", "chrM:3-9", "-o", "{dir}/out2.fa.gz"],
            &["out2.fa.gz.fai"],
        ),
        (&["-o", "{in}", "chr1"], &[]),
    ];
    for (args, files) in runs {
        let mut full = vec!["faidx", "{in}"];
        full.extend_from_slice(args);
        let (mo, to) = both(&oracle, &full, (&m, &t));
        assert_same(&mo, &to, (&m, &t), &format!("{args:?}"));
        for file in *files {
            assert_same_file((&m, &t), file);
        }
    }
    // The compressed output is BGZF and reads back as the oracle's does.
    let decompress = |input: &Path| {
        let out = run(&oracle, &["faidx", s(&input.with_file_name("out2.fa.gz")), "chr2/rc"]);
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        out.stdout
    };
    assert_eq!(decompress(&m), decompress(&t));
    let head = std::fs::read(m.with_file_name("out2.fa.gz")).unwrap();
    assert_eq!(&head[..4], b"\x1f\x8b\x08\x04", "BGZF output");
    // Threads deflate the blocks; the file and its .gzi do not change.
    let threaded = |threads: &str| {
        let out = m.with_file_name(format!("t{threads}.fa.gz"));
        let args = ["faidx", "-@", threads, "--write-index", s(&m), "chr1", "-o", s(&out)];
        assert!(run(&mdsam_bin(), &args).status.success());
        let gzi = std::fs::read(out.with_file_name(format!("t{threads}.fa.gz.gzi"))).unwrap();
        (std::fs::read(&out).unwrap(), gzi)
    };
    let (one, three) = (threaded("0"), threaded("2"));
    assert!(one.1.len() > 8 && one.1[0] > 1, "several blocks");
    assert!(one == three, "-@ 2 wrote other bytes than -@ 0");
}

#[test]
fn fqidx_indexes_and_fetches_reads_with_qualities() {
    let Some(oracle) = oracle() else { return };
    let text = fastq_text();
    for (name, bytes) in [("reads.fq", text.clone()), ("reads.fq.gz", bgzf(&text))] {
        let (m, t) = twin_inputs(&format!("fqidx-{name}"), name, &bytes);
        let (mo, to) = both(&oracle, &["fqidx", "{in}"], (&m, &t));
        assert_same(&mo, &to, (&m, &t), &format!("fqidx {name}"));
        assert_same_file((&m, &t), &format!("{name}.fai"));
        let cases: &[&[&str]] = &[
            &["read0", "read3:150-260"],
            &["-n", "40", "read1:2-100", "read3"],
            &["-i", "read2"],
            &["-c", "gone", "read0:1-2"],
            &["gone"],
        ];
        for case in cases {
            let mut args = vec!["fqidx", "{in}"];
            args.extend_from_slice(case);
            let (mo, to) = both(&oracle, &args, (&m, &t));
            assert_same(&mo, &to, (&m, &t), &format!("fqidx {name} {case:?}"));
        }
    }
    // faidx -f reads the same file as FASTQ; plain faidx refuses its FASTQ index.
    let (m, t) = twin_inputs("fqidx-as-faidx", "reads.fq", &text);
    for args in [&["faidx", "-f", "{in}", "read1:5-9"][..], &["faidx", "{in}", "read1"]] {
        let (mo, to) = both(&oracle, args, (&m, &t));
        assert_same(&mo, &to, (&m, &t), &format!("{args:?}"));
    }
}

#[test]
fn broken_inputs_fail_as_samtools_does() {
    let Some(oracle) = oracle() else { return };
    let cases: &[(&str, &[u8])] = &[
        ("ragged.fa", b">a\nACGT\nACGTAC\n"),
        ("truncated.fq", b"@a\nACGT\n+\nII\n"),
        ("noseq.fa", b">a\nAC\n>b"),
        ("mixed.fa", b">a\nAC\n@b\nAC\n+\nII\n"),
        ("text.fa", b"hello\n"),
        ("empty.fa", b""),
    ];
    for (name, bytes) in cases {
        let (m, t) = twin_inputs(&format!("faidx-bad-{name}"), name, bytes);
        for args in [&["faidx", "{in}"][..], &["faidx", "{in}", "a"]] {
            let (mo, to) = both(&oracle, args, (&m, &t));
            assert_same(&mo, &to, (&m, &t), &format!("{name} {args:?}"));
            assert_eq!(mo.status.code(), Some(1), "{name} fails");
        }
    }
    // gzip that is not BGZF, and a file that does not exist.
    let mut gz = Vec::new();
    {
        use std::io::Write;
        let mut enc = flate2::write::GzEncoder::new(&mut gz, flate2::Compression::default());
        enc.write_all(&reference_text()).unwrap();
        enc.finish().unwrap();
    }
    let (m, t) = twin_inputs("faidx-bad-gzip", "ref.fa.gz", &gz);
    let (mo, to) = both(&oracle, &["faidx", "{in}"], (&m, &t));
    assert_same(&mo, &to, (&m, &t), "gzip input");
    // Damaged BGZF: a block cut short, a flipped payload byte (CRC mismatch), no EOF block.
    let whole = bgzf(&reference_text());
    let second_block = 1 + u16::from_le_bytes([whole[16], whole[17]]) as usize;
    let mut flipped = whole.clone();
    flipped[second_block + 100] ^= 0xff;
    let damaged: [(&str, Vec<u8>); 3] = [
        ("cut.fa.gz", whole[..second_block + 500].to_vec()),
        ("flipped.fa.gz", flipped),
        ("no-eof.fa.gz", whole[..whole.len() - EOF_BLOCK.len()].to_vec()),
    ];
    for (name, bytes) in &damaged {
        let (m, t) = twin_inputs(&format!("faidx-bad-{name}"), name, bytes);
        let (mo, to) = both(&oracle, &["faidx", "{in}"], (&m, &t));
        assert_same(&mo, &to, (&m, &t), name);
    }
    let (mo, to) = both(&oracle, &["faidx", "{dir}/absent.fa", "chr1"], (&m, &t));
    assert_same(&mo, &to, (&m, &t), "missing input");
    assert_eq!(mo.status.code(), Some(1));
}

#[test]
fn dict_matches_the_oracle() {
    let Some(oracle) = oracle() else { return };
    let text = reference_text();
    for (name, bytes) in [("ref.fa", text.clone()), ("ref.fa.gz", bgzf(&text))] {
        let (m, t) = twin_inputs(&format!("dict-{name}"), name, &bytes);
        for input in [&m, &t] {
            std::fs::write(input.with_file_name("ref.alt"), "@SQ\tSN:x\nchr2\t0\nHLA:1\n\n")
                .unwrap();
        }
        let cases: &[&[&str]] = &[
            &["{in}"],
            &["-a", "asm1", "-s", "Homo sapiens", "-u", "ftp://x/ref.fa", "{in}"],
            &["-A", "-H", "{in}"],
            &["-l", "{dir}/ref.alt", "-u", "u", "{in}"],
            &["-o", "{dir}/out.dict", "-u", "u", "{in}"],
        ];
        for case in cases {
            let mut args = vec!["dict"];
            args.extend_from_slice(case);
            let (mo, to) = both(&oracle, &args, (&m, &t));
            let context = format!("dict {name} {case:?}");
            // UR: holds each side's own directory.
            assert_same(&mo, &to, (&m, &t), &context);
        }
        assert_same_file((&m, &t), "out.dict");
        let out = std::fs::read_to_string(m.with_file_name("out.dict")).unwrap();
        assert_eq!(out.lines().count(), 1 + SEQUENCES.len(), "one @SQ per sequence");
    }
}
