//! `stats -t FILE`: target regions, one `name from to` line each (1-based, inclusive), read as
//! samtools' `init_regions` reads them.

/// The intervals per reference id, sized as samtools sizes its table (it grows 100 references
/// past the highest one named), and the warning about unknown names (printed when met), if any.
pub struct TargetFile {
    pub intervals: Vec<Vec<(i64, i64)>>,
    pub warning: Option<String>,
}

/// C `strtol` on a prefix after blanks: the number and the rest, or `None` without digits.
fn scan_long(s: &[u8]) -> Option<(i64, &[u8])> {
    let s = &s[s.iter().take_while(|b| b.is_ascii_whitespace()).count()..];
    let sign_len = usize::from(matches!(s.first(), Some(b'+' | b'-')));
    let digits = s[sign_len..].iter().take_while(|b| b.is_ascii_digit()).count();
    if digits == 0 {
        return None;
    }
    let text = std::str::from_utf8(&s[..sign_len + digits]).ok()?;
    let value = text.parse::<i64>().unwrap_or(if s[0] == b'-' { i64::MIN } else { i64::MAX });
    Some((value, &s[sign_len + digits..]))
}

/// Reads the file at `path`; `tid` resolves a reference name. The error is samtools' message.
pub fn read_targets(path: &str, tid: impl Fn(&[u8]) -> Option<i32>) -> Result<TargetFile, String> {
    let text =
        std::fs::read(path).map_err(|e| format!("{path}: {}", crate::error::c_message(&e)))?;
    let mut out = TargetFile { intervals: Vec::new(), warning: None };
    let (mut prev_tid, mut prev_pos) = (-1i32, -1i64);
    let mut any = false;
    let body = text.strip_suffix(b"\n").unwrap_or(&text);
    let lines = body.split(|&b| b == b'\n').filter(|_| !text.is_empty());
    for line in lines {
        if line.first() == Some(&b'#') {
            continue;
        }
        let name_len = line.iter().position(|b| b.is_ascii_whitespace()).unwrap_or(line.len());
        let shown = String::from_utf8_lossy(line);
        if name_len >= line.len() {
            return Err(format!("Could not parse the file: {path} [{shown}]"));
        }
        let name = &line[..name_len];
        let Some(t) = tid(name) else {
            if out.warning.is_none() {
                let w = format!(
                    "Warning: Some sequences not present in the BAM, e.g. \"{}\". This message is printed only once.",
                    String::from_utf8_lossy(name)
                );
                // samtools says it as it reads, before any error in a later line.
                eprintln!("{w}");
                out.warning = Some(w);
            }
            continue;
        };
        if t as usize >= out.intervals.len() {
            out.intervals.resize(t as usize + 100, Vec::new());
        }
        any = true;
        let rest = &line[name_len + 1..];
        let parsed = scan_long(rest).and_then(|(beg, r)| Some((beg, scan_long(r)?.0)));
        let Some((beg, end)) = parsed else {
            return Err(format!("Could not parse the region [{}]", String::from_utf8_lossy(rest)));
        };
        if prev_tid == -1 || prev_tid != t {
            (prev_tid, prev_pos) = (t, beg);
        }
        if prev_pos > beg {
            return Err(format!(
                "The positions are not in chromosomal order ({}:{beg} comes after {prev_pos})",
                String::from_utf8_lossy(name)
            ));
        }
        out.intervals[t as usize].push((beg, end));
    }
    if !any {
        return Err("Unable to map the -t sequences to the BAM sequences.".into());
    }
    Ok(out)
}
