//! `samtools import` (samtools 1.24 `bam_import.c`): FASTQ files → unaligned SAM or BAM.
//! Command line: `crate::cli::import`.
//!
//! The files are read a record each in turn: index files (`--i1`, `--i2`) first, whose bases
//! and qualities become the barcode tags of the read records that follow, then the unpaired,
//! READ1, READ2 and interleaved files. The header says how `samtools fastq` turns the output
//! back into the input files (`@CO Reverse with: ...`).

use crate::error::Error;
use crate::io::fastq::parse::{FastqReader, FastqReading};
use crate::io::fastq::style::AuxChoice;
use crate::io::output_spec::OutputSpec;
use crate::io::sink::{Encoded, RecordSink};
use crate::record::layout::{SEQ_CODES, flags};
use crate::record::{Header, RecordRef, edit};

/// Input files in the order they are read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FileRole {
    Index1,
    Index2,
    Unpaired,
    Read1,
    Read2,
    /// One file holding READ1 and READ2 (or unpaired) reads.
    Interleaved,
}

pub const ROLES: [FileRole; 6] = [
    FileRole::Index1,
    FileRole::Index2,
    FileRole::Unpaired,
    FileRole::Read1,
    FileRole::Read2,
    FileRole::Interleaved,
];

/// Records gathered before they are handed to the output.
const WRITE_BATCH: usize = 4096;

#[derive(Clone, Debug)]
pub struct ImportOptions {
    /// Per [`ROLES`] entry: its file.
    pub files: [Option<String>; 6],
    /// `-` is stdout.
    pub output: String,
    /// The output's format, level, deflate engine and CRAM settings.
    pub spec: OutputSpec,
    /// `-N`: the name is the header's second word.
    pub name2: bool,
    /// `-i`: CASAVA comments are read.
    pub casava: bool,
    /// `-U`: the tag a UMI from the name goes to.
    pub umi_tag: Option<[u8; 2]>,
    /// `-T`: the comment's tags to keep.
    pub aux: AuxChoice,
    /// `-b`: index tags on READ2 too.
    pub index_both: bool,
    pub barcode_tag: [u8; 2],
    pub quality_tag: [u8; 2],
    /// `-U --UMI-tag LIST` for the header's reverse command.
    pub umi_list: Option<String>,
    /// `-R ID` and `-r LINE` (already joined).
    pub rg: Option<String>,
    pub rg_line: Option<String>,
    /// `--order TAG[:WIDTH]`: the tag and the width of a zero-padded string (0: an integer).
    pub order: Option<([u8; 2], usize)>,
    pub pg: Option<Vec<(String, String)>>,
    pub threads: usize,
}

pub fn run(options: &ImportOptions) -> Result<(), Error> {
    crate::pipeline::threads::pool(options.threads).install(|| import(options))
}

/// The header: `@HD`, the reverse command, `@PG`, the read group.
fn header(options: &ImportOptions, rg_line: Option<&str>) -> Result<Header, Error> {
    let mut reverse = String::new();
    let mut index_format = String::new();
    for (role, _) in ROLES.iter().zip(&options.files).filter(|(_, f)| f.is_some()) {
        reverse.push_str(match role {
            FileRole::Index1 => " --i1 I1.fastq",
            FileRole::Index2 => " --i2 I2.fastq",
            FileRole::Unpaired => " -0 unpaired.fastq",
            FileRole::Read1 => " -1 R1.fastq",
            FileRole::Read2 => " -2 R2.fastq",
            FileRole::Interleaved => " -n -o paired.fastq",
        });
        if matches!(role, FileRole::Index1 | FileRole::Index2) {
            index_format.push_str("i*");
        }
    }
    if options.casava {
        reverse.push_str(" -i");
        if index_format.is_empty() {
            reverse.push_str(" --index-format 'i*i*'");
        }
    }
    if let Some(list) = &options.umi_list {
        reverse.push_str(&format!(" -U --UMI-tag {list}"));
    }
    let mut text = String::from("@HD\tVN:1.6\tSO:unsorted\tGO:query\n");
    if index_format.is_empty() {
        text.push_str(&format!("@CO\tReverse with: samtools fastq{reverse}\n"));
    } else {
        text.push_str(&format!(
            "@CO\tReverse with: samtools fastq{reverse} --index-format=\"{index_format}\"\n"
        ));
    }
    let mut header = Header::from_sam_text(text.into_bytes())
        .map_err(|e| Error::Bare(format!("samtools import: {e}")))?;
    if let Some(pg) = &options.pg {
        let fields: Vec<(&str, &str)> = pg.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        header.add_pg("samtools", &fields);
    }
    if let Some(line) = rg_line {
        header.append_lines([line.as_bytes().to_vec()]);
    }
    Ok(header)
}

fn import(options: &ImportOptions) -> Result<(), Error> {
    let mut readers = Vec::new();
    for (role, file) in ROLES.iter().zip(&options.files) {
        let Some(path) = file else { continue };
        let reading = FastqReading {
            name2: options.name2,
            casava: options.casava,
            barcode_tag: Some(options.barcode_tag),
            umi_tag: options.umi_tag,
            aux: options.aux.clone(),
        };
        let reader = FastqReader::open(path, reading).map_err(|e| {
            let reason = crate::error::c_message(&e);
            Error::Bare(format!(
                "[E::hts_open_format] Failed to open file \"{path}\" : {reason}\n{path}: {reason}"
            ))
        })?;
        readers.push((*role, reader));
    }
    let rg_line = match (&options.rg_line, &options.rg) {
        (Some(line), _) if !line.starts_with('@') => Some(format!("@RG\t{line}")),
        (Some(line), _) => Some(line.clone()),
        (None, Some(id)) => Some(format!("@RG\tID:{id}")),
        (None, None) => None,
    };
    let header = header(options, rg_line.as_deref())?;
    let rg = match &rg_line {
        Some(line) => match line.find("\tID:") {
            Some(at) => Some(line[at + 4..].split('\t').next().unwrap_or("").to_string()),
            // samtools stops here with nothing written, yet succeeds.
            None if line.starts_with("@RG") => {
                eprintln!("[E::sam_hrecs_update_hashes] Header includes @RG line with no ID: tag");
                return Ok(());
            }
            None => {
                eprintln!("\"-r RG-LINE\" option contained no ID field");
                return Ok(());
            }
        },
        None => None,
    };
    let mut sink =
        RecordSink::create(&options.output, &options.spec, options.threads, &header, true)?;
    let format = sink.format();
    let roles: Vec<FileRole> = readers.iter().map(|(r, _)| *r).collect();
    let (tx, rx) = std::sync::mpsc::sync_channel::<Encoded>(4);
    let (header, rg, roles_read) = (&header, &rg, &roles);
    // Parsing runs on a thread of its own beside the output's compression.
    let (read, written) = std::thread::scope(|scope| {
        let producer = scope.spawn(move || -> Result<(i32, usize), Error> {
            let mut readers = readers;
            let roles = roles_read;
            let mut out = Encoded::default();
            let mut read_number = 0u64;
            let (mut ends, mut result) = (0usize, 0i32);
            'rounds: loop {
                let (mut index_seq, mut index_qual) = (Vec::new(), Vec::new());
                for i in 0..readers.len() {
                    let role = roles[i];
                    let mut b = match readers[i].1.next_record() {
                        Ok(Some(b)) => b,
                        Ok(None) => {
                            ends += 1;
                            result = -1;
                            continue;
                        }
                        Err(_) => {
                            result = -2;
                            break 'rounds;
                        }
                    };
                    result = 0;
                    if matches!(role, FileRole::Index1 | FileRole::Index2) {
                        append_index(&mut index_seq, &mut index_qual, &b);
                        continue;
                    }
                    let takes_index = options.index_both
                        || matches!(
                            role,
                            FileRole::Interleaved | FileRole::Unpaired | FileRole::Read1
                        );
                    if !index_seq.is_empty() && takes_index {
                        edit::append_str(&mut b, options.barcode_tag, &index_seq);
                        edit::append_str(&mut b, options.quality_tag, &index_qual);
                    }
                    let mut flag = edit::flag(&b);
                    match role {
                        FileRole::Read1 => {
                            if flag & (flags::READ1 | flags::READ2) == 0 {
                                flag |= flags::READ1;
                            }
                            flag |= flags::PAIRED;
                            if roles.get(i + 1) == Some(&FileRole::Read2) {
                                flag |= flags::MUNMAP;
                            }
                        }
                        FileRole::Read2 => {
                            flag |= flags::PAIRED | flags::READ2;
                            if i > 0 && roles[i - 1] == FileRole::Read1 {
                                flag |= flags::MUNMAP;
                            }
                        }
                        _ => {}
                    }
                    edit::set_flag(&mut b, flag);
                    if let Some(id) = &rg {
                        edit::append_str(&mut b, *b"RG", id.as_bytes());
                    }
                    if let Some((tag, width)) = options.order {
                        let done = if width > 0 {
                            edit::update_str(
                                &mut b,
                                tag,
                                format!("{read_number:0width$}").as_bytes(),
                            )
                        } else {
                            edit::update_int(&mut b, tag, read_number as i64)
                        };
                        done.map_err(|_| {
                            Error::Bare("samtools import: could not set the --order tag".into())
                        })?;
                        read_number += 1;
                    }
                    out.push_record(&b, header, format);
                    if out.ends.len() >= WRITE_BATCH {
                        // The next batch goes into a recycled buffer the size of this one: fresh
                        // buffers grown by doubling were 58 k page faults on 0.5 M pairs.
                        let next = Encoded {
                            data: crate::io::recycle::take(out.data.len() + out.data.len() / 8),
                            ends: Vec::with_capacity(WRITE_BATCH),
                        };
                        if tx.send(std::mem::replace(&mut out, next)).is_err() {
                            return Ok((result, ends));
                        }
                    }
                }
                if result < 0 {
                    break;
                }
            }
            let _ = tx.send(out);
            Ok((result, ends))
        });
        let mut written = Ok(());
        for enc in rx {
            if written.is_ok() {
                written = sink.write_owned(enc);
            }
        }
        let read = producer
            .join()
            .unwrap_or_else(|_| Err(Error::Bare("samtools import: reading failed".into())));
        (read, written)
    });
    let (result, ends) = read?;
    written?;
    // What was read before a bad record stays written, as samtools leaves it.
    sink.finish()?;
    if result != -1 {
        return Err(Error::Bare("samtools import: truncated file. Aborting".into()));
    }
    if ends != roles.len() {
        return Err(Error::Bare(
            "samtools import: input files with differing number of records".into(),
        ));
    }
    Ok(())
}

/// An index read's bases and qualities joined to those before it (`-` and space between).
fn append_index(seq: &mut Vec<u8>, qual: &mut Vec<u8>, b: &[u8]) {
    let r = RecordRef::new(b);
    if !seq.is_empty() {
        seq.push(b'-');
    }
    if !qual.is_empty() {
        qual.push(b' ');
    }
    seq.extend((0..r.l_seq()).map(|i| SEQ_CODES[r.base_code(i) as usize]));
    qual.extend(r.qual().iter().map(|q| q.wrapping_add(b'!')));
}
