//! CRAM written by other software (htsjdk, the CRAM spec's examples): each shape is made by taking
//! a CRAM the oracle wrote apart and changing the one field or block involved (an empty block
//! of each codec, a header container shorter than its blocks, landmarks off, a Huffman code
//! without symbols, a negative slice start, a lying record count), then `view`, `view -c`,
//! `flagstat`, `idxstats` and `index` are run by mdsam and by the oracle and must agree: the same
//! output where samtools reads the file, an error (exit 1, one line) where it refuses it.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use crate::support::{mdsam_bin, oracle, oracle_ok, run_ok, scratch_dir};

fn text(path: &Path) -> &str {
    path.to_str().expect("UTF-8 path")
}

// ---- A CRAM taken apart and put back together (spec §2.3, §7, §8) ----

fn read_itf8(b: &[u8], at: &mut usize) -> i32 {
    let b0 = u32::from(b[*at]);
    let (extra, mut v) = match b[*at].leading_ones() {
        0 => (0, b0),
        1 => (1, b0 & 0x3f),
        2 => (2, b0 & 0x1f),
        3 => (3, b0 & 0x0f),
        _ => (4, b0 & 0x0f),
    };
    for i in 1..=extra {
        let byte = u32::from(b[*at + i]);
        v = if i == 4 { (v << 4) | (byte & 0x0f) } else { (v << 8) | byte };
    }
    *at += 1 + extra;
    v as i32
}

fn read_ltf8(b: &[u8], at: &mut usize) -> i64 {
    let b0 = b[*at];
    let extra = b0.leading_ones().min(8) as usize;
    let mut v = if extra >= 7 { 0 } else { i64::from(b0 & (0xff >> (extra + 1))) };
    for i in 1..=extra {
        v = (v << 8) | i64::from(b[*at + i]);
    }
    *at += 1 + extra;
    v
}

fn itf8(out: &mut Vec<u8>, v: i32) {
    let u = v as u32;
    match u {
        0..0x80 => out.push(u as u8),
        0x80..0x4000 => out.extend_from_slice(&[0x80 | (u >> 8) as u8, u as u8]),
        0x4000..0x20_0000 => {
            out.extend_from_slice(&[0xc0 | (u >> 16) as u8, (u >> 8) as u8, u as u8])
        }
        0x20_0000..0x1000_0000 => out.extend_from_slice(&[
            0xe0 | (u >> 24) as u8,
            (u >> 16) as u8,
            (u >> 8) as u8,
            u as u8,
        ]),
        _ => out.extend_from_slice(&[
            0xf0 | (u >> 28) as u8,
            (u >> 20) as u8,
            (u >> 12) as u8,
            (u >> 4) as u8,
            (u & 0x0f) as u8,
        ]),
    }
}

fn ltf8(out: &mut Vec<u8>, v: i64) {
    if (0..0x80).contains(&v) {
        out.push(v as u8);
    } else {
        out.push(0xff);
        out.extend_from_slice(&v.to_be_bytes());
    }
}

#[derive(Clone)]
struct Block {
    method: u8,
    content_type: u8,
    id: i32,
    raw_size: i32,
    data: Vec<u8>,
}

const SLICE_HEADER: u8 = 2;

impl Block {
    fn parse(b: &[u8], at: &mut usize, major: u8) -> Block {
        let (method, content_type) = (b[*at], b[*at + 1]);
        *at += 2;
        let id = read_itf8(b, at);
        let size = read_itf8(b, at) as usize;
        let raw_size = read_itf8(b, at);
        let data = b[*at..*at + size].to_vec();
        *at += size + if major >= 3 { 4 } else { 0 };
        Block { method, content_type, id, raw_size, data }
    }

    fn bytes(&self, major: u8) -> Vec<u8> {
        let mut out = vec![self.method, self.content_type];
        itf8(&mut out, self.id);
        itf8(&mut out, self.data.len() as i32);
        itf8(&mut out, self.raw_size);
        out.extend_from_slice(&self.data);
        if major >= 3 {
            out.extend_from_slice(&crc32fast::hash(&out).to_le_bytes());
        }
        out
    }
}

#[derive(Clone)]
struct Container {
    reference: i32,
    start: i32,
    span: i32,
    records: i32,
    counter: i64,
    bases: i64,
    blocks: i32,
    landmarks: Vec<i32>,
    /// The container's stated length, when it is not the body's.
    length: Option<i32>,
    body: Vec<u8>,
}

impl Container {
    fn parse(b: &[u8], at: &mut usize, major: u8) -> Container {
        let length = i32::from_le_bytes(b[*at..*at + 4].try_into().unwrap());
        *at += 4;
        let reference = read_itf8(b, at);
        let start = read_itf8(b, at);
        let span = read_itf8(b, at);
        let records = read_itf8(b, at);
        let counter = if major >= 3 { read_ltf8(b, at) } else { i64::from(read_itf8(b, at)) };
        let bases = read_ltf8(b, at);
        let blocks = read_itf8(b, at);
        let landmarks = (0..read_itf8(b, at)).map(|_| read_itf8(b, at)).collect();
        *at += if major >= 3 { 4 } else { 0 };
        let body = b[*at..*at + length as usize].to_vec();
        *at += length as usize;
        let length = None;
        Container {
            reference,
            start,
            span,
            records,
            counter,
            bases,
            blocks,
            landmarks,
            length,
            body,
        }
    }

    fn bytes(&self, major: u8) -> Vec<u8> {
        let mut out = self.length.unwrap_or(self.body.len() as i32).to_le_bytes().to_vec();
        for v in [self.reference, self.start, self.span, self.records] {
            itf8(&mut out, v);
        }
        if major >= 3 {
            ltf8(&mut out, self.counter);
        } else {
            itf8(&mut out, self.counter as i32);
        }
        ltf8(&mut out, self.bases);
        itf8(&mut out, self.blocks);
        itf8(&mut out, self.landmarks.len() as i32);
        for &l in &self.landmarks {
            itf8(&mut out, l);
        }
        if major >= 3 {
            out.extend_from_slice(&crc32fast::hash(&out).to_le_bytes());
        }
        out.extend_from_slice(&self.body);
        out
    }

    fn blocks(&self, major: u8) -> Vec<Block> {
        let mut at = 0;
        let mut blocks = Vec::new();
        while at < self.body.len() {
            blocks.push(Block::parse(&self.body, &mut at, major));
        }
        blocks
    }

    /// The body made of `blocks`, with landmarks where the slice headers now are.
    fn set_blocks(&mut self, blocks: &[Block], major: u8) {
        self.blocks += blocks.len() as i32 - self.blocks(major).len() as i32;
        self.body.clear();
        self.landmarks.clear();
        for block in blocks {
            if block.content_type == SLICE_HEADER {
                self.landmarks.push(self.body.len() as i32);
            }
            self.body.extend_from_slice(&block.bytes(major));
        }
    }
}

#[derive(Clone)]
struct Cram {
    major: u8,
    definition: Vec<u8>,
    /// The header container first, the end-of-file container last.
    containers: Vec<Container>,
}

impl Cram {
    fn read(path: &Path) -> Cram {
        let b = std::fs::read(path).unwrap();
        let major = b[4];
        let mut at = 26;
        let mut containers = Vec::new();
        while at < b.len() {
            containers.push(Container::parse(&b, &mut at, major));
        }
        Cram { major, definition: b[..26].to_vec(), containers }
    }

    fn write(&self, path: &Path) {
        let mut out = self.definition.clone();
        for c in &self.containers {
            out.extend_from_slice(&c.bytes(self.major));
        }
        std::fs::write(path, out).unwrap();
    }

    /// The containers holding records.
    fn data(&mut self) -> impl Iterator<Item = &mut Container> {
        self.containers.iter_mut().filter(|c| c.records > 0)
    }
}

/// A slice header block's fields: the reference fields, records, counter, block count, content
/// ids, and the rest (embedded reference id, MD5, tags) as stored.
struct SliceHeader {
    fields: [i32; 4],
    counter: i64,
    blocks: i32,
    ids: Vec<i32>,
    rest: Vec<u8>,
}

impl SliceHeader {
    fn parse(data: &[u8], major: u8) -> SliceHeader {
        let mut at = 0;
        let fields = [0; 4].map(|_| read_itf8(data, &mut at));
        let counter =
            if major >= 3 { read_ltf8(data, &mut at) } else { i64::from(read_itf8(data, &mut at)) };
        let blocks = read_itf8(data, &mut at);
        let ids = (0..read_itf8(data, &mut at)).map(|_| read_itf8(data, &mut at)).collect();
        SliceHeader { fields, counter, blocks, ids, rest: data[at..].to_vec() }
    }

    fn bytes(&self, major: u8) -> Vec<u8> {
        let mut out = Vec::new();
        for v in self.fields {
            itf8(&mut out, v);
        }
        if major >= 3 {
            ltf8(&mut out, self.counter);
        } else {
            itf8(&mut out, self.counter as i32);
        }
        itf8(&mut out, self.blocks);
        itf8(&mut out, self.ids.len() as i32);
        for &id in &self.ids {
            itf8(&mut out, id);
        }
        out.extend_from_slice(&self.rest);
        out
    }
}

/// Rewrites every slice header of every data container with `edit`, and the blocks after it
/// with `add` (blocks to append to the slice).
fn edit_slices(cram: &mut Cram, mut edit: impl FnMut(&mut SliceHeader), add: &[Block]) {
    let major = cram.major;
    for c in cram.data() {
        let mut blocks = Vec::new();
        let old = c.blocks(major);
        let mut i = 0;
        while i < old.len() {
            let mut block = old[i].clone();
            i += 1;
            if block.content_type != SLICE_HEADER {
                blocks.push(block);
                continue;
            }
            let mut header = SliceHeader::parse(&block.data, major);
            let own = header.blocks as usize;
            edit(&mut header);
            header.blocks += add.len() as i32;
            header.ids.extend(add.iter().map(|b| b.id));
            block.data = header.bytes(major);
            block.raw_size = block.data.len() as i32;
            blocks.push(block);
            blocks.extend_from_slice(&old[i..i + own]);
            blocks.extend_from_slice(add);
            i += own;
        }
        c.set_blocks(&blocks, major);
    }
}

// ---- Inputs and the comparison ----

/// A FASTA of two contigs and a SAM of reads on them (mismatches, an insertion, a deletion, a
/// soft clip, an unmapped pair), without `@RG` lines unless `read_group`.
fn inputs(dir: &Path, read_group: bool) -> (PathBuf, PathBuf) {
    let mut seed = 7u64;
    let mut base = move || {
        seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        b"ACGT"[(seed >> 60) as usize & 3]
    };
    let contigs: Vec<(&str, Vec<u8>)> = vec![
        ("c1", (0..400).map(|_| base()).collect()),
        ("c2", (0..200).map(|_| base()).collect()),
    ];
    let fasta = dir.join("ref.fa");
    let mut fa = Vec::new();
    let mut sam = b"@HD\tVN:1.6\tSO:coordinate\n".to_vec();
    for (name, bases) in &contigs {
        fa.extend_from_slice(format!(">{name}\n").as_bytes());
        fa.extend_from_slice(bases);
        fa.push(b'\n');
        sam.extend_from_slice(format!("@SQ\tSN:{name}\tLN:{}\n", bases.len()).as_bytes());
    }
    if read_group {
        sam.extend_from_slice(b"@RG\tID:g1\tSM:s\n");
    }
    std::fs::write(&fasta, fa).unwrap();
    let rg = if read_group { "\tRG:Z:g1" } else { "" };
    for (i, (name, bases)) in contigs.iter().enumerate() {
        for (n, pos) in (10..bases.len() - 40).step_by(23).enumerate() {
            let mut seq = bases[pos..pos + 30].to_vec();
            let cigar = match n % 4 {
                0 => "30M".to_string(),
                1 => {
                    seq[7] = if seq[7] == b'A' { b'C' } else { b'A' };
                    "30M".to_string()
                }
                2 => {
                    seq.splice(12..12, *b"GG");
                    seq.truncate(30);
                    "12M2I16M".to_string()
                }
                _ => {
                    seq = [&bases[pos..pos + 10], &bases[pos + 13..pos + 33]].concat();
                    "3S7M3D20M".to_string()
                }
            };
            let pos = if n % 4 == 3 { pos + 4 } else { pos + 1 };
            let seq = String::from_utf8(seq).unwrap();
            let flag = if n % 5 == 0 { 16 } else { 0 };
            sam.extend_from_slice(
                format!("r{i}_{n}\t{flag}\t{name}\t{pos}\t60\t{cigar}\t*\t0\t0\t{seq}\t*{rg}\n")
                    .as_bytes(),
            );
        }
    }
    for mate in [77, 141] {
        sam.extend_from_slice(
            format!("u\t{mate}\t*\t0\t0\t*\t*\t0\t0\tACGTTGCA\tIIIIIIII{rg}\n").as_bytes(),
        );
    }
    let path = dir.join("in.sam");
    std::fs::write(&path, sam).unwrap();
    (fasta, path)
}

/// The oracle's CRAM `version` of `sam` against `fasta`, taken apart.
fn oracle_cram(oracle: &Path, dir: &Path, sam: &Path, fasta: &Path, version: &str) -> Cram {
    let path = dir.join(format!("oracle-{version}.cram"));
    let option = format!("version={version}");
    oracle_ok(
        oracle,
        &[
            "view",
            "-C",
            "--output-fmt-option",
            &option,
            "-T",
            text(fasta),
            "-o",
            text(&path),
            text(sam),
        ],
    );
    Cram::read(&path)
}

/// `program args…` without `REF_PATH`/`REF_CACHE` (the `@SQ` `UR` names the FASTA).
fn run_plain(program: &Path, args: &[&str]) -> Output {
    Command::new(program)
        .args(args)
        .env_remove("REF_PATH")
        .env_remove("REF_CACHE")
        .output()
        .expect("run")
}

/// `mdsam args…` as [`run_plain`], with its address space limited to 16 GB: a damaged count
/// that sizes an allocation fails there even where the kernel would overcommit it.
fn run_mdsam(args: &[&str]) -> Output {
    let bin = mdsam_bin();
    let mut full = vec!["-c", "ulimit -v 16000000 && exec \"$0\" \"$@\"", text(&bin)];
    full.extend_from_slice(args);
    run_plain(Path::new("sh"), &full)
}

fn gunzip(path: &Path) -> Vec<u8> {
    let mut out = Vec::new();
    let file = std::fs::File::open(path).unwrap();
    std::io::Read::read_to_end(&mut flate2::read::MultiGzDecoder::new(file), &mut out).unwrap();
    out
}

/// `view`, `view -c`, `flagstat`, `idxstats` and `index` of `cram` by mdsam and by the oracle:
/// the same exit status and output; mdsam's errors are one line naming the file. Returns
/// whether the oracle read it.
fn same_as_oracle(oracle: &Path, cram: &Path, what: &str) -> bool {
    let path = text(cram);
    let mut read = true;
    for args in
        [&["view", path][..], &["view", "-c", path], &["flagstat", path], &["idxstats", path]]
    {
        let want = run_plain(oracle, args);
        let got = run_mdsam(args);
        let stderr = String::from_utf8_lossy(&got.stderr);
        assert_eq!(
            got.status.code(),
            want.status.code(),
            "{what}: {args:?}: mdsam {stderr} / samtools {}",
            String::from_utf8_lossy(&want.stderr)
        );
        assert!(!stderr.contains("panicked"), "{what}: {args:?}: {stderr}");
        if want.status.success() {
            assert_eq!(
                String::from_utf8_lossy(&got.stdout),
                String::from_utf8_lossy(&want.stdout),
                "{what}: {args:?}"
            );
        } else {
            read = false;
            let lines: Vec<&str> = stderr.lines().filter(|l| !l.starts_with("[W::")).collect();
            assert!(lines.len() == 1 && lines[0].contains(path), "{what}: {args:?}: {stderr}");
        }
    }
    let (ours, theirs) = (cram.with_extension("mdsam.crai"), cram.with_extension("oracle.crai"));
    let want = run_plain(oracle, &["index", path, text(&theirs)]);
    let got = run_mdsam(&["index", path, text(&ours)]);
    assert_eq!(
        got.status.code(),
        want.status.code(),
        "{what}: index: mdsam {} / samtools {}",
        String::from_utf8_lossy(&got.stderr),
        String::from_utf8_lossy(&want.stderr)
    );
    if want.status.success() {
        assert_eq!(
            String::from_utf8_lossy(&gunzip(&ours)),
            String::from_utf8_lossy(&gunzip(&theirs)),
            "{what}: index"
        );
    }
    read
}

/// A copy of `cram` changed by `edit`, written next to it as `name`.
fn variant(cram: &Cram, dir: &Path, name: &str, edit: impl FnOnce(&mut Cram)) -> PathBuf {
    let mut copy = cram.clone();
    edit(&mut copy);
    let path = dir.join(name);
    copy.write(&path);
    path
}

// ---- The shapes ----

/// Issue 45.1: a header without `@RG` and records with read group -1 (the CRAM spec's example
/// files): `view -c` and `flagstat` read only flags and must not look the read group up.
#[test]
fn a_header_without_read_groups_reads_in_every_command() {
    let Some(oracle) = oracle() else { return };
    let dir = scratch_dir("cram_foreign_no_read_groups");
    let (fasta, sam) = inputs(&dir, false);
    for version in ["3.0", "2.1"] {
        let cram = oracle_cram(&oracle, &dir, &sam, &fasta, version);
        let path = variant(&cram, &dir, &format!("no-rg-{version}.cram"), |_| {});
        assert!(same_as_oracle(&oracle, &path, &format!("no @RG, CRAM {version}")));
    }
    // With read groups too, every command agrees.
    let (fasta, sam) = inputs(&dir, true);
    let cram = oracle_cram(&oracle, &dir, &sam, &fasta, "3.0");
    let path = variant(&cram, &dir, "rg.cram", |_| {});
    assert!(same_as_oracle(&oracle, &path, "@RG, CRAM 3.0"));
}

/// Issue 45.2: htsjdk writes blocks of zero bytes compressed with rANS; htslib takes any block
/// whose raw size is 0 as empty, whatever its method. One such block of each codec is added to
/// every slice.
#[test]
fn empty_blocks_of_every_codec_read_as_samtools_reads_them() {
    let Some(oracle) = oracle() else { return };
    let dir = scratch_dir("cram_foreign_empty_blocks");
    let (fasta, sam) = inputs(&dir, true);
    let cram = oracle_cram(&oracle, &dir, &sam, &fasta, "3.0");
    // gzip, bzip2, xz, rANS 4x8, rANS Nx16, arithmetic, fqzcomp, name tokeniser.
    for method in 1..=8u8 {
        let empty = Block { method, content_type: 4, id: 90, raw_size: 0, data: Vec::new() };
        let path = variant(&cram, &dir, &format!("empty-{method}.cram"), |c| {
            edit_slices(c, |_| {}, &[empty]);
        });
        assert!(same_as_oracle(&oracle, &path, &format!("empty block, method {method}")));
    }
}

/// Issue 45.4: a read running past the end of its reference (a circular contig): htslib's
/// decoder ends MD at the first base past the end and counts nothing there in NM, whichever
/// tool wrote the CRAM.
#[test]
fn md_and_nm_of_reads_past_the_reference_end_match_samtools() {
    let Some(oracle) = oracle() else { return };
    let dir = scratch_dir("cram_foreign_past_reference_end");
    let fasta = dir.join("ref.fa");
    std::fs::write(&fasta, ">c\nACGTACGTAC\n").unwrap();
    let sam = dir.join("in.sam");
    let reads = [
        ("r1", 2, "10M", "CGTACGTACG"),
        ("r2", 2, "10M", "CGTACGTACN"),
        ("r3", 3, "4M2D6M", "GTACGTACGA"),
        ("r4", 5, "10M", "ACGTACGTAC"),
        ("r5", 6, "2M1I5M", "CGGTACGA"),
        ("r6", 8, "2S4M", "TTGTAC"),
    ];
    let mut lines = "@SQ\tSN:c\tLN:10\n".to_string();
    for (name, pos, cigar, seq) in reads {
        lines += &format!("{name}\t0\tc\t{pos}\t60\t{cigar}\t*\t0\t0\t{seq}\t*\n");
    }
    std::fs::write(&sam, lines).unwrap();
    let theirs = dir.join("oracle.cram");
    oracle_ok(&oracle, &["view", "-C", "-T", text(&fasta), "-o", text(&theirs), text(&sam)]);
    let ours = dir.join("mdsam.cram");
    run_ok(&mdsam_bin(), &["view", "-C", "-T", text(&fasta), "-o", text(&ours), text(&sam)]);
    for (cram, writer) in [(&theirs, "samtools"), (&ours, "mdsam")] {
        assert!(same_as_oracle(
            &oracle,
            cram,
            &format!("past the reference end, written by {writer}")
        ));
    }
}

/// Issue 45.7: htsjdk's CRAM 2.1 header containers state a length a byte or two short of their
/// blocks; htslib reads the blocks and goes on after them (in 3.x too).
#[test]
fn a_header_container_shorter_than_its_blocks_reads() {
    let Some(oracle) = oracle() else { return };
    let dir = scratch_dir("cram_foreign_short_header");
    let (fasta, sam) = inputs(&dir, true);
    for (version, short) in [("2.1", 1), ("2.1", 2), ("3.0", 2)] {
        let cram = oracle_cram(&oracle, &dir, &sam, &fasta, version);
        let path = variant(&cram, &dir, &format!("short-{short}-{version}.cram"), |c| {
            let header = &mut c.containers[0];
            header.length = Some(header.body.len() as i32 - short);
        });
        let what = format!("header container {short} short, CRAM {version}");
        assert!(same_as_oracle(&oracle, &path, &what));
    }
}

/// Issue 45.7: landmarks that point past the container. htslib decodes slices one after another
/// and never looks at them, except `index`, which refuses the file.
#[test]
fn landmarks_outside_the_container_decode_and_fail_to_index() {
    let Some(oracle) = oracle() else { return };
    let dir = scratch_dir("cram_foreign_landmarks");
    let (fasta, sam) = inputs(&dir, true);
    for version in ["2.1", "3.0"] {
        let cram = oracle_cram(&oracle, &dir, &sam, &fasta, version);
        let path = variant(&cram, &dir, &format!("landmarks-{version}.cram"), |c| {
            for container in c.data() {
                let len = container.body.len() as i32;
                container.landmarks.iter_mut().for_each(|l| *l += len);
            }
        });
        assert!(same_as_oracle(&oracle, &path, &format!("landmarks outside, CRAM {version}")));
        let index = run_mdsam(&["index", text(&path), text(&dir.join("x.crai"))]);
        let stderr = String::from_utf8_lossy(&index.stderr);
        assert!(stderr.contains("does not match landmark 0"), "{stderr}");
    }
}

/// The data-series encodings of a compression header block's data with `entry` (key, codec,
/// parameters) appended.
fn with_series_encoding(data: &[u8], key: &[u8; 2], codec: i32, params: &[u8]) -> Vec<u8> {
    let mut at = 0;
    let preservation = read_itf8(data, &mut at) as usize;
    at += preservation;
    let series_start = at;
    let size = read_itf8(data, &mut at) as usize;
    let entries_at = at;
    let count = read_itf8(data, &mut at);
    let end = entries_at + size;
    let mut entries = data[at..end].to_vec();
    entries.extend_from_slice(key);
    itf8(&mut entries, codec);
    itf8(&mut entries, params.len() as i32);
    entries.extend_from_slice(params);
    let mut map = Vec::new();
    itf8(&mut map, count + 1);
    map.extend_from_slice(&entries);
    let mut out = data[..series_start].to_vec();
    itf8(&mut out, map.len() as i32);
    out.extend_from_slice(&map);
    out.extend_from_slice(&data[end..]);
    out
}

/// Issue 45.8: a Huffman code without symbols, declared (as htsjdk does) for a data series that
/// holds no values: read only if a value is decoded from it.
#[test]
fn a_huffman_code_without_symbols_for_an_unused_series_reads() {
    let Some(oracle) = oracle() else { return };
    let dir = scratch_dir("cram_foreign_empty_huffman");
    let (fasta, sam) = inputs(&dir, true);
    for version in ["3.0", "2.1"] {
        let cram = oracle_cram(&oracle, &dir, &sam, &fasta, version);
        let major = cram.major;
        let path = variant(&cram, &dir, &format!("huffman-{version}.cram"), |c| {
            for container in c.data() {
                let mut blocks = container.blocks(major);
                // Hard clips: none of the reads has one. Codec 3, no symbols, no lengths.
                blocks[0].data = with_series_encoding(&blocks[0].data, b"HC", 3, &[0, 0]);
                blocks[0].raw_size = blocks[0].data.len() as i32;
                container.set_blocks(&blocks, major);
            }
        });
        assert!(same_as_oracle(&oracle, &path, &format!("empty Huffman, CRAM {version}")));
    }
}

/// Issue 45.9: a slice header with a negative start, which samtools refuses in every command:
/// so must mdsam, in the shared slice-header path, with samtools' message.
#[test]
fn a_negative_slice_start_fails_every_command() {
    let Some(oracle) = oracle() else { return };
    let dir = scratch_dir("cram_foreign_negative_start");
    let (fasta, sam) = inputs(&dir, true);
    for version in ["2.1", "3.0"] {
        let cram = oracle_cram(&oracle, &dir, &sam, &fasta, version);
        let path = variant(&cram, &dir, &format!("negative-{version}.cram"), |c| {
            edit_slices(c, |h| h.fields[1] = -5, &[]);
        });
        assert!(!same_as_oracle(&oracle, &path, &format!("negative start, CRAM {version}")));
        for args in [&["view", "-c", text(&path)][..], &["index", text(&path)]] {
            let out = run_mdsam(args);
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert!(stderr.contains("Negative values not permitted"), "{args:?}: {stderr}");
        }
    }
}

/// Issue 43.5: a container header whose record count says 2^31-1; the slices hold the records.
/// mdsam sized a buffer by the count (a 962 GB allocation) and aborted.
#[test]
fn a_container_record_count_of_two_billion_allocates_nothing() {
    let Some(oracle) = oracle() else { return };
    let dir = scratch_dir("cram_foreign_record_count");
    let (fasta, sam) = inputs(&dir, true);
    for version in ["3.0", "2.1"] {
        let cram = oracle_cram(&oracle, &dir, &sam, &fasta, version);
        let path = variant(&cram, &dir, &format!("count-{version}.cram"), |c| {
            c.data().for_each(|container| container.records = i32::MAX);
        });
        assert!(same_as_oracle(&oracle, &path, &format!("record count 2^31-1, CRAM {version}")));
    }
}
