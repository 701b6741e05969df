//! SAM text for the simulator: the header and one line per record, formatted without `format!`.
//!
//! Layout: the 11 mandatory fields (SAMv1 § 1.4), then `NM:i MD:Z AS:i XS:i` on mapped records,
//! `RG:Z`, `SA:Z` when split, `BC:Z RX:Z`, then the extra tags of [`super::tags`]. Every value is
//! written exactly as samtools 1.24 prints it back, so `samtools view` reproduces the file.

use super::Order;
use super::alignment::format_cigar;
use super::genome::Genome;
use super::names::ReadGroup;
use super::reads::{SimRecord, Template};

/// Names the records refer to: references and read groups.
pub struct Dictionary<'a> {
    pub genome: &'a Genome,
    pub read_groups: &'a [ReadGroup],
}

/// Writes `@HD`, `@SQ`, `@RG` and `@PG` lines.
pub fn write_header(dictionary: &Dictionary, order: Order, read_len: u32, out: &mut Vec<u8>) {
    out.extend_from_slice(match order {
        Order::Name => b"@HD\tVN:1.6\tSO:unsorted\tGO:query\n".as_slice(),
        Order::Coordinate => b"@HD\tVN:1.6\tSO:coordinate\n",
    });
    let mut number = itoa::Buffer::new();
    for reference in &dictionary.genome.references {
        out.extend_from_slice(b"@SQ\tSN:");
        out.extend_from_slice(reference.name.as_bytes());
        out.extend_from_slice(b"\tLN:");
        out.extend_from_slice(number.format(reference.sequence.len()).as_bytes());
        out.push(b'\n');
    }
    for group in dictionary.read_groups {
        let line = format!(
            "@RG\tID:{id}\tSM:{sample}\tLB:{library}\tPL:ILLUMINA\tPU:{id}.{barcode}\tBC:{barcode}\n",
            id = group.id,
            sample = group.sample,
            library = group.library,
            barcode = group.barcode,
        );
        out.extend_from_slice(line.as_bytes());
    }
    let command_line = format!(
        "@PG\tID:bwa\tPN:bwa\tVN:0.7.17-r1188\tCL:bwa mem -t 16 -C -Y ref.fa sim_R1.fastq.gz sim_R2.fastq.gz\tDS:mdsam simulate, {read_len} bp reads\n"
    );
    out.extend_from_slice(command_line.as_bytes());
}

/// Appends the SAM line of `record` of `template`.
pub fn write_record(
    dictionary: &Dictionary,
    template: &Template,
    record: &SimRecord,
    out: &mut Vec<u8>,
) {
    let mut number = itoa::Buffer::new();
    let reference_name = |tid: i32| -> &[u8] {
        if tid < 0 { b"*" } else { dictionary.genome.references[tid as usize].name.as_bytes() }
    };
    out.extend_from_slice(&template.name);
    out.push(b'\t');
    out.extend_from_slice(number.format(record.flag).as_bytes());
    out.push(b'\t');
    out.extend_from_slice(reference_name(record.tid));
    out.push(b'\t');
    out.extend_from_slice(number.format(record.pos + 1).as_bytes());
    out.push(b'\t');
    out.extend_from_slice(number.format(record.mapq).as_bytes());
    out.push(b'\t');
    format_cigar(&record.cigar, false, out);
    out.push(b'\t');
    if record.next_tid >= 0 && record.next_tid == record.tid {
        out.push(b'=');
    } else {
        out.extend_from_slice(reference_name(record.next_tid));
    }
    out.push(b'\t');
    out.extend_from_slice(number.format(record.next_pos + 1).as_bytes());
    out.push(b'\t');
    out.extend_from_slice(number.format(record.tlen).as_bytes());
    out.push(b'\t');
    out.extend_from_slice(if record.seq.is_empty() { b"*" } else { &record.seq });
    out.push(b'\t');
    out.extend_from_slice(if record.qual.is_empty() { b"*" } else { &record.qual });
    if record.has_alignment_tags {
        out.extend_from_slice(b"\tNM:i:");
        out.extend_from_slice(number.format(record.edit_distance).as_bytes());
        out.extend_from_slice(b"\tMD:Z:");
        out.extend_from_slice(&record.md);
        out.extend_from_slice(b"\tAS:i:");
        out.extend_from_slice(number.format(record.score).as_bytes());
        out.extend_from_slice(b"\tXS:i:");
        out.extend_from_slice(number.format(record.suboptimal_score).as_bytes());
    }
    out.extend_from_slice(b"\tRG:Z:");
    out.extend_from_slice(dictionary.read_groups[template.read_group].id.as_bytes());
    if !record.supplementary_alignments.is_empty() {
        out.extend_from_slice(b"\tSA:Z:");
        out.extend_from_slice(&record.supplementary_alignments);
    }
    out.extend_from_slice(b"\tBC:Z:");
    out.extend_from_slice(&template.barcode);
    out.extend_from_slice(b"\tRX:Z:");
    out.extend_from_slice(&template.umi);
    out.extend_from_slice(&record.extra_tags);
    out.push(b'\n');
}
