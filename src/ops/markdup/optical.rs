//! Optical-duplicate coordinates from read names: Illumina colon fields, or `--read-coords` regex.

use regex::bytes::Regex;

/// How `--read-coords` capture groups map to tile/x/y (0 = no tile group).
#[derive(Clone, Debug)]
pub struct CoordRegex {
    pub regex: Regex,
    pub t: usize,
    pub x: usize,
    pub y: usize,
}

/// Parses `--coords-order` as samtools does (3-character prefixes, then 2).
pub fn coords_order(order: &str) -> Option<(usize, usize, usize)> {
    let o = order.as_bytes();
    let p3 = |s: &[u8]| o.len() >= 3 && &o[..3] == s;
    let p2 = |s: &[u8]| o.len() >= 2 && &o[..2] == s;
    if p3(b"txy") || p3(b"tyx") {
        Some((1, 2, 3))
    } else if p3(b"xyt") || p3(b"yxt") {
        Some((3, 1, 2))
    } else if p3(b"xty") || p3(b"ytx") {
        Some((2, 1, 3))
    } else if p2(b"xy") || p2(b"yx") {
        Some((0, 1, 2))
    } else {
        None
    }
}

/// Result of samtools' `get_coordinates` for one name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Coords {
    /// Tile part `name[t_beg..t_end]`, x, y.
    Ok { t_beg: usize, t_end: usize, x: i64, y: i64 },
    /// Failure with a warning (return value 1).
    Warn(String),
    /// Regex without a match (return value -1, no warning).
    NoMatch,
}

/// C `strtol(s, &end, 10)`: `None` when no digits were read.
pub fn strtol(s: &[u8]) -> Option<i64> {
    let mut i = 0;
    while i < s.len() && (s[i] == b' ' || (b'\t'..=b'\r').contains(&s[i])) {
        i += 1;
    }
    let neg = match s.get(i) {
        Some(b'-') => {
            i += 1;
            true
        }
        Some(b'+') => {
            i += 1;
            false
        }
        _ => false,
    };
    let start = i;
    let mut v: i64 = 0;
    while i < s.len() && s[i].is_ascii_digit() {
        v = v.saturating_mul(10).saturating_add((s[i] - b'0') as i64);
        i += 1;
    }
    if i == start {
        return None;
    }
    Some(if neg { v.saturating_neg() } else { v })
}

fn lossy(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn colons(name: &[u8]) -> Coords {
    let (mut sep, mut xpos, mut ypos) = (0, 0, 0);
    for (pos, &c) in name.iter().enumerate() {
        if c == b':' {
            sep += 1;
            match sep {
                2 => xpos = pos + 1,
                3 => ypos = pos + 1,
                4 => {
                    xpos = ypos;
                    ypos = pos + 1;
                }
                5 => xpos = pos + 1,
                6 => ypos = pos + 1,
                _ => {}
            }
        }
    }
    let n = lossy(name);
    if !matches!(sep, 3 | 4 | 6 | 7) {
        return Coords::Warn(format!(
            "warning, cannot decipher read name {n} for optical duplicate marking.\n"
        ));
    }
    let Some(x) = strtol(&name[xpos..]) else {
        return Coords::Warn(format!("warning, cannot decipher x coordinate in {n} .\n"));
    };
    let Some(y) = strtol(&name[ypos..]) else {
        return Coords::Warn(format!("warning, cannot decipher y coordinate in {n} .\n"));
    };
    Coords::Ok { t_beg: 0, t_end: xpos, x, y }
}

fn by_regex(name: &[u8], rx: &CoordRegex) -> Coords {
    let Some(caps) = rx.regex.captures(name) else {
        return Coords::NoMatch;
    };
    let group = |i: usize| caps.get(i).map(|m| (m.start(), m.end()));
    let (Some((xs, xe)), Some((ys, ye))) = (group(rx.x), group(rx.y)) else {
        return Coords::NoMatch;
    };
    let (t_beg, t_end) = if rx.t > 0 {
        match group(rx.t) {
            Some(t) => t,
            None => return Coords::NoMatch,
        }
    } else {
        (0, 0)
    };
    let n = lossy(name);
    let parse = |s: usize, e: usize, axis: &str| -> Result<i64, Coords> {
        if e - s > 254 {
            return Err(Coords::Warn(format!(
                "warning, {axis} coordinate string longer than allowed qname length in {n} ({} long).\n",
                e - s
            )));
        }
        strtol(&name[s..e]).ok_or_else(|| {
            Coords::Warn(format!(
                "warning, cannot decipher {axis} coordinate in {n} ({}).\n",
                lossy(&name[s..e])
            ))
        })
    };
    let x = match parse(xs, xe, "x") {
        Ok(v) => v,
        Err(c) => return c,
    };
    let y = match parse(ys, ye, "y") {
        Ok(v) => v,
        Err(c) => return c,
    };
    Coords::Ok { t_beg, t_end, x, y }
}

/// `get_coordinates`.
pub fn coordinates(name: &[u8], rx: Option<&CoordRegex>) -> Coords {
    match rx {
        Some(rx) => by_regex(name, rx),
        None => colons(name),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn illumina_names() {
        assert_eq!(
            coordinates(b"M:1:FC:2:1101:1500:2000", None),
            Coords::Ok { t_beg: 0, t_end: 14, x: 1500, y: 2000 }
        );
        assert_eq!(
            coordinates(b"a:b:10:20", None),
            Coords::Ok { t_beg: 0, t_end: 4, x: 10, y: 20 }
        );
        assert_eq!(
            coordinates(b"a:b:c:10:20", None),
            Coords::Ok { t_beg: 0, t_end: 6, x: 10, y: 20 }
        );
        assert!(matches!(coordinates(b"a:b", None), Coords::Warn(_)));
        assert!(matches!(coordinates(b"a:b:x:20", None), Coords::Warn(_)));
    }

    #[test]
    fn regex_names() {
        let rx = CoordRegex {
            regex: Regex::new("^([0-9]+):([0-9]+):([[:print:]]+)").unwrap(),
            t: 3,
            x: 1,
            y: 2,
        };
        assert_eq!(
            coordinates(b"12:34:ab", Some(&rx)),
            Coords::Ok { t_beg: 6, t_end: 8, x: 12, y: 34 }
        );
        assert_eq!(coordinates(b"zz", Some(&rx)), Coords::NoMatch);
        assert_eq!(coords_order("xy"), Some((0, 1, 2)));
        assert_eq!(coords_order("q"), None);
    }
}
