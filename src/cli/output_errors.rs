//! How each samtools command words an output file it cannot open for writing (a missing
//! directory, a read-only or immutable file): htslib's `[E::hts_open_format]` line, then the
//! command's own.

/// The lines samtools `cmd` prints when it cannot create `path` (`reason`: `strerror`'s text).
/// Commands not listed keep mdsam's one line naming the file and the reason.
pub fn cannot_create(cmd: &str, path: &str, reason: &str) -> String {
    let own = match cmd {
        "sort" | "merge" => format!("failed to create \"{path}\": {reason}"),
        "view" => format!("failed to open \"{path}\" for writing: {reason}"),
        "markdup" => format!("error, failed to open \"{path}\" for output: {reason}"),
        "fixmate" | "ampliconclip" => format!("cannot open output file: {reason}"),
        "addreplacerg" => format!("could not create \"{path}\": {reason}"),
        _ => return format!("samtools {cmd}: {path}: could not open for writing: {reason}"),
    };
    format!("[E::hts_open_format] Failed to open file \"{path}\" : {reason}\nsamtools {cmd}: {own}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_commands_get_samtools_lines_and_others_one_line() {
        let sort = cannot_create("sort", "o.bam", "Permission denied");
        assert_eq!(
            sort,
            "[E::hts_open_format] Failed to open file \"o.bam\" : Permission denied\n\
             samtools sort: failed to create \"o.bam\": Permission denied"
        );
        let other = cannot_create("collate", "o.bam", "Permission denied");
        assert_eq!(other, "samtools collate: o.bam: could not open for writing: Permission denied");
    }
}
