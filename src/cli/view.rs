//! `view`'s command line → a [`ViewRequest`] (samtools 1.24 `sam_view.c` options and defaults):
//! getopt fills a plain [`ViewArgs`], whose checks then make the [`ViewOptions`]. The files the
//! options name are read by [`crate::pipeline::view::request::resolve`], not here.

use std::collections::HashSet;

use super::Invocation;
use super::c_number::{self, parse_int_value, parse_long_value};
use super::common::CommonOptions;
use super::flags::parse_flags;
use super::getopt::{GetoptError, LongOpt};
use super::global::{Globals, Take};
use super::options::OptionTable;
use super::outfmt::OutputChoice;
use crate::error::Error;
use crate::io::format::OutputFormat;
use crate::ops::view::edit::{RecordEdit, TagEdit};
use crate::ops::view::expr::Expr;
use crate::ops::view::filter::{Filter, NameSet, TagFilter};
use crate::pipeline::view::request::{ListFile, ViewRequest};
use crate::pipeline::view::{HeaderMode, ViewOptions};

pub const USAGE: &str = include_str!("usage/view.txt");

pub const OPTIONS: OptionTable = OptionTable {
    command: "view",
    short: "SbBcCt:h1Ho:O:q:f:F:G:ul:r:T:R:N:d:D:L:s:@:m:x:U:MXe:pPz:n?",
    long: &[
        LongOpt { name: "add-flags", has_arg: true, key: "add-flags" },
        LongOpt { name: "bam", has_arg: false, key: "b" },
        LongOpt { name: "count", has_arg: false, key: "c" },
        LongOpt { name: "cram", has_arg: false, key: "C" },
        LongOpt { name: "customized-index", has_arg: false, key: "X" },
        LongOpt { name: "excl-flags", has_arg: true, key: "F" },
        LongOpt { name: "exclude-flags", has_arg: true, key: "F" },
        LongOpt { name: "exclude-no-read-group", has_arg: false, key: "n" },
        LongOpt { name: "expr", has_arg: true, key: "e" },
        LongOpt { name: "expression", has_arg: true, key: "e" },
        LongOpt { name: "fai-reference", has_arg: true, key: "t" },
        LongOpt { name: "fast", has_arg: false, key: "1" },
        LongOpt { name: "fetch-pairs", has_arg: false, key: "P" },
        LongOpt { name: "header-only", has_arg: false, key: "H" },
        LongOpt { name: "help", has_arg: false, key: "?" },
        LongOpt { name: "incl-flags", has_arg: true, key: "rf" },
        LongOpt { name: "include-flags", has_arg: true, key: "rf" },
        LongOpt { name: "rf", has_arg: true, key: "rf" },
        LongOpt { name: "keep-tag", has_arg: true, key: "keep-tag" },
        LongOpt { name: "library", has_arg: true, key: "l" },
        LongOpt { name: "min-mapq", has_arg: true, key: "q" },
        LongOpt { name: "min-MQ", has_arg: true, key: "q" },
        LongOpt { name: "min-mq", has_arg: true, key: "q" },
        LongOpt { name: "min-qlen", has_arg: true, key: "m" },
        LongOpt { name: "no-header", has_arg: false, key: "no-header" },
        LongOpt { name: "output", has_arg: true, key: "o" },
        LongOpt { name: "output-unselected", has_arg: true, key: "U" },
        LongOpt { name: "QNAME-file", has_arg: true, key: "N" },
        LongOpt { name: "qname-file", has_arg: true, key: "N" },
        LongOpt { name: "read-group", has_arg: true, key: "r" },
        LongOpt { name: "read-group-file", has_arg: true, key: "R" },
        LongOpt { name: "readgroup", has_arg: true, key: "r" },
        LongOpt { name: "readgroup-file", has_arg: true, key: "R" },
        LongOpt { name: "region-file", has_arg: true, key: "region-file" },
        LongOpt { name: "regions-file", has_arg: true, key: "region-file" },
        LongOpt { name: "remove-B", has_arg: false, key: "B" },
        LongOpt { name: "remove-flags", has_arg: true, key: "remove-flags" },
        LongOpt { name: "remove-tag", has_arg: true, key: "x" },
        LongOpt { name: "require-flags", has_arg: true, key: "f" },
        LongOpt { name: "sanitize", has_arg: true, key: "z" },
        LongOpt { name: "save-counts", has_arg: true, key: "save-counts" },
        LongOpt { name: "subsample", has_arg: true, key: "subsample" },
        LongOpt { name: "subsample-seed", has_arg: true, key: "subsample-seed" },
        LongOpt { name: "tag", has_arg: true, key: "d" },
        LongOpt { name: "tag-file", has_arg: true, key: "D" },
        LongOpt { name: "target-file", has_arg: true, key: "L" },
        LongOpt { name: "targets-file", has_arg: true, key: "L" },
        LongOpt { name: "uncompressed", has_arg: false, key: "u" },
        LongOpt { name: "unmap", has_arg: false, key: "p" },
        LongOpt { name: "unoutput", has_arg: true, key: "U" },
        LongOpt { name: "use-index", has_arg: false, key: "M" },
        LongOpt { name: "with-header", has_arg: false, key: "h" },
        LongOpt { name: "no-PG", has_arg: false, key: "no-PG" },
    ],
    // SAM_OPT_GLOBAL_OPTIONS('-', 0, 'O', 0, 'T', '@')
    globals: Some(Globals { reference: Take::Short("T"), ..Globals::O_AND_THREADS }),
    // samtools' usage spells -n's long name "--exclude-no-read_group", which it does not accept.
    globals_first: false,
    unlisted: &[
        "-?",
        "--exclude-no-read-group",
        "--expression",
        "--min-mapq",
        "--min-mq",
        "--QNAME-file",
        "--readgroup",
        "--readgroup-file",
    ],
};

/// `[^]FILE` of `-R` and `-N`: whether the listed names are excluded, and the file.
fn name_list_file(arg: &str) -> (bool, &str) {
    match arg.strip_prefix('^') {
        Some(path) => (true, path),
        None => (false, arg),
    }
}

/// Adds `more` to the `-r`/`-R` or `-N` set. Like samtools, each option family keeps one set, so
/// repeated options add to it, and an include list cannot be mixed with an exclude (`^`) list.
fn add_to_name_set(set: &mut Option<NameSet>, more: NameSet, what: &str) -> Result<(), Error> {
    match set {
        None => *set = Some(more),
        Some(current) if current.negate == more.negate => current.names.extend(more.names),
        Some(_) => {
            return Err(Error::Message(format!(
                "cannot mix include and exclude {what} files in the same command line"
            )));
        }
    }
    Ok(())
}

fn parse_tags(list: &str) -> Result<Vec<[u8; 2]>, Error> {
    list.split(',')
        .map(|t| match t.as_bytes() {
            [a, b] => Ok([*a, *b]),
            _ => Err(Error::Usage(
                "main_samview: Error parsing option, auxiliary tags should be exactly two characters long.".into(),
            )),
        })
        .collect()
}

fn set_tag_filter(
    current: &mut Option<TagFilter>,
    tag: &[u8],
    values: Option<Vec<Vec<u8>>>,
) -> Result<(), Error> {
    let tag: [u8; 2] =
        tag.try_into().map_err(|_| Error::Message("Invalid \"tag:value\" option".into()))?;
    let f = current.get_or_insert_with(|| TagFilter { tag, values: None });
    if f.tag != tag {
        return Err(Error::Message(format!(
            "Different tag \"{}\" was specified before: \"{}\"",
            String::from_utf8_lossy(&tag),
            String::from_utf8_lossy(&f.tag)
        )));
    }
    if let Some(v) = values {
        f.values.get_or_insert_with(HashSet::new).extend(v);
    }
    Ok(())
}

/// view's usage after a mistake: the `--help` text without its notes.
pub fn error_usage() -> &'static str {
    USAGE.split_once("Notes:\n").map_or(USAGE, |(head, _)| head)
}

/// view's `case '?'` with getopt's own messages off: a short option (a missing argument too) is
/// "invalid option", a long one "unrecognised option" as typed; a refused option is named only
/// when its value was attached (`--input-fmt=bam`; `--input-fmt bam` gets the usage alone).
fn view_usage_error(e: GetoptError) -> Error {
    let line = match e {
        GetoptError::Refused { value_attached: false, .. } => return Error::ShowUsage(None),
        GetoptError::Unknown(c) | GetoptError::MissingArgument(c) if c.chars().count() == 1 => {
            format!("invalid option -- '{c}'")
        }
        GetoptError::MissingArgument(name) => {
            let long = OPTIONS.long_options();
            match long.iter().find(|l| l.name == name).map(|l| l.key) {
                Some(key) if key.chars().count() == 1 => format!("invalid option -- '{key}'"),
                _ => format!("unrecognised option '--{name}'"),
            }
        }
        GetoptError::ArgumentNotAllowed(name) => format!("unrecognised option '--{name}'"),
        GetoptError::Unknown(option)
        | GetoptError::Ambiguous { option, .. }
        | GetoptError::Refused { option, .. } => format!("unrecognised option '{option}'"),
    };
    Error::Usage(line)
}

/// `view`'s options as getopt leaves them: what each option said, before the checks across
/// options that make the [`ViewOptions`].
#[derive(Default)]
struct ViewArgs {
    filter: Filter,
    edit: RecordEdit,
    out_bam: bool,
    /// `-C`: CRAM (the later of `-b` and `-C` wins, as samtools' `out_format`).
    out_cram: bool,
    /// -O and --output-fmt-option as every command parses them; -1 and -u set the level too.
    out_fmt: OutputChoice,
    header: HeaderMode,
    count: bool,
    output: String,
    unselected: Option<String>,
    unmap: bool,
    fai: Option<String>,
    reference: Option<String>,
    read_groups: Option<NameSet>,
    targets_path: Option<String>,
    library: Option<String>,
    /// -@, --no-PG, --write-index and the ignored globals.
    common: CommonOptions,
    save_counts: Option<String>,
    fraction: Option<f64>,
    seed: Option<Option<u32>>,
    keep_tags: Vec<[u8; 2]>,
    remove_tags: Vec<[u8; 2]>,
    keep_only: bool,
    customized_index: bool,
    fetch_pairs: bool,
    region_file: Option<String>,
    multi_region: bool,
    remove_back: bool,
    /// The `-N`, `-R` and `-D` files so far, in command-line order.
    lists: Vec<ListFile>,
}

impl ViewArgs {
    /// Takes every option in order; returns the positional arguments.
    fn take_all(&mut self, args: &[String]) -> Result<Vec<String>, Error> {
        let (opts, positionals) = OPTIONS.parse(args).map_err(view_usage_error)?;
        for o in &opts {
            if !self.common.take(&o.key, o.value.as_deref())? {
                self.take(o.key.as_str(), o.value.as_deref().unwrap_or(""))?;
            }
        }
        Ok(positionals)
    }

    /// Takes one option. A file option records its file before any check that can fail, as
    /// samtools has read the file by then.
    fn take(&mut self, key: &str, v: &str) -> Result<(), Error> {
        let flag = |v: &str| parse_flags(v).map_err(Error::Message);
        match key {
            "b" => {
                self.out_bam = true;
                self.out_cram = false;
            }
            "C" => {
                self.out_cram = true;
                self.out_bam = false;
            }
            "1" => self.out_fmt.level = Some(1),
            "u" => self.out_fmt.level = Some(0),
            "h" => self.header = HeaderMode::With,
            "H" => self.header = HeaderMode::Only,
            "no-header" => self.header = HeaderMode::Without,
            "c" => self.count = true,
            "o" => self.output = v.to_string(),
            "U" => self.unselected = Some(v.to_string()),
            "p" => self.unmap = true,
            "P" => self.fetch_pairs = true,
            "t" => {
                // htslib also takes the FASTA beside a `.fai` as a CRAM's reference.
                if self.reference.is_none() {
                    let fasta = v.strip_suffix(".fai").unwrap_or(v);
                    self.common.reference = Some(fasta.to_string());
                }
                self.fai = Some(v.to_string());
            }
            "T" => {
                self.common.reference = Some(v.to_string());
                self.reference = Some(v.to_string());
            }
            "M" => self.multi_region = true,
            "region-file" => {
                self.region_file = Some(v.to_string());
                self.multi_region = true;
            }
            "X" => self.customized_index = true,
            "L" => self.targets_path = Some(v.to_string()),
            "N" => {
                let (negate, path) = name_list_file(v);
                self.lists.push(ListFile::ReadNames(path.to_string()));
                let listed = NameSet { names: HashSet::new(), negate };
                add_to_name_set(&mut self.filter.read_names, listed, "read-name")?;
            }
            "r" => {
                let one = NameSet { names: HashSet::from([v.as_bytes().to_vec()]), negate: false };
                add_to_name_set(&mut self.read_groups, one, "read-group")?;
            }
            "R" => {
                let (negate, path) = name_list_file(v);
                self.lists.push(ListFile::ReadGroups(path.to_string()));
                let listed = NameSet { names: HashSet::new(), negate };
                add_to_name_set(&mut self.read_groups, listed, "read-group")?;
            }
            "n" => self.filter.exclude_no_read_group = true,
            "d" => self.take_tag_value(v)?,
            "D" => self.take_tag_file(v)?,
            // parse_int_value
            "q" => match parse_int_value(v) {
                Some(q) => self.filter.min_mapq = q,
                None => return Err(self.quit_at_view_end(format!("Incorrect min_mapQ \"{v}\""))),
            },
            "l" => self.library = Some(v.to_string()),
            // parse_int_value
            "m" => match parse_int_value(v) {
                Some(m) => self.filter.min_qlen = i64::from(m),
                None => return Err(self.quit_at_view_end(format!("Incorrect min_qlen \"{v}\""))),
            },
            "e" => self.filter.expr = Some(Expr::parse(v).map_err(Error::Message)?),
            "f" => self.filter.require_flags = flag(v)?,
            "F" => self.filter.exclude_flags = flag(v)?,
            "G" => self.filter.reject_all_flags = flag(v)?,
            "rf" => self.filter.include_any_flags = flag(v)?,
            "add-flags" => self.edit.add_flags = flag(v)?,
            "remove-flags" => self.edit.remove_flags = flag(v)?,
            "x" => match v.strip_prefix('^') {
                Some(list) => {
                    self.keep_only = true;
                    self.keep_tags.extend(parse_tags(list)?);
                }
                None => self.remove_tags.extend(parse_tags(v)?),
            },
            "keep-tag" => {
                self.keep_only = true;
                self.keep_tags.extend(parse_tags(v)?);
            }
            "B" => self.remove_back = true,
            "s" => self.take_sampling(v)?,
            "subsample" => self.take_subsample_fraction(v)?,
            "subsample-seed" => self.take_subsample_seed(v)?,
            "save-counts" => self.save_counts = Some(v.to_string()),
            "z" | "S" => {}
            "O" => self.out_fmt.set_format(v)?,
            "output-fmt-option" => self.out_fmt.set_option(v),
            "?" => return Err(Error::Help),
            other => return Err(Error::Usage(format!("unhandled option {other}"))),
        }
        Ok(())
    }

    /// `-d TAG[:VALUE]`.
    fn take_tag_value(&mut self, v: &str) -> Result<(), Error> {
        let b = v.as_bytes();
        if b.len() > 2 && b[2] != b':' || b.len() < 2 {
            return Err(Error::Message(format!("Invalid \"tag:value\" option: \"{v}\"")));
        }
        let values = (b.len() > 3).then(|| vec![b[3..].to_vec()]);
        set_tag_filter(&mut self.filter.tag, &b[..2], values)
    }

    /// `-D TAG:FILE`: the values are the file's, read later.
    fn take_tag_file(&mut self, v: &str) -> Result<(), Error> {
        let (tag, path) = v
            .split_once(':')
            .filter(|(t, _)| t.len() == 2)
            .ok_or_else(|| Error::Message(format!("Invalid \"tag:file\" option: \"{v}\"")))?;
        self.lists.push(ListFile::TagValues(path.to_string()));
        set_tag_filter(&mut self.filter.tag, tag.as_bytes(), Some(Vec::new()))
    }

    /// `-s [SEED.]FRACTION` (`SEED` may be `auto`, in any case): `strtol(…, 10)` for the seed,
    /// then `strtod` for the fraction from its point, which must use the rest of the text.
    fn take_sampling(&mut self, v: &str) -> Result<(), Error> {
        let refuse = || Error::Message(format!("Incorrect sampling argument \"{v}\""));
        let auto = v.len() > 4 && v.as_bytes()[4] == b'.' && v[..4].eq_ignore_ascii_case("auto");
        let (seed, rest) = if auto {
            (None, &v[4..])
        } else {
            let seed = c_number::strtol(v, 10);
            (Some(seed.value as u32), &v[seed.used..])
        };
        if !rest.starts_with('.') {
            return Err(refuse());
        }
        let fraction = c_number::strtod(rest);
        if fraction.used != rest.len() {
            return Err(refuse());
        }
        self.seed = Some(seed);
        self.fraction = Some(fraction.value);
        Ok(())
    }

    /// `--subsample FRACTION`: `strtod` over the whole text, within 0..=1.
    fn take_subsample_fraction(&mut self, v: &str) -> Result<(), Error> {
        let fraction = c_number::strtod(v);
        if fraction.used != v.len() || !(0.0..=1.0).contains(&fraction.value) {
            return Err(self.quit_at_view_end(format!("Incorrect sampling argument \"{v}\"")));
        }
        self.fraction = Some(fraction.value);
        Ok(())
    }

    /// `--subsample-seed SEED`: `auto` (any case), else `parse_long_value(…, 0)` kept as 32 bits.
    fn take_subsample_seed(&mut self, v: &str) -> Result<(), Error> {
        if v.eq_ignore_ascii_case("auto") {
            self.seed = Some(None);
            return Ok(());
        }
        match parse_long_value(v, 0) {
            Some(seed) => self.seed = Some(Some(seed as u32)),
            None => return Err(self.quit_at_view_end(format!("Incorrect seed argument \"{v}\""))),
        }
        Ok(())
    }

    /// samtools view's `goto view_end` with its status still 0, after a bad `-q`, `-m`,
    /// `--subsample` or `--subsample-seed`: the message, then the count so far (0) when `-c` came
    /// earlier on the command line, and exit status 0.
    fn quit_at_view_end(&self, message: String) -> Error {
        eprintln!("samtools view: {message}");
        if self.count {
            println!("0");
        }
        Error::Status(0)
    }

    /// The output format: `-O`, else `-b`, else the output's extension, else BAM when a
    /// compression level was given, else SAM.
    fn format(&self) -> OutputFormat {
        self.out_fmt.explicit.unwrap_or(if self.out_cram {
            OutputFormat::Cram
        } else if self.out_bam {
            OutputFormat::Bam
        } else if let Some(e) = OutputFormat::from_path(&self.output) {
            e
        } else if self.out_fmt.level.is_some() {
            OutputFormat::Bam
        } else {
            OutputFormat::Sam
        })
    }

    /// The checks across options, in samtools' order, then the options; with the reference list
    /// and the BED file still to read.
    fn into_options(
        mut self,
        positionals: Vec<String>,
        pg: Option<Vec<(String, String)>>,
    ) -> Result<(ViewOptions, Option<String>, Option<String>), Error> {
        if self.unmap && self.unselected.is_some() {
            return Err(Error::Message(
                "Options --unoutput and --unmap are mutually exclusive.".into(),
            ));
        }
        if self.fetch_pairs && self.count {
            return Err(Error::Message("The options -P and -c cannot be combined".into()));
        }
        if let Some(f) = self.region_file.take() {
            self.targets_path = Some(f);
        }
        let mut positionals = positionals.into_iter();
        let input = positionals.next().unwrap_or_else(|| "-".to_string());
        let index_path = if self.customized_index { positionals.next() } else { None };
        let regions: Vec<String> = positionals.collect();
        let index = if self.common.write_index {
            let (out, idx, bai) = crate::io::format::index_request(&self.output);
            if out == "-" {
                return Err(Error::Message("failed to create \"-\": Invalid argument".into()));
            }
            self.output = out;
            Some((idx, bai))
        } else {
            None
        };
        let format = self.format();
        if self.keep_only {
            self.edit.tags = TagEdit { tags: self.keep_tags, keep_only: true };
        } else if !self.remove_tags.is_empty() {
            self.edit.tags = TagEdit { tags: self.remove_tags, keep_only: false };
        }
        let fai = self.fai.or_else(|| self.reference.map(|r| format!("{r}.fai")));
        self.filter.read_groups = self.read_groups.clone();
        self.out_fmt.use_reference(self.common.reference.as_deref());
        let options = ViewOptions {
            input,
            regions,
            output: self.output,
            spec: self.out_fmt.spec(format, self.out_fmt.level.unwrap_or(-1)),
            header: self.header,
            count: self.count,
            unselected: self.unselected,
            unmap_rejected: self.unmap,
            filter: self.filter,
            edit: self.edit,
            threads: self.common.threads.total(),
            reference: self.common.reference,
            fai_refs: None,
            keep_read_groups: self.read_groups,
            pg,
            save_counts: self.save_counts,
            subsample: self.fraction.map(|f| (f, self.seed.unwrap_or(None))),
            index_path,
            bed: None,
            multi_region: self.multi_region,
            fetch_pairs: self.fetch_pairs,
            remove_back: self.remove_back,
            library: self.library.map(String::into_bytes),
            index,
        };
        Ok((options, fai, self.targets_path))
    }
}

/// Parses `view`'s arguments into a request: the options, or the first error, with the files they
/// name for [`crate::pipeline::view::request::resolve`] to read.
pub fn parse(inv: &Invocation, args: &[String]) -> ViewRequest {
    let mut view = ViewArgs { output: "-".to_string(), ..ViewArgs::default() };
    let taken = view.take_all(args);
    let lists = std::mem::take(&mut view.lists);
    let checked = taken.and_then(|positionals| {
        let pg = view.common.pg(inv, &super::permuted::permuted(&OPTIONS, args));
        view.into_options(positionals, pg)
    });
    match checked {
        Ok((options, fai, bed)) => ViewRequest { lists, options: Ok(options), fai, bed },
        Err(e) => ViewRequest { lists, options: Err(e), fai: None, bed: None },
    }
}

/// Runs `view` (the entry in [`super::catalog::COMMANDS`]).
pub fn run(inv: &super::Invocation, args: &[String]) -> Result<(), Error> {
    crate::pipeline::view::run_request(parse(inv, args))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_args(args: &[&str]) -> ViewRequest {
        let inv = Invocation { argv0: "samtools".into(), command: "view".into() };
        parse(&inv, &args.iter().map(|a| a.to_string()).collect::<Vec<_>>())
    }

    /// samtools 1.24: `-r`/`-R`/`-N` add to one set per family; include and `^` exclude lists
    /// do not mix. The files are only named here, in command-line order.
    #[test]
    fn name_lists_accumulate_and_do_not_mix() {
        let request = parse_args(&["-r", "g1", "-R", "groups", "-N", "^names", "x.bam"]);
        assert_eq!(
            request.lists,
            [ListFile::ReadGroups("groups".into()), ListFile::ReadNames("names".into())]
        );
        let opts = request.options.unwrap();
        let set = opts.keep_read_groups.unwrap();
        assert_eq!((set.names.len(), set.negate), (1, false));
        assert!(opts.filter.read_names.unwrap().negate);

        for args in [
            &["-r", "g1", "-R", "^groups"][..],
            &["-R", "^groups", "-r", "g1"],
            &["-N", "names", "-N", "^names"],
        ] {
            let Err(err) = parse_args(&[args, &["x.bam"]].concat()).options else {
                panic!("mixing must fail")
            };
            assert!(err.to_string().starts_with("cannot mix include and exclude"), "{err}");
        }
    }

    /// A file named before an error is still read first (samtools has read it by then); one
    /// after it is not.
    #[test]
    fn files_before_the_first_error_are_kept() {
        let request = parse_args(&["-D", "XY:values", "-q", "1", "-f", "FOO", "-N", "names", "x"]);
        assert_eq!(request.lists, [ListFile::TagValues("values".into())]);
        assert!(request.options.is_err());
        let request = parse_args(&["-t", "refs.fai", "-L", "t.bed", "-p", "-U", "u.sam", "x"]);
        assert!(request.options.is_err());
        assert_eq!((request.fai, request.bed), (None, None));
        let request = parse_args(&["-T", "ref.fa", "--region-file", "t.bed", "x"]);
        assert_eq!(request.fai.as_deref(), Some("ref.fa.fai"));
        assert_eq!(request.bed.as_deref(), Some("t.bed"));
    }
}
