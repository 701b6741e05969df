//! Parsing `checksum` reports read back (samtools' own layout, or biobambam2's `bamseqchksum`) for
//! `checksum -m`, as samtools 1.24's `sums_parse` reads them: the column header says which
//! products a row has, `# Aux tags:` and `# BAM flags:` what they covered; the per-group rows
//! are kept, the "all" rows skipped (they are summed again).

use super::Crcs;

/// A column of a report.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Column {
    Group,
    Qc,
    Count,
    Seq,
    Name,
    Qual,
    Aux,
    Pos,
    Cigar,
    Mate,
    Combined,
}

/// One group row: `count` reads of `group` (`None`: no read group) in row `qc` (0 all, 1 pass,
/// 2 fail) with these products.
#[derive(Clone, Debug)]
pub struct Row {
    pub group: Option<Vec<u8>>,
    pub qc: usize,
    pub count: u64,
    pub crcs: Crcs,
}

/// What one report holds.
#[derive(Debug, Default)]
pub struct Report {
    pub rows: Vec<Row>,
    /// The `# Aux tags:` text, or the `b_seq_tags(…)` list.
    pub tags: Option<String>,
    /// The `# BAM flags:` value as written.
    pub flags: Option<String>,
    pub has_pos: bool,
    pub has_cigar: bool,
    pub has_mate: bool,
}

/// samtools' column names, in either layout.
fn column(token: &str, bamseqchksum: bool) -> Option<Column> {
    Some(match (token, bamseqchksum) {
        ("Group", false) | ("###", true) => Column::Group,
        ("QC", false) | ("set", true) => Column::Qc,
        ("count", _) => Column::Count,
        ("flag+seq", false) | ("b_seq", true) => Column::Seq,
        ("+name", false) | ("name_b_seq", true) => Column::Name,
        ("+qual", false) | ("b_seq_qual", true) => Column::Qual,
        ("+aux", false) => Column::Aux,
        (t, true) if t.starts_with("b_seq_tags(") => Column::Aux,
        ("+chr/pos", false) => Column::Pos,
        ("+cigar", false) => Column::Cigar,
        ("+mate", false) => Column::Mate,
        ("combined", false) => Column::Combined,
        _ => return None,
    })
}

/// `strtoul(text, NULL, 16)` as samtools reads the products (an unparsable one is 0).
fn hex(text: &str) -> u32 {
    let digits: String = text.chars().take_while(char::is_ascii_hexdigit).collect();
    u64::from_str_radix(&digits, 16).map_or(0, |v| v as u32)
}

struct Parser {
    report: Report,
    columns: Option<Vec<Column>>,
    bamseqchksum: bool,
    crcs: Crcs,
}

impl Parser {
    /// The column header line; `Err` with samtools' message.
    fn header(&mut self, tokens: &[&str], bamseqchksum: bool) -> Result<(), String> {
        if self.columns.is_some() {
            return Err("Invalid header, repeat of header line".into());
        }
        self.bamseqchksum = bamseqchksum;
        let mut columns = Vec::new();
        for token in tokens {
            let c = column(token, bamseqchksum)
                .ok_or_else(|| format!("Unrecognised header token '{token}'"))?;
            match c {
                Column::Pos => self.report.has_pos = true,
                Column::Cigar => self.report.has_cigar = true,
                Column::Mate => self.report.has_mate = true,
                Column::Aux if bamseqchksum => {
                    let list = &token["b_seq_tags(".len()..];
                    let list =
                        list.strip_suffix(')').unwrap_or(&list[..list.len().saturating_sub(1)]);
                    self.report.tags = Some(list.to_string());
                }
                _ => {}
            }
            columns.push(c);
        }
        self.columns = Some(columns);
        Ok(())
    }

    /// A data line.
    fn row(&mut self, line: &str) -> Result<(), String> {
        let mut fields: Vec<&str> = Vec::new();
        // biobambam2 writes the group without a read group as an empty first column.
        if self.bamseqchksum && line.starts_with('\t') {
            fields.push("");
        }
        fields.extend(line.split_ascii_whitespace().take(11 - fields.len()));
        let columns = self.columns.as_deref().unwrap_or(&[]);
        let min_fields = if self.bamseqchksum { 7 } else { 8 };
        if fields.len() < min_fields || fields.len() != columns.len() {
            return Err(format!("Incorrect number of columns in line: {line}"));
        }
        if fields.iter().any(|f| f.len() >= 127) {
            return Err("Field too long".into());
        }
        let (mut qc, mut count) = (0, 0);
        for (field, col) in fields.iter().zip(columns) {
            match col {
                Column::Qc => {
                    qc = ["all", "pass", "fail"]
                        .iter()
                        .position(|q| q == field)
                        .ok_or_else(String::new)?
                }
                Column::Count => count = field.parse::<u64>().unwrap_or(0),
                Column::Seq => self.crcs.seq = hex(field),
                Column::Name => self.crcs.name = hex(field),
                Column::Qual => self.crcs.qual = hex(field),
                Column::Aux => self.crcs.aux = hex(field),
                Column::Pos => self.crcs.pos = hex(field),
                Column::Cigar => self.crcs.cigar = hex(field),
                Column::Mate => self.crcs.mate = hex(field),
                Column::Group | Column::Combined => {}
            }
        }
        let group =
            (fields[0] != "-" && !fields[0].is_empty()).then(|| fields[0].as_bytes().to_vec());
        self.report.rows.push(Row { group, qc, count, crcs: self.crcs });
        Ok(())
    }

    fn line(&mut self, line: &str) -> Result<(), String> {
        if let Some(rest) = line.strip_prefix("# Checksum ") {
            let version: Vec<&str> =
                rest.split_whitespace().next().unwrap_or("").splitn(2, '.').collect();
            if let [major, minor] = version[..]
                && let (Ok(major), Ok(minor)) = (major.parse::<i32>(), leading_int(minor))
                && (major, minor) != (1, 0)
            {
                return Err("Unsupported checksum output version".into());
            }
        } else if line.starts_with("# Group") {
            let tokens: Vec<&str> = line[2..].split_ascii_whitespace().collect();
            self.header(&tokens, false)?;
        } else if let Some(rest) = line.strip_prefix("# Aux tags:") {
            let value = rest.trim_start();
            if !value.is_empty() {
                self.report.tags = Some(value.to_string());
            }
        } else if let Some(rest) = line.strip_prefix("# BAM flags:") {
            let value = rest.trim_start();
            if !value.is_empty() {
                self.report.flags = Some(value.to_string());
            }
        } else if line.starts_with("###\t") {
            let tokens: Vec<&str> = line.split_ascii_whitespace().collect();
            self.header(&tokens, true)?;
        } else if line.is_empty()
            || line.starts_with('#')
            || line.starts_with("all ")
            || line.starts_with("all\t")
        {
        } else {
            self.row(line)?;
        }
        Ok(())
    }
}

/// The leading decimal integer of `s` (`sscanf`'s `%d`).
fn leading_int(s: &str) -> Result<i32, ()> {
    let digits: String = s.chars().take_while(char::is_ascii_digit).collect();
    digits.parse().map_err(|_| ())
}

/// Parses the text of a report; `Err` with samtools' message (several lines at most).
pub fn parse(text: &str) -> Result<Report, String> {
    let ones = Crcs { seq: 1, name: 1, qual: 1, aux: 1, pos: 1, cigar: 1, mate: 1 };
    let mut parser =
        Parser { report: Report::default(), columns: None, bamseqchksum: false, crcs: ones };
    for line in text.split_inclusive('\n') {
        parser.line(line.strip_suffix('\n').unwrap_or(line))?;
    }
    Ok(parser.report)
}
