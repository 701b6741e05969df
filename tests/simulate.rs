//! The simulator (`mdsam::simulate`): its output is valid for samtools 1.24, deterministic, sorted
//! exactly as `samtools sort` sorts, counted correctly, and its `MD`/`NM` match its reference.
//! Oracle calls are few and inputs small (2,000 pairs): the pysam oracle takes ~0.3 s to start.

use std::collections::HashMap;

use mdsam::simulate::{
    Order, SimulateOptions, SimulationSummary, write_sam, write_sam_with_summary,
};

use crate::support::{
    assert_same_sam, oracle, oracle_ok, sam_records, scratch_dir, simulated_fasta, simulated_sam,
    simulated_sam_with_summary, to_sam,
};

fn small(order: Order) -> SimulateOptions {
    SimulateOptions {
        pairs: 2_000,
        seed: 7,
        n_refs: 3,
        ref_len: 200_000,
        order,
        ..SimulateOptions::default()
    }
}

fn sam_bytes(opts: &SimulateOptions) -> (Vec<u8>, SimulationSummary) {
    let mut out = Vec::new();
    let summary = write_sam_with_summary(opts, &mut out).expect("simulate");
    (out, summary)
}

/// The tab-separated fields of each record line.
fn record_fields(text: &[u8]) -> Vec<Vec<&str>> {
    std::str::from_utf8(text)
        .expect("SAM is ASCII")
        .lines()
        .filter(|line| !line.starts_with('@'))
        .map(|line| line.split('\t').collect())
        .collect()
}

#[test]
fn same_options_give_same_bytes() {
    for order in [Order::Name, Order::Coordinate] {
        let (a, _) = sam_bytes(&small(order));
        let (b, _) = sam_bytes(&small(order));
        assert!(a == b, "{order:?} output differs between runs");
        let (c, _) = sam_bytes(&SimulateOptions { seed: 8, ..small(order) });
        assert!(a != c, "{order:?} output ignores the seed");
    }
}

#[test]
fn thread_count_does_not_change_output() {
    for order in [Order::Name, Order::Coordinate] {
        // Three parallel chunks of 4,096 templates.
        let opts = SimulateOptions { pairs: 9_000, ..small(order) };
        let (single, _) = sam_bytes(&opts);
        let (threaded, _) = sam_bytes(&SimulateOptions { threads: 3, ..opts });
        assert!(single == threaded, "{order:?} output depends on the thread count");
    }
}

#[test]
fn both_orders_hold_the_same_records() {
    let (name, name_summary) = sam_bytes(&small(Order::Name));
    let (coordinate, coordinate_summary) = sam_bytes(&small(Order::Coordinate));
    assert_eq!(name_summary, coordinate_summary);
    let mut a: Vec<_> = sam_records(&name).split(|&b| b == b'\n').map(<[u8]>::to_vec).collect();
    let mut b: Vec<_> =
        sam_records(&coordinate).split(|&b| b == b'\n').map(<[u8]>::to_vec).collect();
    a.sort();
    b.sort();
    assert!(a == b);
}

#[test]
fn records_are_well_formed_and_varied() {
    let (text, summary) = sam_bytes(&small(Order::Name));
    let records = record_fields(&text);
    assert_eq!(records.len() as u64, summary.records);
    let mut seen = HashMap::<&str, usize>::new();
    let mut note = |what: &'static str| *seen.entry(what).or_default() += 1;
    for fields in &records {
        let flag: u16 = fields[1].parse().unwrap();
        let (cigar, seq, qual) = (fields[5], fields[9], fields[10]);
        if cigar != "*" && seq != "*" {
            let mut query_len = 0;
            let mut number = 0;
            for c in cigar.chars() {
                match c.to_digit(10) {
                    Some(d) => number = number * 10 + d as usize,
                    None => {
                        if "MIS=X".contains(c) {
                            query_len += number;
                        }
                        if "SHID".contains(c) {
                            note(match c {
                                'S' => "soft clip",
                                'H' => "hard clip",
                                'I' => "insertion",
                                _ => "deletion",
                            });
                        }
                        number = 0;
                    }
                }
            }
            assert_eq!(query_len, seq.len(), "SEQ length disagrees with CIGAR: {fields:?}");
        }
        if qual != "*" {
            assert_eq!(qual.len(), seq.len());
            assert!(
                qual.bytes().all(|q| (b'#'..=b'J').contains(&q)),
                "quality outside 2..41: {qual}"
            );
        }
        for (bit, what) in [
            (0x10, "reverse"),
            (0x100, "secondary"),
            (0x200, "qc fail"),
            (0x800, "supplementary"),
            (0x2, "proper pair"),
        ] {
            if flag & bit != 0 {
                note(what);
            }
        }
        if flag == 77 || flag == 141 {
            assert_eq!(&fields[2..9], ["*", "0", "0", "*", "*", "0", "0"]);
            note("unmapped pair");
        } else if flag & 0x4 != 0 {
            assert_ne!(fields[2], "*", "an unmapped read with a mapped mate is placed");
            note("unmapped read with mapped mate");
        }
        match fields[4] {
            "0" => note("mapq 0"),
            "60" => note("mapq 60"),
            _ => note("mapq between"),
        }
        if fields[6] != "=" && fields[6] != "*" {
            note("mate on other reference");
        }
        for tag in &fields[11..] {
            for prefix in [
                "NM:i:", "MD:Z:", "AS:i:", "XS:i:", "RG:Z:", "BC:Z:", "RX:Z:", "SA:Z:", "XT:A:",
                "XI:i:", "XF:f:", "XH:H:", "XB:B:s", "XC:B:f", "XD:B:",
            ] {
                if tag.starts_with(prefix) {
                    note(prefix);
                }
            }
        }
    }
    for expected in [
        "soft clip",
        "hard clip",
        "insertion",
        "deletion",
        "reverse",
        "secondary",
        "qc fail",
        "supplementary",
        "proper pair",
        "unmapped pair",
        "unmapped read with mapped mate",
        "mapq 0",
        "mapq 60",
        "mapq between",
        "mate on other reference",
        "NM:i:",
        "MD:Z:",
        "AS:i:",
        "XS:i:",
        "SA:Z:",
        "XT:A:",
        "XI:i:",
        "XF:f:",
        "XH:H:",
        "XB:B:s",
        "XC:B:f",
        "XD:B:",
    ] {
        assert!(seen.contains_key(expected), "no record shows {expected}: {seen:?}");
    }
    assert_eq!(seen["RG:Z:"] as u64, summary.records);
    assert!(summary.pcr_duplicate_pairs > 0 && summary.optical_duplicate_pairs > 0, "{summary:?}");
}

#[test]
fn mates_point_at_each_other() {
    let (text, _) = sam_bytes(&small(Order::Name));
    let records = record_fields(&text);
    let primaries: HashMap<(&str, bool), &Vec<&str>> = records
        .iter()
        .filter(|f| f[1].parse::<u16>().unwrap() & 0x900 == 0)
        .map(|f| ((f[0], f[1].parse::<u16>().unwrap() & 0x40 != 0), f))
        .collect();
    assert_eq!(primaries.len() as u64, 4_000);
    for (&(name, is_read1), record) in &primaries {
        let mate = primaries[&(name, !is_read1)];
        let flag: u16 = record[1].parse().unwrap();
        let mate_flag: u16 = mate[1].parse().unwrap();
        assert_eq!(flag & 0x20 != 0, mate_flag & 0x10 != 0, "{record:?} / {mate:?}");
        assert_eq!(flag & 0x8 != 0, mate_flag & 0x4 != 0, "{record:?} / {mate:?}");
        let mate_rname = if mate[2] == record[2] && mate[2] != "*" { "=" } else { mate[2] };
        assert_eq!((record[6], record[7]), (mate_rname, mate[3]), "{record:?} / {mate:?}");
        let (tlen, mate_tlen): (i64, i64) = (record[8].parse().unwrap(), mate[8].parse().unwrap());
        assert_eq!(tlen, -mate_tlen);
        if tlen > 0 {
            assert!(record[3].parse::<i64>().unwrap() <= mate[3].parse::<i64>().unwrap());
        }
    }
}

#[test]
fn rejects_impossible_options() {
    let mut sink = Vec::new();
    for opts in [
        SimulateOptions { read_len: 20, ..small(Order::Name) },
        SimulateOptions { ref_len: 1_000, ..small(Order::Name) },
        SimulateOptions { dup_rate: 1.5, ..small(Order::Name) },
    ] {
        let error = write_sam(&opts, &mut sink).expect_err("invalid options");
        assert_eq!(error.kind(), std::io::ErrorKind::InvalidInput);
    }
}

#[test]
fn oracle_reads_every_record_and_round_trips_through_bam() {
    let Some(oracle) = oracle() else { return };
    let dir = scratch_dir("simulate_round_trip");
    let (sam, summary) = simulated_sam_with_summary(&dir, &small(Order::Name));
    let count = oracle_ok(&oracle, &["view", "-c", sam.to_str().unwrap()]).stdout;
    assert_eq!(String::from_utf8_lossy(&count).trim(), summary.records.to_string());
    // samtools prints every field back exactly as the simulator wrote it.
    let original = std::fs::read(&sam).unwrap();
    assert_same_sam(&to_sam(&oracle, &sam), &original, "samtools view of simulated SAM");
    let bam = dir.join("sim.bam");
    oracle_ok(
        &oracle,
        &["view", "--no-PG", "-b", "-o", bam.to_str().unwrap(), sam.to_str().unwrap()],
    );
    assert_same_sam(&to_sam(&oracle, &bam), &original, "SAM -> BAM -> SAM");
}

#[test]
fn coordinate_output_is_what_samtools_sort_writes() {
    let Some(oracle) = oracle() else { return };
    let dir = scratch_dir("simulate_sorted");
    let (coordinate, _) = simulated_sam_with_summary(&dir, &small(Order::Coordinate));
    let (name, _) = simulated_sam_with_summary(&dir, &small(Order::Name));
    let expected = sam_records(&std::fs::read(&coordinate).unwrap());
    for input in [&coordinate, &name] {
        let sorted =
            oracle_ok(&oracle, &["sort", "--no-PG", "-O", "sam", input.to_str().unwrap()]).stdout;
        assert_same_sam(
            &sam_records(&sorted),
            &expected,
            &format!("samtools sort {}", input.display()),
        );
    }
}

#[test]
fn flagstat_agrees_with_the_generator() {
    let Some(oracle) = oracle() else { return };
    let dir = scratch_dir("simulate_flagstat");
    let (sam, summary) = simulated_sam_with_summary(&dir, &small(Order::Name));
    let report =
        String::from_utf8(oracle_ok(&oracle, &["flagstat", sam.to_str().unwrap()]).stdout).unwrap();
    // Lines read "P + F description": P QC-passed, F QC-failed; the first line whose description
    // starts with `what` counts.
    let count = |what: &str| -> (u64, u64) {
        let line =
            report.lines().find(|l| l.splitn(4, ' ').nth(3).is_some_and(|d| d.starts_with(what)));
        let fields: Vec<&str> = line
            .unwrap_or_else(|| panic!("no '{what}' in flagstat:\n{report}"))
            .split(' ')
            .collect();
        (fields[0].parse().unwrap(), fields[2].parse().unwrap())
    };
    let total = |what: &str| {
        let (passed, failed) = count(what);
        passed + failed
    };
    assert_eq!(count("in total"), (summary.records - summary.qc_fail, summary.qc_fail));
    assert_eq!(total("primary"), summary.primary);
    assert_eq!(total("secondary"), summary.secondary);
    assert_eq!(total("supplementary"), summary.supplementary);
    assert_eq!(total("duplicates"), 0, "nothing is marked before markdup");
    assert_eq!(total("mapped ("), summary.mapped);
    assert_eq!(total("paired in sequencing"), summary.primary);
    assert_eq!(total("properly paired"), summary.properly_paired);
    assert_eq!(total("with itself and mate mapped"), summary.with_mate_mapped);
    assert_eq!(total("singletons"), summary.singletons);
    assert_eq!(total("with mate mapped to a different chr"), summary.mate_on_other_reference);
    assert!(summary.secondary > 0 && summary.supplementary > 0 && summary.qc_fail > 0);
}

#[test]
fn md_and_nm_agree_with_calmd() {
    let Some(oracle) = oracle() else { return };
    let dir = scratch_dir("simulate_calmd");
    let opts = small(Order::Coordinate);
    let (sam, _) = simulated_sam_with_summary(&dir, &opts);
    let fasta = simulated_fasta(&dir, &opts);
    let recomputed =
        oracle_ok(&oracle, &["calmd", "--no-PG", sam.to_str().unwrap(), fasta.to_str().unwrap()])
            .stdout;
    assert_same_sam(&recomputed, &std::fs::read(&sam).unwrap(), "samtools calmd changed MD or NM");
}

/// The duplicate rate samtools 1.24's markdup measures is within 10 % of the rate asked for, and
/// samtools reads the output without a warning.
#[test]
fn markdup_measures_the_requested_duplicate_rate() {
    let Some(oracle) = oracle() else { return };
    let dir = scratch_dir("simulate_dup_rate");
    let opts = SimulateOptions {
        pairs: 20000,
        dup_rate: 0.10,
        optical_dup_rate: 0.05,
        ..Default::default()
    };
    let sam = simulated_sam(&dir, &opts);
    let sam_s = sam.to_str().unwrap();
    let path = |n: &str| dir.join(n).to_str().unwrap().to_string();
    let (fixed, sorted, marked) = (path("fixed.bam"), path("sorted.bam"), path("marked.bam"));
    let collated = path("collated.bam");
    oracle_ok(&oracle, &["collate", "-o", &collated, sam_s]);
    oracle_ok(&oracle, &["fixmate", "-m", &collated, &fixed]);
    oracle_ok(&oracle, &["sort", "-o", &sorted, &fixed]);
    let out = oracle_ok(&oracle, &["markdup", "-s", &sorted, &marked]);
    let stats = String::from_utf8_lossy(&out.stderr);
    assert!(!stats.contains("[W::"), "samtools warned: {stats}");
    let value = |key: &str| -> f64 {
        stats
            .lines()
            .find_map(|l| l.strip_prefix(key))
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or_else(|| panic!("no {key} in {stats}"))
    };
    let pairs = value("PAIRED:");
    let dup_pairs = value("DUPLICATE PAIR:");
    let measured = dup_pairs / pairs;
    let asked = opts.dup_rate + opts.optical_dup_rate;
    assert!(
        (measured - asked).abs() <= 0.1 * asked,
        "measured {measured:.4}, asked {asked:.4}\n{stats}"
    );
}
