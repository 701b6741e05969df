//! `samtools coverage -m` / `-D`: a ten-row text histogram of one reference (`print_hist`).

use super::coverage::{RefStats, divide, mean_base_quality};
use super::printf_g::g;

#[derive(Clone, Copy)]
pub struct Look {
    /// Unicode blocks and box lines, unless `-A`.
    pub utf: bool,
    /// `-D`: bins hold mean depth, not percent covered.
    pub plot_depth: bool,
}

const BLOCKS_UTF: [&str; 8] = ["▁", "▂", "▃", "▄", "▅", "▆", "▇", "█"];
const BLOCKS_ASCII: [&str; 2] = [".", ":"];
const ROWS: usize = 10;

/// `readable_bps`: the value divided by 1000 while at least 1000 (up to T), with as many
/// decimals as divisions.
pub fn readable_bps(mut bp: f64) -> String {
    const UNITS: [&str; 5] = ["", "K", "M", "G", "T"];
    let mut i = 0;
    while bp >= 1000.0 && i < UNITS.len() - 1 {
        bp /= 1000.0;
        i += 1;
    }
    format!("{bp:.i$}{}", UNITS[i])
}

/// `center_text` in a width of 10.
fn centered(text: &str) -> String {
    let len = text.len() as i64;
    let padding = (10 - len) / 2;
    let extra = (10 - len) % 2;
    if padding >= 1 {
        let tail = (padding - 1 + extra).max(1) as usize;
        format!(" {text:>w$}{:>tail$}", " ", w = (len + padding) as usize)
    } else {
        text.to_string()
    }
}

pub fn print(out: &mut Vec<u8>, name: &[u8], ref_len: i64, s: &RefStats, hist: &[u32], look: Look) {
    let blocks: &[&str] = if look.utf { &BLOCKS_UTF } else { &BLOCKS_ASCII };
    let bar = if look.utf { "│" } else { "|" };
    let region_len = (s.end - s.beg) as f64;
    let scale = if look.plot_depth { 1u32 } else { 100 };
    let data: Vec<f64> =
        hist.iter().map(|&h| f64::from(scale.wrapping_mul(h)) / s.bin_width as f64).collect();
    let max_val = data.iter().fold(0.0f64, |m, &v| if v > m { v } else { m });
    out.extend_from_slice(name);
    out.extend_from_slice(format!(" ({}bp)\n", readable_bps(ref_len as f64)).as_bytes());
    let row_size = max_val / ROWS as f64;
    let mut text = String::new();
    for i in (0..ROWS).rev() {
        let current = row_size * i as f64;
        if look.plot_depth {
            text.push_str(&format!(">{:8.1} ", i as f64 * row_size));
        } else {
            text.push_str(&format!(">{current:7.2}% "));
        }
        text.push_str(bar);
        for &v in &data {
            let level = (blocks.len() as f64 * (v - current) / row_size).round() - 1.0;
            // C converts a NaN or infinite level to INT_MIN: a blank.
            if !level.is_finite() || level < 0.0 {
                text.push(' ');
            } else {
                text.push_str(blocks[(level as usize).min(blocks.len() - 1)]);
            }
        }
        text.push_str(bar);
        text.push(' ');
        text.push_str(&row_label(i, s, region_len, max_val, look.plot_depth));
        text.push('\n');
    }
    text.push_str("     ");
    text.push_str(&centered(&readable_bps((s.beg + 1) as f64)));
    let n = hist.len() as i64;
    let mut rest = 10;
    while rest < 10 * (n / 10) {
        text.push_str(&centered(&readable_bps((s.beg + s.bin_width * rest) as f64)));
        rest += 10;
    }
    let last_padding = (n % 10).max(1) as usize;
    text.push_str(&format!("{:>last_padding$}", " "));
    text.push_str(&centered(&readable_bps(s.end as f64)));
    text.push('\n');
    out.extend_from_slice(text.as_bytes());
}

fn row_label(row: usize, s: &RefStats, region_len: f64, max_val: f64, plot_depth: bool) -> String {
    match row {
        9 => format!("Number of reads: {}", s.selected_reads),
        8 if s.reads > s.selected_reads => {
            format!("    ({} filtered)", s.reads.wrapping_sub(s.selected_reads) as i32)
        }
        7 => format!("Covered bases:   {}bp", readable_bps(s.covered_bases as f64)),
        6 => format!(
            "Percent covered: {}%",
            g(divide(100.0 * s.covered_bases as f64, region_len), 4)
        ),
        5 => format!("Mean coverage:   {}x", g(divide(s.summed_coverage as f64, region_len), 3)),
        4 => format!("Mean baseQ:      {}", g(mean_base_quality(s), 3)),
        3 => format!(
            "Mean mapQ:       {}",
            g(divide(s.summed_mapq as f64, f64::from(s.selected_reads)), 3)
        ),
        1 => format!("Histo bin width: {}bp", readable_bps(s.bin_width as f64)),
        0 if plot_depth => format!("Histo max cov:   {}", g(max_val, 5)),
        0 => format!("Histo max bin:   {}%", g(max_val, 5)),
        _ => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn readable_and_centered_as_samtools() {
        assert_eq!(readable_bps(1.0), "1");
        assert_eq!(readable_bps(45678.0), "45.7K");
        assert_eq!(readable_bps(1_234_567.0), "1.23M");
        assert_eq!(centered("1"), "     1    ");
        assert_eq!(centered("45.7K"), "   45.7K  ");
    }
}
