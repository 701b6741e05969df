//! `cat`'s output header: the first input's (or `-h`'s) with every input's `@RG` lines that it
//! lacks appended, as samtools' `cat_check_merge_hdr` merges them. Nothing else is compared: the
//! inputs' reference lists must already agree, as `samtools cat` assumes.

use std::collections::HashSet;

use crate::record::Header;
use crate::record::header::line_field;

/// Adds to `merged` the `@RG` lines of `input` whose `ID` it does not have yet, in order.
pub fn merge_read_groups(merged: &mut Header, input: &Header) {
    let groups: Vec<&[u8]> = input.read_group_lines().collect();
    if groups.is_empty() {
        return;
    }
    // htslib parses the merged header to look the IDs up, so it writes it rebuilt from then on.
    merged.rebuild_text();
    let mut known: HashSet<Vec<u8>> = merged
        .read_group_lines()
        .filter_map(|l| line_field(l, b"ID"))
        .map(<[u8]>::to_vec)
        .collect();
    let mut added = Vec::new();
    for line in groups {
        if let Some(id) = line_field(line, b"ID")
            && known.insert(id.to_vec())
        {
            added.push(line.to_vec());
        }
    }
    if !added.is_empty() {
        merged.append_lines(added);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header(text: &str) -> Header {
        Header::from_sam_text(text.as_bytes().to_vec()).unwrap()
    }

    fn text(h: &Header) -> String {
        String::from_utf8(h.text().to_vec()).unwrap()
    }

    #[test]
    fn new_read_groups_go_last_once_each() {
        let mut merged = header("@HD\tVN:1.6\n@RG\tID:a\n@SQ\tSN:c\tLN:9\n@PG\tID:p\n");
        merge_read_groups(&mut merged, &header("@RG\tID:b\tSM:x\n@RG\tID:a\tSM:other\n"));
        merge_read_groups(&mut merged, &header("@RG\tID:b\n@RG\tID:c\n"));
        assert_eq!(
            text(&merged),
            "@HD\tVN:1.6\n@RG\tID:a\n@SQ\tSN:c\tLN:9\n@PG\tID:p\n@RG\tID:b\tSM:x\n@RG\tID:c\n"
        );
    }

    #[test]
    fn an_input_without_read_groups_leaves_the_text_alone() {
        let mut merged = Header::from_parts(b"@CO\tx\n\0\0".to_vec(), Vec::new());
        merge_read_groups(&mut merged, &header("@CO\ty\n"));
        assert_eq!(merged.text(), b"@CO\tx\n\0\0");
        assert!(!merged.is_modified());
        merge_read_groups(&mut merged, &header("@RG\tID:x\n"));
        assert_eq!(text(&merged), "@CO\tx\n@RG\tID:x\n");
    }
}
