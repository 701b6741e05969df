//! The SAM header: its text, kept byte for byte until something changes it, and the reference list.
//!
//! samtools copies an unmodified header verbatim (NUL padding included) and rebuilds the text from
//! its parsed lines once anything changes it (§1.4 of the behaviour spec); `modified` tracks that.

use std::collections::HashMap;

/// One `@SQ` reference.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Reference {
    pub name: Vec<u8>,
    /// `LN`: 64-bit as htslib's `hts_pos_t`; a BAM's binary list holds at most `u32::MAX`.
    pub len: u64,
}

/// The `LN` above which only SAM can hold the reference's positions (samtools sort's
/// "very large references").
pub const MAX_BAM_REFERENCE_LEN: u64 = i32::MAX as u64;

#[derive(Clone, Debug, Default)]
pub struct Header {
    text: Vec<u8>,
    refs: Vec<Reference>,
    by_name: HashMap<Vec<u8>, i32>,
    modified: bool,
}

/// Why header text cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HeaderError {
    #[error("@SQ line without SN or with a bad LN: {0}")]
    BadSq(String),
    #[error("invalid header line (must start with @HD/@SQ/@RG/@PG/@CO and a tab): {0}")]
    BadLine(String),
    #[error("@RG line without ID: {0}")]
    ReadGroupWithoutId(String),
    #[error("@PG line without ID: {0}")]
    ProgramWithoutId(String),
    #[error("header line does not have a two character key: {0}")]
    NoTwoCharacterKey(String),
    #[error("malformed key:value pair: {0}")]
    Malformed(String),
    #[error("@SQ line \"{0}\" with multiple LN: tags with different values")]
    MultipleLengths(String),
    #[error("not SAM: its first line is not a tab-separated header line: {0}")]
    NotSam(String),
    #[error("duplicate entry \"{0}\" in sam header")]
    DuplicateReference(String),
}

/// The header record types htslib accepts (`sam_hdr_build_from_sam_file`).
const RECORD_TYPES: [&[u8; 3]; 5] = [b"@HD", b"@SQ", b"@RG", b"@PG", b"@CO"];

/// Checks one header line as htslib does before it reads the file: a known record type followed by
/// a tab (or nothing), and an `ID` on every `@RG`.
fn check_line(line: &[u8]) -> Result<(), HeaderError> {
    let text = || String::from_utf8_lossy(line).into_owned();
    let known = line.len() >= 3 && RECORD_TYPES.iter().any(|t| &line[..3] == *t);
    if !known || line.get(3).is_some_and(|&b| b != b'\t') {
        return Err(HeaderError::BadLine(text()));
    }
    if line.starts_with(b"@RG") && line_field(line, b"ID").is_none() {
        return Err(HeaderError::ReadGroupWithoutId(text()));
    }
    Ok(())
}

/// An `LN` value as htslib reads it (`strtoll`): the leading digits (`5000x` is 5000), at least
/// 1, saturating at `i64::MAX`.
fn reference_length(value: &[u8]) -> Option<u64> {
    let digits = value.iter().take_while(|b| b.is_ascii_digit()).count();
    let len = value[..digits]
        .iter()
        .try_fold(0u64, |n, &d| n.checked_mul(10).and_then(|n| n.checked_add((d - b'0') as u64)));
    let len = len.map_or(i64::MAX as u64, |n| n.min(i64::MAX as u64));
    (len >= 1).then_some(len)
}

/// The value of `KEY:` on a tab-separated header line.
pub fn line_field<'a>(line: &'a [u8], key: &[u8; 2]) -> Option<&'a [u8]> {
    line.split(|&b| b == b'\t')
        .skip(1)
        .find(|f| f.len() >= 3 && &f[..2] == key && f[2] == b':')
        .map(|f| &f[3..])
}

impl Header {
    /// A header from BAM: the text and the binary reference list, which wins over `@SQ` lines.
    pub fn from_parts(text: Vec<u8>, refs: Vec<Reference>) -> Self {
        let by_name = refs.iter().enumerate().map(|(i, r)| (r.name.clone(), i as i32)).collect();
        Header { text, refs, by_name, modified: false }
    }

    /// A header from SAM text: references come from its `@SQ` lines. Lines are checked as
    /// htslib checks them (see [`check_line`]).
    pub fn from_sam_text(text: Vec<u8>) -> Result<Self, HeaderError> {
        let mut refs = Vec::new();
        for line in text.split(|&b| b == b'\n') {
            let line = line.strip_suffix(b"\r").unwrap_or(line);
            // htslib reads header lines as C strings: a NUL ends the line (found by fuzzing: a
            // reference name holding a NUL could not survive the BAM reference list).
            let line = &line[..memchr::memchr(0, line).unwrap_or(line.len())];
            if line.is_empty() {
                continue;
            }
            check_line(line)?;
            if line.starts_with(b"@SQ") {
                let bad = || HeaderError::BadSq(String::from_utf8_lossy(line).into_owned());
                let name = line_field(line, b"SN").ok_or_else(bad)?;
                let len = line_field(line, b"LN").and_then(reference_length).ok_or_else(bad)?;
                refs.push(Reference { name: name.to_vec(), len });
            }
        }
        Ok(Header::from_parts(text, refs))
    }

    pub fn text(&self) -> &[u8] {
        &self.text
    }

    pub fn refs(&self) -> &[Reference] {
        &self.refs
    }

    pub fn is_modified(&self) -> bool {
        self.modified
    }

    /// htslib's error for an `@SQ` line it cannot index (no `SN`, a missing or non-positive
    /// `LN`), printed wherever samtools edits such a header: a BAM's text is only parsed then.
    pub fn sq_error(&self) -> Option<String> {
        let why = super::header_checks::sq_line_error(self.lines())?;
        Some(format!("[E::sam_hrecs_update_hashes] {why}"))
    }

    /// True when some reference is longer than BAM's 32-bit positions reach (samtools sort's
    /// "very large references"): its records may hold positions only SAM can carry.
    pub fn has_very_large_references(&self) -> bool {
        self.refs.iter().any(|r| r.len > MAX_BAM_REFERENCE_LEN)
    }

    /// The reference id of a name.
    pub fn tid(&self, name: &[u8]) -> Option<i32> {
        self.by_name.get(name).copied()
    }

    /// The reference id of a name or of an alternative name (`@SQ AN:a,b`), as htslib's
    /// `sam_hdr_name2tid` resolves region names: a reference's own name wins over another's
    /// alternative one.
    pub fn tid_or_alias(&self, name: &[u8]) -> Option<i32> {
        if let Some(t) = self.tid(name) {
            return Some(t);
        }
        self.lines().filter(|l| l.starts_with(b"@SQ\t")).find_map(|line| {
            let alts = line_field(line, b"AN")?;
            let tid = self.tid(line_field(line, b"SN")?)?;
            alts.split(|&b| b == b',').any(|a| a == name).then_some(tid)
        })
    }

    pub fn ref_name(&self, tid: i32) -> Option<&[u8]> {
        usize::try_from(tid).ok().and_then(|t| self.refs.get(t)).map(|r| r.name.as_slice())
    }

    /// The `SO` value of the `@HD` line (`coordinate`, `queryname`, ...), if any.
    pub fn sort_order(&self) -> Option<&[u8]> {
        self.lines().find(|l| l.starts_with(b"@HD\t")).and_then(|l| line_field(l, b"SO"))
    }

    /// Header lines, without NUL padding or empty lines.
    pub fn lines(&self) -> impl Iterator<Item = &[u8]> {
        let end = self.text.iter().position(|&b| b == 0).unwrap_or(self.text.len());
        self.text[..end].split(|&b| b == b'\n').filter(|l| !l.is_empty())
    }

    fn set_lines(&mut self, lines: Vec<Vec<u8>>) {
        let mut text = Vec::with_capacity(self.text.len() + 128);
        for l in lines {
            text.extend_from_slice(&l);
            text.push(b'\n');
        }
        self.text = text;
        self.modified = true;
    }

    fn owned_lines(&self) -> Vec<Vec<u8>> {
        self.lines().map(|l| l.to_vec()).collect()
    }

    /// The `LB` of read group `rg`, if the header has that `@RG` with an `LB`.
    pub fn read_group_library(&self, rg: &[u8]) -> Option<&[u8]> {
        self.lines()
            .filter(|l| l.starts_with(b"@RG\t"))
            .find(|l| line_field(l, b"ID") == Some(rg))
            .and_then(|l| line_field(l, b"LB"))
    }

    /// Keeps only the `@RG` lines whose ID `keep` accepts (`view -r/-R`).
    pub fn retain_read_groups(&mut self, keep: impl Fn(&[u8]) -> bool) {
        let lines = self
            .owned_lines()
            .into_iter()
            .filter(|l| !l.starts_with(b"@RG\t") || line_field(l, b"ID").is_some_and(&keep))
            .collect();
        self.set_lines(lines);
    }

    /// The `@RG` lines, in order.
    pub fn read_group_lines(&self) -> impl Iterator<Item = &[u8]> {
        self.lines().filter(|l| l.starts_with(b"@RG\t"))
    }

    /// Appends whole lines after every other line, as htslib's `sam_hdr_add_lines` places them.
    pub fn append_lines(&mut self, new: impl IntoIterator<Item = Vec<u8>>) {
        let mut lines = self.owned_lines();
        lines.extend(new);
        self.set_lines(lines);
    }

    /// Rebuilds the text from its lines, as htslib writes a header it has parsed: no NUL padding
    /// or empty lines, and `@SQ` lines for the references when the text has none.
    pub fn rebuild_text(&mut self) {
        let mut lines = self.owned_lines();
        if !lines.iter().any(|l| l.starts_with(b"@SQ\t")) {
            lines.extend(self.refs.iter().map(|r| {
                let mut l = b"@SQ\tSN:".to_vec();
                l.extend_from_slice(&r.name);
                l.extend_from_slice(format!("\tLN:{}", r.len).as_bytes());
                l
            }));
        }
        self.set_lines(lines);
    }

    /// Adds `@SQ` lines and references from a `.fai`-style list when the header has none.
    pub fn add_references(&mut self, refs: Vec<Reference>) {
        if !self.refs.is_empty() {
            return;
        }
        let mut lines = self.owned_lines();
        for r in &refs {
            let mut l = b"@SQ\tSN:".to_vec();
            l.extend_from_slice(&r.name);
            l.extend_from_slice(format!("\tLN:{}", r.len).as_bytes());
            lines.push(l);
        }
        self.set_lines(lines);
        *self = Header::from_parts(std::mem::take(&mut self.text), refs);
        self.modified = true;
    }

    /// Adds a `@PG` line as htslib's `sam_hdr_add_pg` does: one per chain end, placed after the
    /// last `@PG`, with a unique ID (`ID`, `ID.1`, ...). `fields` are the items after ID/PP.
    pub fn add_pg(&mut self, id: &str, fields: &[(&str, &str)]) {
        let mut lines = self.owned_lines();
        let pg: Vec<usize> = (0..lines.len()).filter(|&i| lines[i].starts_with(b"@PG\t")).collect();
        let ids: Vec<Vec<u8>> =
            pg.iter().filter_map(|&i| line_field(&lines[i], b"ID").map(|v| v.to_vec())).collect();
        let pps: Vec<Vec<u8>> =
            pg.iter().filter_map(|&i| line_field(&lines[i], b"PP").map(|v| v.to_vec())).collect();
        // Chain ends: lines with a PP that no other line references.
        let mut ends: Vec<Vec<u8>> = pg
            .iter()
            .filter(|&&i| line_field(&lines[i], b"PP").is_some())
            .filter_map(|&i| line_field(&lines[i], b"ID"))
            .filter(|id| !pps.iter().any(|p| p == id))
            .map(|v| v.to_vec())
            .collect();
        if ends.is_empty()
            && let Some(last) = ids.last()
        {
            ends.push(last.clone());
        }
        let mut taken: Vec<Vec<u8>> = ids.clone();
        let mut new_lines = Vec::new();
        let pps_for: Vec<Option<Vec<u8>>> =
            if ends.is_empty() { vec![None] } else { ends.into_iter().map(Some).collect() };
        for pp in pps_for {
            let mut new_id = id.as_bytes().to_vec();
            let mut n = 0;
            while taken.contains(&new_id) {
                n += 1;
                new_id = format!("{id}.{n}").into_bytes();
            }
            taken.push(new_id.clone());
            let mut l = b"@PG\tID:".to_vec();
            l.extend_from_slice(&new_id);
            let mut items = fields.iter();
            if let Some((k, v)) = items.next() {
                l.extend_from_slice(format!("\t{k}:{v}").as_bytes());
            }
            if let Some(pp) = pp {
                l.extend_from_slice(b"\tPP:");
                l.extend_from_slice(&pp);
            }
            for (k, v) in items {
                l.extend_from_slice(format!("\t{k}:{v}").as_bytes());
            }
            new_lines.push(l);
        }
        let at = pg.last().map(|&i| i + 1).unwrap_or(lines.len());
        lines.splice(at..at, new_lines);
        self.set_lines(lines);
    }

    /// Sets `@HD` fields as htslib's `sam_hdr_update_line` (existing keys change in place, new keys
    /// are appended in the given order) or, without an `@HD` line, inserts `@HD VN:1.6 …` first;
    /// then removes the `remove` keys from `@HD`.
    pub fn update_hd(&mut self, set: &[(&str, &str)], remove: &[&str]) {
        let mut lines = self.owned_lines();
        match lines.iter().position(|l| l.starts_with(b"@HD\t") || l.as_slice() == b"@HD") {
            Some(at) => {
                let line = std::mem::take(&mut lines[at]);
                let mut fields: Vec<Vec<u8>> =
                    line.split(|&b| b == b'\t').skip(1).map(<[u8]>::to_vec).collect();
                for (k, v) in set {
                    let item = format!("{k}:{v}").into_bytes();
                    match fields
                        .iter_mut()
                        .find(|f| f.len() >= 3 && &f[..2] == k.as_bytes() && f[2] == b':')
                    {
                        Some(f) => *f = item,
                        None => fields.push(item),
                    }
                }
                fields.retain(|f| {
                    !remove.iter().any(|k| f.len() >= 3 && &f[..2] == k.as_bytes() && f[2] == b':')
                });
                let mut l = b"@HD".to_vec();
                for f in fields {
                    l.push(b'\t');
                    l.extend_from_slice(&f);
                }
                lines[at] = l;
            }
            None => {
                let mut l = b"@HD\tVN:1.6".to_vec();
                for (k, v) in set {
                    l.extend_from_slice(format!("\t{k}:{v}").as_bytes());
                }
                lines.insert(0, l);
            }
        }
        self.set_lines(lines);
    }

    /// Appends a `@CO` line at the end of the header.
    pub fn add_comment(&mut self, text: &str) {
        let mut lines = self.owned_lines();
        lines.push(format!("@CO\t{text}").into_bytes());
        self.set_lines(lines);
    }

    /// Text for SAM output: as stored, plus `@SQ` lines synthesised when the text has none.
    pub fn sam_text(&self) -> Vec<u8> {
        let mut out = self.text.clone();
        if !self.refs.is_empty() && !self.lines().any(|l| l.starts_with(b"@SQ\t")) {
            if !out.is_empty() && !out.ends_with(b"\n") {
                out.push(b'\n');
            }
            for r in &self.refs {
                out.extend_from_slice(b"@SQ\tSN:");
                out.extend_from_slice(&r.name);
                out.extend_from_slice(format!("\tLN:{}\n", r.len).as_bytes());
            }
        }
        out
    }

    /// The BAM header block: magic, text, reference list (SAMv1 §4.2).
    pub fn encode_bam(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.text.len() + 64 + self.refs.len() * 32);
        out.extend_from_slice(b"BAM\x01");
        out.extend_from_slice(&(self.text.len() as u32).to_le_bytes());
        out.extend_from_slice(&self.text);
        out.extend_from_slice(&(self.refs.len() as u32).to_le_bytes());
        for r in &self.refs {
            out.extend_from_slice(&(r.name.len() as u32 + 1).to_le_bytes());
            out.extend_from_slice(&r.name);
            out.push(0);
            // htslib's bam_hdr_write: a longer reference is UINT32_MAX here, its LN in the text.
            out.extend_from_slice(&(r.len.min(u32::MAX as u64) as u32).to_le_bytes());
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pg_ids(h: &Header) -> Vec<String> {
        h.lines()
            .filter(|l| l.starts_with(b"@PG"))
            .map(|l| String::from_utf8_lossy(l).into_owned())
            .collect()
    }

    #[test]
    fn parses_sq_lines() {
        let h = Header::from_sam_text(
            b"@HD\tVN:1.6\n@SQ\tSN:chr1\tLN:100\n@SQ\tSN:chr2\tLN:5\n".to_vec(),
        )
        .unwrap();
        assert_eq!(h.tid(b"chr2"), Some(1));
        assert_eq!(h.refs()[0].len, 100);
        assert!(Header::from_sam_text(b"@SQ\tSN:x\n".to_vec()).is_err());
    }

    /// The header lines samtools 1.24 refuses or reads leniently (checked with the oracle).
    #[test]
    fn checks_lines_as_htslib() {
        let parse = |text: &str| Header::from_sam_text(text.as_bytes().to_vec());
        let h = parse("@SQ\tSN:c\tLN:5000x\n@CO\n@HD\tVN:1.6\n").unwrap();
        assert_eq!(h.refs()[0].len, 5000);
        // 64-bit lengths (htslib's hts_pos_t); strtoll saturates.
        assert_eq!(parse("@SQ\tSN:c\tLN:10000000045\n").unwrap().refs()[0].len, 10_000_000_045);
        let huge = parse("@SQ\tSN:c\tLN:99999999999999999999999\n").unwrap();
        assert_eq!(huge.refs()[0].len, i64::MAX as u64);
        assert_eq!(&huge.encode_bam()[huge.encode_bam().len() - 4..], &u32::MAX.to_le_bytes());
        for bad in ["@SQ\tSN:c\tLN:abc", "@SQ\tSN:c\tLN:0", "@SQ\tSN:c\tLN:-5", "@xy\tfoo"] {
            assert!(parse(bad).is_err(), "{bad}");
        }
        assert!(matches!(parse("@COx\n"), Err(HeaderError::BadLine(_))));
        assert!(matches!(parse("@\n"), Err(HeaderError::BadLine(_))));
        assert!(matches!(parse("@RG\tSM:x\n"), Err(HeaderError::ReadGroupWithoutId(_))));
        // A NUL ends the line: here before LN, which samtools then reports missing.
        assert!(matches!(parse("@SQ\tSN:c\0x\tLN:9\n"), Err(HeaderError::BadSq(_))));
        assert_eq!(parse("@SQ\tSN:c\tLN:9\0x\n\0\0").unwrap().refs()[0].name, b"c");
    }

    #[test]
    fn pg_chains_to_each_end() {
        let mut h =
            Header::from_sam_text(b"@PG\tID:a\n@PG\tID:b\tPP:a\n@PG\tID:c\n@CO\tx\n".to_vec())
                .unwrap();
        h.add_pg("samtools", &[("PN", "samtools"), ("VN", "1.24")]);
        let pgs = pg_ids(&h);
        assert_eq!(pgs[3], "@PG\tID:samtools\tPN:samtools\tPP:b\tVN:1.24");
        assert!(h.lines().last().unwrap().starts_with(b"@CO"));
        h.add_pg("samtools", &[("PN", "samtools")]);
        assert_eq!(pg_ids(&h)[4], "@PG\tID:samtools.1\tPN:samtools\tPP:samtools");
    }

    #[test]
    fn hd_updates_in_place_or_is_added_first() {
        let mut h = Header::from_sam_text(
            b"@HD\tSO:unsorted\tVN:1.4\tGO:query\tSS:x:y\n@SQ\tSN:c\tLN:5\n".to_vec(),
        )
        .unwrap();
        h.update_hd(&[("SO", "coordinate")], &["GO", "SS"]);
        assert_eq!(h.lines().next().unwrap(), b"@HD\tSO:coordinate\tVN:1.4");
        h.update_hd(&[("SO", "queryname"), ("SS", "queryname:natural")], &["GO"]);
        assert_eq!(h.lines().next().unwrap(), b"@HD\tSO:queryname\tVN:1.4\tSS:queryname:natural");
        let mut e = Header::from_sam_text(b"@SQ\tSN:c\tLN:5\n".to_vec()).unwrap();
        e.update_hd(&[("SO", "unsorted"), ("GO", "query")], &[]);
        assert_eq!(e.lines().next().unwrap(), b"@HD\tVN:1.6\tSO:unsorted\tGO:query");
    }

    #[test]
    fn pg_without_chain_uses_last_line() {
        let mut h = Header::from_sam_text(b"@PG\tID:a\n@PG\tID:b\n".to_vec()).unwrap();
        h.add_pg("samtools", &[("PN", "samtools")]);
        assert_eq!(pg_ids(&h)[2], "@PG\tID:samtools\tPN:samtools\tPP:b");
        let mut e = Header::default();
        e.add_pg("samtools", &[("PN", "samtools")]);
        assert_eq!(pg_ids(&e), vec!["@PG\tID:samtools\tPN:samtools"]);
    }
}
