//! Quality calibration (`-t`, `-X`): for each base quality, the quality to use for
//! substitutions, undercalls (deletions) and overcalls (insertions); samtools' `qcal_t`,
//! `set_qcal` and `load_qcal`.

use super::tables::QCAL;

pub const FLAT: usize = 0;
pub const HIFI: usize = 1;
pub const HISEQ: usize = 2;
pub const ONT_R10_4_SUP: usize = 3;
pub const ONT_R10_4_DUP: usize = 4;
pub const ULTIMA: usize = 5;

#[derive(Clone, Debug)]
pub struct Calibration {
    pub smap: [i32; 101],
    pub umap: [i32; 101],
    pub omap: [i32; 101],
}

/// One of samtools' built-in tables.
pub fn preset(id: usize) -> Calibration {
    let [smap, umap, omap] = QCAL[id];
    Calibration { smap, umap, omap }
}

/// Why `-t`'s file cannot be used.
#[derive(Debug, PartialEq, Eq)]
pub enum BadCalibration {
    /// A line is not `QUAL q s u o`.
    Unparsable,
    /// samtools says "Qual calibration file is not in ascending order".
    NotAscending,
}

/// Where `-t` takes its table from.
#[derive(Clone, Debug)]
pub enum Source {
    Table(Box<Calibration>),
    /// A file of `QUAL` lines, read when the command starts.
    File(String),
}

/// `load_qcal` for names: `:hifi`-style names of the presets and `:flat` (identity); `None`
/// for a file name.
pub fn named(name: &str) -> Option<Calibration> {
    let id = match name {
        ":hifi" => HIFI,
        ":hiseq" => HISEQ,
        ":r10.4_sup" => ONT_R10_4_SUP,
        ":r10.4_dup" => ONT_R10_4_DUP,
        ":ultima" => ULTIMA,
        ":flat" => return Some(identity()),
        _ => return None,
    };
    Some(preset(id))
}

fn identity() -> Calibration {
    let identity: [i32; 101] = std::array::from_fn(|i| i as i32);
    Calibration { smap: identity, umap: identity, omap: identity }
}

/// `load_qcal` for a file's text: `QUAL q subst under over` lines in ascending order (`#`
/// comments); qualities between lines repeat the line before, those after the last repeat it.
pub fn parse(text: &[u8]) -> Result<Calibration, BadCalibration> {
    let mut q = identity();
    let (mut max, mut last) = (0usize, 0i64);
    for line in text.split(|&b| b == b'\n') {
        if line.first() == Some(&b'#') {
            continue;
        }
        if line.is_empty() && text.ends_with(b"\n") {
            continue;
        }
        let line = String::from_utf8_lossy(line);
        let fields: Vec<i64> = match line.strip_prefix("QUAL") {
            Some(rest) => rest.split_whitespace().take(4).map_while(|f| f.parse().ok()).collect(),
            None => Vec::new(),
        };
        let &[v, s, u, o] = fields.as_slice() else { return Err(BadCalibration::Unparsable) };
        while v > last && last < 100 {
            let l = last as usize;
            q.smap[l + 1] = q.smap[l];
            q.umap[l + 1] = q.umap[l];
            q.omap[l + 1] = q.omap[l];
            last += 1;
        }
        if (0..100).contains(&v) {
            let i = v as usize;
            (q.smap[i], q.umap[i], q.omap[i]) = (s as i32, u as i32, o as i32);
        }
        if v < max as i64 {
            return Err(BadCalibration::NotAscending);
        }
        max = v.clamp(0, 100) as usize;
    }
    for i in max + 1..101 {
        q.smap[i] = q.smap[max];
        q.umap[i] = q.umap[max];
        q.omap[i] = q.omap[max];
    }
    Ok(q)
}
