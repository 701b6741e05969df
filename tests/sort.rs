//! `sort`, `collate` and `index` against the samtools 1.24 oracle on simulated and hand-made data.
//! Oracle calls are few per test (the pysam oracle takes ~0.3 s to start).

use std::path::Path;

use mdsam::io::index::Index;
use mdsam::simulate::{Order, SimulateOptions};

use crate::support::{
    assert_same_sam, mdsam_bin, oracle, oracle_ok, run, run_ok, scratch_dir, simulated_sam,
};

fn small(order: Order) -> SimulateOptions {
    SimulateOptions {
        pairs: 3_000,
        seed: 11,
        n_refs: 3,
        ref_len: 150_000,
        order,
        unmapped_pair_rate: 0.05,
        extra_tag_rate: 0.3,
        read_groups: 3,
        ..SimulateOptions::default()
    }
}

/// `sort ARGS -O SAM --no-PG -o - INPUT` with mdsam and with the oracle; the texts must agree.
fn same_sort(oracle: &Path, input: &Path, args: &[&str]) {
    let mut full = vec!["sort"];
    full.extend_from_slice(args);
    full.extend_from_slice(&["-O", "SAM", "--no-PG", "-o", "-", input.to_str().unwrap()]);
    let ours = run_ok(&mdsam_bin(), &full).stdout;
    let theirs = oracle_ok(oracle, &full).stdout;
    assert_same_sam(&ours, &theirs, &format!("sort {}", args.join(" ")));
}

#[test]
fn every_order_matches_oracle_on_simulated_data() {
    let Some(oracle) = oracle() else { return };
    let dir = scratch_dir("sort_every_order");
    let by_name = simulated_sam(&dir, &small(Order::Name));
    let by_coord = simulated_sam(&dir, &small(Order::Coordinate));
    // Coordinate, tags of every type (A, i, f, Z, H, B) and the minimiser order, from name order.
    for args in [
        &[][..],
        &["-t", "RG"],
        &["-t", "XT"],
        &["-t", "XI"],
        &["-t", "XF"],
        &["-t", "XH"],
        &["-t", "XB"],
        &["-M", "-K", "15"],
    ] {
        same_sort(&oracle, &by_name, args);
    }
    // Name orders (Illumina names: numbers of different widths), alone and under a tag.
    for args in [&["-n"][..], &["-N"], &["-n", "-t", "AS"], &["-N", "-t", "RG"], &["-@", "3", "-n"]]
    {
        same_sort(&oracle, &by_coord, args);
    }
    // Template-coordinate needs MC tags on every paired record with a mapped mate: keep primary
    // records and let the oracle's fixmate add them.
    let primary = dir.join("primary.sam");
    let out =
        run_ok(&mdsam_bin(), &["view", "-h", "-F", "0x900", by_name.to_str().unwrap()]).stdout;
    std::fs::write(&primary, out).unwrap();
    let fixed = dir.join("fixmate.sam");
    let out =
        oracle_ok(&oracle, &["fixmate", "-m", "-O", "SAM", primary.to_str().unwrap(), "-"]).stdout;
    std::fs::write(&fixed, out).unwrap();
    same_sort(&oracle, &fixed, &["--template-coordinate"]);
}

/// Hand-made records: names whose numbers differ in width and leading zeros, equal names with
/// every READ1/READ2/secondary/supplementary combination, equal positions on both strands, and
/// one tag with every type (and missing).
fn tricky_sam() -> Vec<u8> {
    let mut s = String::from(
        "@HD\tVN:1.4\tSO:unsorted\tGO:query\n@SQ\tSN:c1\tLN:1000\n@SQ\tSN:c2\tLN:1000\n",
    );
    let names = [
        "r10", "r9", "r010", "r1", "r01", "a1b", "a01c", "R1", "r_1", "r2x", "x100y2", "x100y10",
        "x99y",
    ];
    let flags = [0x41, 0x81, 0x141, 0x841, 0x881, 0x4, 0x10, 0x0];
    let tags = [
        "XV:i:5", "XV:f:2.5", "XV:Z:abc", "XV:A:q", "XV:B:c,1", "", "XV:i:-7", "XV:f:5", "XV:H:0A",
    ];
    for (i, name) in names.iter().cycle().take(60).enumerate() {
        let flag = flags[i % flags.len()];
        let (rname, pos) =
            if flag & 0x4 != 0 { ("*", 0) } else { (["c1", "c2"][i % 2], 100 + (i % 3) * 50) };
        let cigar = if flag & 0x4 != 0 { "*" } else { "4M" };
        let tag = tags[i % tags.len()];
        let tag = if tag.is_empty() { String::new() } else { format!("\t{tag}") };
        s.push_str(&format!(
            "{name}\t{flag}\t{rname}\t{pos}\t30\t{cigar}\t*\t0\t0\tACGT\tIIII{tag}\n"
        ));
    }
    s.into_bytes()
}

#[test]
fn names_ties_and_mixed_tag_types_match_oracle() {
    let Some(oracle) = oracle() else { return };
    let dir = scratch_dir("sort_tricky");
    let input = dir.join("tricky.sam");
    std::fs::write(&input, tricky_sam()).unwrap();
    for args in [&[][..], &["-n"], &["-N"], &["-t", "XV"], &["-n", "-t", "XV"], &["-N", "-t", "XV"]]
    {
        same_sort(&oracle, &input, args);
    }
}

/// Names in `sam` appear in one contiguous run each.
fn assert_grouped(sam: &[u8]) {
    let text = std::str::from_utf8(sam).unwrap();
    let mut seen = std::collections::HashSet::new();
    let mut last = "";
    for name in text.lines().filter(|l| !l.starts_with('@')).map(|l| l.split('\t').next().unwrap())
    {
        if name != last {
            assert!(seen.insert(name.to_string()), "{name} appears in two runs");
            last = name;
        }
    }
}

#[test]
fn collate_groups_mates_in_samtools_order() {
    let Some(oracle) = oracle() else { return };
    let dir = scratch_dir("collate_order");
    let input = simulated_sam(&dir, &small(Order::Coordinate));
    let input = input.to_str().unwrap();
    for args in [&["-O"][..], &["-f", "-r", "50", "-O"], &["-n", "7", "-O"]] {
        let mut full = vec!["collate", "--output-fmt=sam", "--no-PG"];
        full.extend_from_slice(args);
        full.push(input);
        let ours = run_ok(&mdsam_bin(), &full).stdout;
        if !args.contains(&"-f") {
            assert_grouped(&ours);
        }
        let theirs = oracle_ok(&oracle, &full).stdout;
        assert_same_sam(&ours, &theirs, &format!("collate {}", args.join(" ")));
    }
}

#[test]
fn index_and_write_index_are_identical_to_samtools_index() {
    let Some(oracle) = oracle() else { return };
    let dir = scratch_dir("index_identity");
    let input = simulated_sam(&dir, &SimulateOptions { pairs: 20_000, ..small(Order::Name) });
    let bam = dir.join("sorted.bam");
    let (bam_s, input_s) = (bam.to_str().unwrap(), input.to_str().unwrap());
    let with_idx = format!("{bam_s}##idx##{bam_s}.written.bai");
    run_ok(&mdsam_bin(), &["sort", "-@", "2", "--write-index", "-o", &with_idx, input_s]);
    run_ok(&mdsam_bin(), &["index", bam_s]);
    run_ok(&mdsam_bin(), &["index", "-c", bam_s]);
    let reference_bai = dir.join("ref.bai");
    let reference_csi = dir.join("ref.csi");
    oracle_ok(&oracle, &["index", bam_s, reference_bai.to_str().unwrap()]);
    oracle_ok(&oracle, &["index", "-c", bam_s, "-o", reference_csi.to_str().unwrap()]);
    let read = |p: &Path| std::fs::read(p).unwrap();
    let reference = read(&reference_bai);
    assert!(read(&dir.join("sorted.bam.bai")) == reference, "index differs from samtools index");
    assert!(
        read(&dir.join("sorted.bam.written.bai")) == reference,
        "--write-index differs from samtools index"
    );
    // CSI is BGZF-compressed (compressor-dependent bytes): compare the decoded indexes.
    let ours = Index::from_bytes(&read(&dir.join("sorted.bam.csi"))).unwrap();
    assert_eq!(ours, Index::from_bytes(&read(&reference_csi)).unwrap());
    // Region queries on our index give samtools' answer.
    let region = ["view", "-c", bam_s, "chr2:20000-60000"];
    let ours = run_ok(&mdsam_bin(), &region).stdout;
    assert_eq!(ours, oracle_ok(&oracle, &region).stdout);
}

/// BGZF-compressed SAM is indexed as htslib indexes it (one entry a line, `bgzf_tell` offsets),
/// across many blocks and pieces; an existing index file named second is the output, as
/// samtools decides by the file's content.
#[test]
fn bgzf_sam_is_indexed_as_samtools_indexes_it() {
    let Some(oracle) = oracle() else { return };
    let dir = scratch_dir("index_sam_gz");
    let sam = simulated_sam(&dir, &SimulateOptions { pairs: 60_000, ..small(Order::Coordinate) });
    let gz = dir.join("sorted.sam.gz");
    let (sam_s, gz_s) = (sam.to_str().unwrap(), gz.to_str().unwrap());
    oracle_ok(&oracle, &["view", "-h", "-o", gz_s, sam_s]);
    let read = |p: &Path| std::fs::read(p).unwrap();
    for (options, name) in [(&[][..], "bai"), (&["-c"], "csi"), (&["-m", "12"], "m12.csi")] {
        let (ours, theirs) =
            (dir.join(format!("ours-{name}.out")), dir.join(format!("theirs-{name}.out")));
        let (ours_s, theirs_s) = (ours.to_str().unwrap(), theirs.to_str().unwrap());
        let ours_args: Vec<&str> = [&["index"][..], options, &[gz_s, ours_s]].concat();
        let theirs_args: Vec<&str> = [&["index"][..], options, &[gz_s, theirs_s]].concat();
        oracle_ok(&oracle, &theirs_args);
        run_ok(&mdsam_bin(), &ours_args);
        assert_eq!(
            Index::from_bytes(&read(&ours)).unwrap(),
            Index::from_bytes(&read(&theirs)).unwrap(),
            "{name}"
        );
        // Again: the output named second now exists, and samtools (by its content, not its name)
        // still takes it as the index to write.
        run_ok(&mdsam_bin(), &ours_args);
        assert_eq!(
            Index::from_bytes(&read(&ours)).unwrap(),
            Index::from_bytes(&read(&theirs)).unwrap(),
            "{name} again"
        );
    }
    // An existing file that is not an index is a second input.
    let out = run(&mdsam_bin(), &["index", gz_s, sam_s]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("use -M"), "{out:?}");
}

/// The files left in `dir`.
fn files_in(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .map(|d| d.map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect())
        .unwrap_or_default()
}

#[test]
fn spilling_sort_is_identical_to_in_memory_sort() {
    let dir = scratch_dir("sort_spill");
    let tmp = dir.join("tmp");
    std::fs::create_dir_all(&tmp).unwrap();
    let prefix = format!("{}/run", tmp.display());
    let input = simulated_sam(&dir, &small(Order::Name));
    let input = input.to_str().unwrap();
    // Template-coordinate needs MC tags on every paired record with a mapped mate: primary
    // records only, through fixmate.
    let by_name = dir.join("by-name.bam");
    let fixed = dir.join("fixed.bam");
    run_ok(&mdsam_bin(), &["view", "-b", "-F", "0x900", "-o", by_name.to_str().unwrap(), input]);
    run_ok(&mdsam_bin(), &["fixmate", "-m", by_name.to_str().unwrap(), fixed.to_str().unwrap()]);
    for (args, file) in [
        (&[][..], input),
        (&["-n"], input),
        (&["-N"], input),
        (&["-t", "RG"], input),
        (&["-n", "-t", "XI"], input),
        (&["--template-coordinate"], fixed.to_str().unwrap()),
    ] {
        let sort = |extra: &[&str]| {
            let mut full = vec!["sort"];
            full.extend_from_slice(args);
            full.extend_from_slice(extra);
            full.extend_from_slice(&["-O", "SAM", "--no-PG", "-o", "-", file]);
            run_ok(&mdsam_bin(), &full).stdout
        };
        let in_memory = sort(&[]);
        // About 2 MB of records in memory against 400 KB: several runs.
        let spilled = sort(&["--max-memory", "400K", "-T", &prefix]);
        assert_same_sam(&spilled, &in_memory, &format!("spilling sort {}", args.join(" ")));
        assert!(files_in(&tmp).is_empty(), "temporary files left: {:?}", files_in(&tmp));
    }
    // It did spill: an unwritable prefix fails the small budget and not the large one.
    let bad = format!("{}/missing/run", dir.display());
    let out = crate::support::run(
        &mdsam_bin(),
        &["sort", "--max-memory", "400K", "-T", &bad, "-o", "/dev/null", input],
    );
    assert!(!out.status.success());
    run_ok(&mdsam_bin(), &["sort", "-T", &bad, "-o", "/dev/null", input]);
    // Without --max-memory the budget is -m per thread: 1M spills, 8 threads of 1M do not.
    let out = crate::support::run(
        &mdsam_bin(),
        &["sort", "-m", "1M", "-@", "1", "-T", &bad, "-o", "/dev/null", input],
    );
    assert!(!out.status.success());
    run_ok(&mdsam_bin(), &["sort", "-m", "1M", "-@", "8", "-T", &bad, "-o", "/dev/null", input]);
    // Same BAM bytes with --write-index, spilled or not, index included.
    let a = dir.join("a.bam");
    let b = dir.join("b.bam");
    let (a_s, b_s) = (a.to_str().unwrap(), b.to_str().unwrap());
    run_ok(&mdsam_bin(), &["sort", "--no-PG", "--write-index", "-o", a_s, input]);
    run_ok(
        &mdsam_bin(),
        &[
            "sort",
            "--no-PG",
            "--write-index",
            "--max-memory",
            "400K",
            "-T",
            &prefix,
            "-o",
            b_s,
            input,
        ],
    );
    assert!(std::fs::read(&a).unwrap() == std::fs::read(&b).unwrap());
    assert!(
        std::fs::read(format!("{a_s}.csi")).unwrap()
            == std::fs::read(format!("{b_s}.csi")).unwrap()
    );
    assert!(files_in(&tmp).is_empty());
}

#[cfg(unix)]
#[test]
fn sigterm_removes_temporary_files_and_output() {
    let dir = scratch_dir("sort_spill_sigterm");
    let tmp = dir.join("tmp");
    let out_dir = dir.join("out");
    std::fs::create_dir_all(&tmp).unwrap();
    std::fs::create_dir_all(&out_dir).unwrap();
    let input = simulated_sam(&dir, &SimulateOptions { pairs: 40_000, ..small(Order::Name) });
    let output = out_dir.join("sorted.bam");
    let mut child = std::process::Command::new(mdsam_bin())
        .args(["sort", "--max-memory", "300K", "-T"])
        .arg(format!("{}/run", tmp.display()))
        .arg("-o")
        .arg(&output)
        .arg(&input)
        .spawn()
        .unwrap();
    // Wait for the second run to appear, then interrupt.
    let start = std::time::Instant::now();
    while !files_in(&tmp).iter().any(|f| f.starts_with("run.0001")) {
        assert!(child.try_wait().unwrap().is_none(), "sort finished before it could be killed");
        assert!(start.elapsed().as_secs() < 120, "no temporary file appeared");
        std::thread::sleep(std::time::Duration::from_millis(2));
    }
    let killed = std::process::Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    let status = child.wait().unwrap();
    assert!(!status.success());
    assert!(files_in(&tmp).is_empty(), "temporary files left: {:?}", files_in(&tmp));
    assert!(files_in(&out_dir).is_empty(), "output left: {:?}", files_in(&out_dir));
}

#[test]
fn spilling_collate_is_identical_to_in_memory_collate() {
    let dir = scratch_dir("collate_spill");
    let tmp = dir.join("tmp");
    std::fs::create_dir_all(&tmp).unwrap();
    let prefix = format!("{}/bin", tmp.display());
    let input = simulated_sam(&dir, &small(Order::Coordinate));
    let input = input.to_str().unwrap();
    // With threads, the bins' files are shared out among them while spilling.
    for args in [&[][..], &["-n", "7"], &["-n", "1"], &["-@", "2"], &["-@", "3", "-n", "7"]] {
        let collate = |extra: &[&str]| {
            let mut full = vec!["collate", "--output-fmt=sam", "--no-PG"];
            full.extend_from_slice(args);
            full.extend_from_slice(extra);
            full.extend_from_slice(&["-O", input]);
            run_ok(&mdsam_bin(), &full).stdout
        };
        let in_memory = collate(&[]);
        let spilled = collate(&["--max-memory", "400K", "-T", &prefix]);
        assert_same_sam(&spilled, &in_memory, &format!("spilling collate {}", args.join(" ")));
        assert!(files_in(&tmp).is_empty(), "temporary files left: {:?}", files_in(&tmp));
    }
    let bad = format!("{}/missing/bin", dir.display());
    let out = crate::support::run(
        &mdsam_bin(),
        &["collate", "--max-memory", "400K", "-T", &bad, "-o", "/dev/null", input],
    );
    assert!(!out.status.success(), "collate did not spill");
}

#[test]
fn minimiser_order_on_a_reference_matches_oracle() {
    let Some(oracle) = oracle() else { return };
    let dir = scratch_dir("sort_minimiser_indexed");
    let opts = SimulateOptions { unmapped_pair_rate: 0.3, ..small(Order::Name) };
    let input = simulated_sam(&dir, &opts);
    let fasta = crate::support::simulated_fasta(&dir, &opts);
    let fasta = fasta.to_str().unwrap();
    for args in [&["-I", fasta, "-K", "15"][..], &["-M", "-H", "-I", fasta, "-w", "50", "-K", "12"]]
    {
        same_sort(&oracle, &input, args);
    }
}

/// `-I` with RNA letters in the reference: htslib's FASTA reader codes `U`/`u` as `T` (since
/// htslib 1.22), so the unplaced reads taken from the DNA sequence find their k-mers in it.
#[test]
fn minimiser_index_reads_u_as_t_as_the_oracle_does() {
    let Some(oracle) = oracle() else { return };
    let dir = scratch_dir("sort_minimiser_rna_reference");
    // A fixed pseudo-random reference; reads are 60-base windows of it, every other one
    // reverse-complemented, all unplaced.
    let mut state = 7u64;
    let mut next = || {
        state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (state >> 33) as usize
    };
    let reference: Vec<u8> = (0..3000).map(|_| b"ACGT"[next() % 4]).collect();
    let mut sam = b"@HD\tVN:1.6\tSO:unsorted\n".to_vec();
    for i in 0..300 {
        let at = next() % (reference.len() - 60);
        let mut read = reference[at..at + 60].to_vec();
        if i % 2 == 1 {
            read.reverse();
            read.iter_mut()
                .for_each(|b| *b = b"TGCA"[b"ACGT".iter().position(|x| x == b).unwrap()]);
        }
        sam.extend_from_slice(format!("q{i}\t4\t*\t0\t0\t*\t*\t0\t0\t").as_bytes());
        sam.extend_from_slice(&read);
        sam.extend_from_slice(b"\t*\n");
    }
    let input = dir.join("unplaced.sam");
    std::fs::write(&input, sam).unwrap();
    let rna: Vec<u8> =
        reference.iter().map(|&b| if b == b'T' { b'u' } else { b.to_ascii_lowercase() }).collect();
    let fasta = dir.join("rna.fa");
    std::fs::write(&fasta, [&b">r1\n"[..], &rna, b"\n"].concat()).unwrap();
    same_sort(&oracle, &input, &["-I", fasta.to_str().unwrap(), "-K", "15", "-w", "20"]);
}
