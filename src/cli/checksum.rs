//! `checksum`'s command line → [`ChecksumOptions`] (samtools 1.24 `bam_checksum.c` options);
//! the work is [`crate::pipeline::checksum`].

use super::flags::parse_flags;
use super::getopt::LongOpt;
use super::global::{self, Globals, Take};
use super::options::OptionTable;
use crate::error::Error;
use crate::ops::checksum::report::Layout;
use crate::ops::checksum::{RecordHasher, Settings, TagSelection};
use crate::ops::fixmate::sanitize;
use crate::pipeline::checksum::ChecksumOptions;

pub const USAGE: &str = include_str!("usage/checksum.txt");

/// Where samtools prints the part of the usage after the options (its `usage_exit(fp, …)`):
/// to stdout, the rest to stderr, when run without arguments on a terminal.
pub const GLOBAL_PART: &str = "\nGlobal options:\n";

const fn long(name: &'static str, has_arg: bool, key: &'static str) -> LongOpt {
    LongOpt { name, has_arg, key }
}

pub const OPTIONS: OptionTable = OptionTable {
    command: "checksum",
    short: "@:f:F:t:cPCMOb:z:aN:vqo:TmB",
    long: &[
        long("exclude-flags", true, "F"),
        long("require-flags", true, "f"),
        long("flag-mask", true, "b"),
        long("tags", true, "t"),
        long("no-rev-comp", false, "c"),
        long("in-order", false, "O"),
        long("check-pos", false, "P"),
        long("check-cigar", false, "C"),
        long("check-mate", false, "M"),
        long("count", true, "N"),
        long("sanitize", true, "z"),
        long("output", true, "o"),
        long("show-qc", false, "q"),
        long("verbose", false, "v"),
        long("all", false, "a"),
        long("tabs", false, "T"),
        long("merge", false, "m"),
        long("bamseqchksum", false, "B"),
    ],
    // SAM_OPT_GLOBAL_OPTIONS('-', 'I', '-', '-', '.', '@')
    globals: Some(Globals {
        input_fmt: Take::Refused,
        input_fmt_option: Take::Long,
        output_fmt: Take::Refused,
        output_fmt_option: Take::Refused,
        reference: Take::Long,
        threads: Take::Short("@"),
        write_index: Take::Long,
        verbosity: Take::Long,
    }),
    // The usage spells --check-mate "--check_mate" and lists none of these globals.
    globals_first: false,
    unlisted: &["--check-mate", "--reference", "--write-index", "--verbosity"],
};

/// The `-t` list split as samtools' `parse_tags`: two-letter names or `*`; `None` when malformed.
fn parse_tags(list: &str) -> Option<Vec<Option<[u8; 2]>>> {
    let mut entries = Vec::new();
    if list.is_empty() {
        return Some(entries);
    }
    for entry in list.split(',') {
        match entry.as_bytes() {
            [a, b] => entries.push(Some([*a, *b])),
            b"*" => entries.push(None),
            // A trailing comma ends samtools' list without an empty entry.
            b"" if entries.len() + 1 == list.split(',').count() && !entries.is_empty() => {}
            _ => return None,
        }
    }
    Some(entries)
}

fn flag(v: &str) -> Result<u16, Error> {
    parse_flags(v).map_err(|_| Error::Message(format!("could not parse flag {v}")))
}

/// The defaults: `-F 0x900 -b 0x0c1 -t BC,FI,QT,RT,TC`, reverse reads complemented.
fn defaults() -> ChecksumOptions {
    let tag_str = "BC,FI,QT,RT,TC".to_string();
    let hasher = RecordHasher {
        flag_mask: 0xc1,
        rev_comp: true,
        check_pos: false,
        check_cigar: false,
        check_mate: false,
        tags: TagSelection::default(),
    };
    let layout = Layout {
        tabs: false,
        verbose: false,
        show_pass: false,
        show_fail: false,
        check_pos: false,
        check_cigar: false,
        check_mate: false,
        bamseqchksum: false,
        tag_str,
        flag_mask: 0xc1,
    };
    ChecksumOptions {
        inputs: Vec::new(),
        output: "-".into(),
        excl_flags: 0x900,
        req_flags: 0,
        sanitize: 0,
        max_reads: 0,
        tags: None,
        hasher,
        settings: Settings { in_order: 0, show_pass: false, show_fail: false },
        layout,
        merge: false,
        threads: 1,
        reference: None,
    }
}

/// `-a`: everything in the file, in order.
fn check_all(o: &mut ChecksumOptions) {
    (o.req_flags, o.excl_flags, o.hasher.flag_mask, o.hasher.rev_comp) = (0, 0, -1, false);
    o.settings.in_order = 1;
    (o.hasher.check_pos, o.hasher.check_cigar, o.hasher.check_mate) = (true, true, true);
    o.sanitize = sanitize::FIX_ALL | sanitize::FIX_CIGARX;
    o.layout.tag_str = "*,cF,MD,NM".into();
}

/// Applies one option.
fn apply(o: &mut ChecksumOptions, key: &str, v: &str) -> Result<(), Error> {
    match key {
        "O" => o.settings.in_order += 1,
        "F" => o.excl_flags = flag(v)?,
        "f" => o.req_flags = flag(v)?,
        "b" => o.hasher.flag_mask = i32::from(flag(v)?),
        "P" => o.hasher.check_pos = true,
        "C" => o.hasher.check_cigar = true,
        "M" => o.hasher.check_mate = true,
        "t" => o.layout.tag_str = v.to_string(),
        "c" => o.hasher.rev_comp = false,
        // strtoll(optarg, NULL, 0)
        "N" => o.max_reads = super::c_number::strtol(v, 0).value,
        "B" => (o.layout.bamseqchksum, o.settings.show_pass) = (true, true),
        "v" => o.layout.verbose = true,
        "q" => (o.settings.show_pass, o.settings.show_fail) = (true, true),
        "T" => o.layout.tabs = true,
        "m" => o.merge = true,
        "z" => {
            o.sanitize = sanitize::parse_options(v)
                .map_err(|e| Error::Bare(format!("samtools sanitize: {e}\n")))?
        }
        "a" => check_all(o),
        "o" => o.output = v.to_string(),
        "@" => o.threads = global::parse_threads(v)?.total(),
        "reference" => o.reference = Some(v.to_string()),
        _ => {}
    }
    Ok(())
}

pub fn parse(args: &[String]) -> Result<ChecksumOptions, Error> {
    let (opts, inputs) = OPTIONS.parse_or_usage(args)?;
    let mut o = defaults();
    for opt in &opts {
        apply(&mut o, &opt.key, opt.value.as_deref().unwrap_or(""))?;
    }
    o.inputs = if inputs.is_empty() && !o.merge { vec!["-".into()] } else { inputs };
    o.tags = parse_tags(&o.layout.tag_str);
    // The layout shows what the hashes cover.
    (o.layout.check_pos, o.layout.check_cigar, o.layout.check_mate) =
        (o.hasher.check_pos, o.hasher.check_cigar, o.hasher.check_mate);
    (o.layout.show_pass, o.layout.show_fail) = (o.settings.show_pass, o.settings.show_fail);
    o.layout.flag_mask = o.hasher.flag_mask;
    Ok(o)
}

/// Runs `checksum` (the entry in [`super::catalog::COMMANDS`]).
pub fn run(_inv: &super::Invocation, args: &[String]) -> Result<(), Error> {
    use std::io::IsTerminal;
    if args.is_empty() && std::io::stdin().is_terminal() {
        // samtools prints the global options part to stdout, the rest to stderr.
        let (head, globals) = USAGE.split_at(USAGE.find(GLOBAL_PART).unwrap_or(USAGE.len()));
        eprint!("{head}");
        print!("{globals}");
        return Ok(());
    }
    parse(args).and_then(crate::pipeline::checksum::run)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_line(line: &str) -> Result<ChecksumOptions, Error> {
        parse(&line.split_whitespace().map(String::from).collect::<Vec<_>>())
    }

    #[test]
    fn tag_lists_split_as_samtools() {
        assert_eq!(parse_tags("BC,QT"), Some(vec![Some(*b"BC"), Some(*b"QT")]));
        assert_eq!(parse_tags("*,MD"), Some(vec![None, Some(*b"MD")]));
        assert_eq!(parse_tags("BC,"), Some(vec![Some(*b"BC")]));
        assert_eq!(parse_tags("BCX"), None);
        assert_eq!(parse_tags(""), Some(vec![]));
    }

    #[test]
    fn all_sets_everything_and_later_options_still_apply() {
        let o = parse_line("-a -b 0xc1 x.bam").unwrap();
        assert_eq!((o.hasher.flag_mask, o.layout.flag_mask, o.excl_flags), (0xc1, 0xc1, 0));
        assert!(o.layout.check_pos && o.hasher.check_mate && o.settings.in_order == 1);
        assert_eq!(o.layout.tag_str, "*,cF,MD,NM");
        let o = parse_line("-qv").unwrap();
        assert_eq!(o.inputs, ["-"]);
        assert!(o.layout.show_fail && o.layout.verbose);
        assert!(matches!(parse_line("-F nonsense x"), Err(Error::Message(_))));
    }
}
