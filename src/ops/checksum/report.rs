//! The checksum report, byte for byte as samtools 1.24 prints it: its own layout (aligned
//! columns, or tabs with `-T`) or biobambam2's `bamseqchksum` layout (`-B`).

use std::fmt::Write;

use super::{Crcs64, Groups, PRIME, ROWS, Sums, update_hash};
use crate::record::layout::flags;

/// How the report looks (samtools' `opts` fields that only printing reads).
#[derive(Clone, Debug)]
pub struct Layout {
    pub tabs: bool,
    /// Show rows of zero reads (`-v`).
    pub verbose: bool,
    pub show_pass: bool,
    pub show_fail: bool,
    pub check_pos: bool,
    pub check_cigar: bool,
    pub check_mate: bool,
    /// biobambam2's layout (`-B`).
    pub bamseqchksum: bool,
    /// The `-t` string as given, for the header.
    pub tag_str: String,
    pub flag_mask: i32,
}

/// The extra columns a row has, in order: (shown, product).
fn extra_columns(l: &Layout, s: &Crcs64) -> [(bool, u64); 3] {
    [(l.check_pos, s.pos), (l.check_cigar, s.cigar), (l.check_mate, s.mate)]
}

/// The "combined" column: the count and the products multiplied together. samtools multiplies
/// the seq product in twice and the qualities not at all; so does this.
fn combined(l: &Layout, s: &Crcs64, count: u64) -> u64 {
    let mut hc = 1;
    for factor in [count >> 32, count & 0xffff_ffff, s.seq, s.name, s.seq, s.aux] {
        hc = update_hash(hc, factor as u32);
    }
    for (shown, product) in extra_columns(l, s) {
        if shown {
            hc = update_hash(hc, product as u32);
        }
    }
    debug_assert!(hc < PRIME);
    hc
}

/// One group's rows (samtools' `sums_report`).
fn group_rows(out: &mut String, l: &Layout, sums: &Sums, name: &str, show_combined: bool) {
    for (row, qc) in ROWS.iter().enumerate() {
        if (row == 1 && !l.show_pass) || (row == 2 && !l.show_fail) {
            continue;
        }
        let (s, count) = (&sums.sums[row], sums.count[row]);
        if !l.verbose && count == 0 {
            continue;
        }
        if l.tabs {
            let gap = if l.bamseqchksum { "\t" } else { "" };
            let _ = write!(
                out,
                "{name}\t{qc}\t{count}\t{gap}{:x}\t{:x}\t{:x}\t{:x}",
                s.seq, s.name, s.qual, s.aux
            );
        } else {
            let _ = write!(
                out,
                "{name:<10} {qc:<4} {count:>12}  {:08x}  {:08x}  {:08x}  {:08x}",
                s.seq, s.name, s.qual, s.aux
            );
        }
        for (shown, product) in extra_columns(l, s) {
            if shown {
                let _ = if l.tabs {
                    write!(out, "\t{product:x}")
                } else {
                    write!(out, "  {product:08x}")
                };
            }
        }
        if show_combined {
            let hc = combined(l, s, count);
            let _ = if l.tabs { writeln!(out, "\t{hc:x}") } else { writeln!(out, "  {hc:08x}") };
        } else {
            out.push('\n');
        }
    }
}

/// The whole report for `file` (a path, `-`, or `merge`).
pub fn report(file: &str, l: &Layout, groups: &Groups) -> String {
    let mut out = String::new();
    if l.bamseqchksum {
        return bamseqchksum(l, groups);
    }
    let (sep, aux_pad, flag_pad) =
        if l.tabs { ("\t", "\t", "\t") } else { (" ", "          ", "         ") };
    let _ = writeln!(out, "# Checksum 1.0 for file:{sep}{file}");
    let _ = writeln!(out, "# Aux tags:{aux_pad}{}", l.tag_str);
    let _ = writeln!(out, "# BAM flags:{flag_pad}{}", flags::names_of(l.flag_mask));
    out.push_str(if l.tabs {
        "\n# Group\tQC\tcount\tflag+seq\t+name\t+qual\t+aux"
    } else {
        "\n# Group    QC          count  flag+seq  +name     +qual     +aux    "
    });
    let extras = [
        (l.check_pos, "+chr/pos", "  +chr/pos"),
        (l.check_cigar, "+cigar", "  +cigar  "),
        (l.check_mate, "+mate", "  +mate   "),
    ];
    for (shown, tabbed, aligned) in extras {
        if shown {
            let _ = if l.tabs { write!(out, "\t{tabbed}") } else { write!(out, "{aligned}") };
        }
    }
    out.push_str(if l.tabs { "\tcombined\n" } else { "  combined\n" });
    group_rows(&mut out, l, &groups.all, "all", true);
    if l.verbose || groups.no_group.count[0] + groups.no_group.count[1] > 0 {
        group_rows(&mut out, l, &groups.no_group, "-", true);
    }
    for (name, sums) in &groups.by_group {
        group_rows(&mut out, l, sums, &String::from_utf8_lossy(name), true);
    }
    out
}

/// biobambam2's layout: tabs, pass rows and empty groups always shown, no combined column.
fn bamseqchksum(l: &Layout, groups: &Groups) -> String {
    let mut out = String::from(
        "###\tset\tcount\t\tb_seq\tname_b_seq\tb_seq_qual\tb_seq_tags(BC,FI,QT,RT,TC)\n",
    );
    let l = Layout { tabs: true, show_pass: true, verbose: true, ..l.clone() };
    group_rows(&mut out, &l, &groups.all, "all", false);
    group_rows(&mut out, &l, &groups.no_group, "", false);
    for (name, sums) in &groups.by_group {
        group_rows(&mut out, &l, sums, &String::from_utf8_lossy(name), false);
    }
    out
}
