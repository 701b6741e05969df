//! Building an index: htslib 1.24's `fai_build_core`, one state per place in a record, read a
//! byte at a time except inside lines, which are scanned whole ([`Stream::take_line`]).

use super::index::{Entry, FastaIndex, Format};
use super::source::Stream;

#[derive(Clone, Copy, PartialEq, Eq)]
enum State {
    /// Between records (htslib's `OUT_READ`).
    OutRead,
    InName,
    InSeq,
    /// A FASTQ sequence ended by a short line: `+` must follow.
    SeqEnd,
    InQual,
}

/// C's `isspace` in the "C" locale.
fn is_space(c: u8) -> bool {
    matches!(c, b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r')
}

fn is_graph(c: u8) -> bool {
    c > b' ' && c <= b'~'
}

/// The record being read.
#[derive(Default)]
struct Current {
    name: Vec<u8>,
    seq_len: u64,
    qual_len: u64,
    /// Bytes per line (htslib's `line_len`).
    line_width: u64,
    /// Bases per line (htslib's `char_len`).
    line_bases: u64,
    seq_offset: u64,
    qual_offset: u64,
}

impl Current {
    fn entry(&self) -> Entry {
        Entry {
            name: self.name.clone(),
            len: self.seq_len,
            seq_offset: self.seq_offset,
            line_bases: self.line_bases as u32,
            line_width: self.line_width as u32,
            qual_offset: self.qual_offset,
        }
    }

    fn name(&self) -> String {
        String::from_utf8_lossy(&self.name).into_owned()
    }
}

/// Indexes the stream; the error is htslib's `[E::fai_build_core]` line. Duplicate names are
/// warned about on stderr as they are met, as htslib does.
pub fn build(stream: &mut Stream) -> Result<(FastaIndex, Format), String> {
    let fail = |what: String| Err(format!("[E::fai_build_core] {what}"));
    let mut index = FastaIndex::default();
    let mut format: Option<Format> = None;
    let mut state = State::OutRead;
    let mut read_done = false;
    let mut line_num: u64 = 1;
    let mut cur = Current::default();
    let insert = |index: &mut FastaIndex, cur: &Current| {
        if let Some(warning) = index.insert(cur.entry()) {
            eprintln!("{warning}");
        }
    };
    while let Some(c) = stream.getc() {
        match state {
            State::OutRead => match c {
                b'>' | b'@' => {
                    let this = if c == b'>' { Format::Fasta } else { Format::Fastq };
                    if format.is_some_and(|f| f != this) {
                        let (found, other) =
                            if c == b'>' { ('>', "FASTQ") } else { ('@', "FASTA") };
                        return fail(format!(
                            "Found '{found}' in a {other} file, error at line {line_num}"
                        ));
                    }
                    format = Some(this);
                    state = State::InName;
                }
                b'\r' => {
                    if stream.getc() == Some(b'\n') {
                        line_num += 1;
                    } else {
                        return fail(format!(
                            "Format error, carriage return not followed by new line at line {line_num}"
                        ));
                    }
                }
                b'\n' => line_num += 1,
                _ => {
                    let what = if (b' '..=b'~').contains(&c) {
                        format!("\"{}\"", c as char)
                    } else {
                        "character".to_string()
                    };
                    return fail(format!("Format error, unexpected {what} at line {line_num}"));
                }
            },
            State::InName => {
                if read_done {
                    insert(&mut index, &cur);
                    read_done = false;
                }
                cur.name.clear();
                let mut last = Some(c);
                while let Some(ch) = last {
                    if !is_space(ch) {
                        cur.name.push(ch);
                    } else if !cur.name.is_empty() || ch == b'\n' {
                        break;
                    }
                    last = stream.getc();
                }
                if last.is_none() {
                    return fail(format!(
                        "The last entry '{}' has no sequence at line {line_num}",
                        cur.name()
                    ));
                }
                if last != Some(b'\n') {
                    stream.take_line();
                }
                state = State::InSeq;
                (cur.seq_len, cur.qual_len, cur.line_bases, cur.line_width) = (0, 0, 0, 0);
                cur.seq_offset = stream.utell();
                line_num += 1;
            }
            State::InSeq => {
                match (format, c) {
                    (Some(Format::Fasta), b'\n') => {
                        state = State::OutRead;
                        line_num += 1;
                        continue;
                    }
                    (Some(Format::Fasta), b'>') => {
                        state = State::InName;
                        continue;
                    }
                    (Some(Format::Fastq), b'+') => {
                        state = State::InQual;
                        stream.take_line();
                        cur.qual_offset = stream.utell();
                        line_num += 1;
                        continue;
                    }
                    (Some(Format::Fastq), b'\n') => {
                        return fail(format!(
                            "Inlined empty line is not allowed in sequence '{}' at line {line_num}",
                            cur.name()
                        ));
                    }
                    _ => {}
                }
                if format == Some(Format::Fasta) {
                    read_done = true;
                }
                let (ll, cl) = line_counts(stream, c);
                cur.seq_len += cl;
                if cur.line_width == 0 {
                    cur.line_width = ll;
                    cur.line_bases = cl;
                } else if cur.line_width > ll {
                    state =
                        if format == Some(Format::Fasta) { State::OutRead } else { State::SeqEnd };
                } else if cur.line_width < ll {
                    return fail(format!(
                        "Different line length in sequence '{}' at line {line_num}",
                        cur.name()
                    ));
                }
                line_num += 1;
            }
            State::SeqEnd => {
                if c != b'+' {
                    return fail(format!(
                        "Format error, expecting '+', got '{}' at line {line_num}",
                        c as char
                    ));
                }
                state = State::InQual;
                stream.take_line();
                cur.qual_offset = stream.utell();
                line_num += 1;
            }
            State::InQual => {
                if c == b'\n' {
                    if !read_done {
                        return fail(format!(
                            "Inlined empty line is not allowed in quality of sequence '{}' at line {line_num}",
                            cur.name()
                        ));
                    }
                    state = State::OutRead;
                    line_num += 1;
                    continue;
                } else if c == b'@' && read_done {
                    state = State::InName;
                    continue;
                }
                let (ll, cl) = line_counts(stream, c);
                cur.qual_len += cl;
                if cur.line_width < ll {
                    return fail(format!(
                        "Quality line length too long in '{}' at line {line_num}",
                        cur.name()
                    ));
                } else if cur.qual_len == cur.seq_len {
                    read_done = true;
                } else if cur.qual_len > cur.seq_len {
                    return fail(format!(
                        "Quality length longer than sequence in '{}' at line {line_num}",
                        cur.name()
                    ));
                } else if cur.line_width > ll {
                    return fail(format!(
                        "Quality line length too short in '{}' at line {line_num}",
                        cur.name()
                    ));
                }
                line_num += 1;
            }
        }
    }
    if !read_done {
        return fail(format!("File truncated at line {line_num}"));
    }
    insert(&mut index, &cur);
    Ok((index, format.unwrap_or(Format::Fasta)))
}

/// The rest of a line whose first byte `first` was read: (bytes with one for its end, graphic
/// bytes), as htslib counts `ll` and `cl` (one for the end even when the file ends first).
fn line_counts(stream: &mut Stream, first: u8) -> (u64, u64) {
    let (all, graphic, ended) = stream.take_line();
    let before_end = all - u64::from(ended);
    (1 + before_end + 1, u64::from(is_graph(first)) + graphic)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn index_of(text: &[u8]) -> Result<(FastaIndex, Format), String> {
        let dir = std::env::temp_dir().join(format!("mdsam-fai-build-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join(format!("{:x}.fa", crc32fast::hash(text)));
        std::fs::write(&path, text).unwrap();
        let mut stream = Stream::open(path.to_str().unwrap()).unwrap();
        let result = build(&mut stream);
        let _ = std::fs::remove_file(&path);
        result
    }

    #[test]
    fn fasta_layout_is_measured_from_the_first_line() {
        let (index, format) =
            index_of(b">a desc\nACGTACGTAC\nGTac\n>b\nNNNN\n>c\n>d\nAC\n").unwrap();
        assert_eq!(format, Format::Fasta);
        assert_eq!(index.to_fai(format), b"a\t14\t8\t10\t11\nb\t4\t27\t4\t5\nd\t2\t38\t2\t3\n");
    }

    #[test]
    fn fastq_records_carry_a_quality_offset() {
        let (index, format) = index_of(b"@r1\nACGT\n+\nIIII\n@r2\nAC\n+r2\n##\n").unwrap();
        assert_eq!(format, Format::Fastq);
        assert_eq!(index.to_fai(format), b"r1\t4\t4\t4\t5\t11\nr2\t2\t20\t2\t3\t27\n");
    }

    #[test]
    fn malformed_files_give_htslib_messages() {
        let cases: &[(&[u8], &str)] = &[
            (b"", "File truncated at line 1"),
            (b"ACGT\n", "Format error, unexpected \"A\" at line 1"),
            (b">a\nACGT\nACGTAC\n", "Different line length in sequence 'a' at line 3"),
            (b">a\nACGT\nAC\nAC\n", "Format error, unexpected \"A\" at line 4"),
            (b">a", "The last entry 'a' has no sequence at line 1"),
            (b">a\nAC\n\n@b\n", "Found '@' in a FASTA file, error at line 4"),
            (b"@a\nAC\n+\nI\n", "Quality line length too short in 'a' at line 4"),
            (b"@a\nAC\n+\nIII\n", "Quality line length too long in 'a' at line 4"),
            (b"@a\nACGT\nA\n+\nIIII\n", "File truncated at line 6"),
            (b"@a\nACGT\nA\nX\n", "Format error, expecting '+', got 'X' at line 4"),
        ];
        for (text, want) in cases {
            let got = index_of(text).unwrap_err();
            assert_eq!(got, format!("[E::fai_build_core] {want}"), "{:?}", text);
        }
    }
}
