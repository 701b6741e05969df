//! `view`'s command line → [`ViewOptions`] (samtools 1.24 `sam_view.c` options and defaults).

use std::collections::HashSet;

use super::flags::{parse_c_int, parse_flags};
use super::getopt::{self, LongOpt};
use super::outfmt::OutputChoice;
use super::{Invocation, global};
use crate::error::Error;
use crate::io::format::OutputFormat;
use crate::ops::view::edit::{RecordEdit, TagEdit};
use crate::ops::view::expr::Expr;
use crate::ops::view::filter::{Filter, NameSet, TagFilter};
use crate::pipeline::view::{HeaderMode, ViewOptions};
use crate::record::header::Reference;

pub const USAGE: &str = include_str!("usage/view.txt");

const SHORT: &str = "SbBcCt:h1Ho:O:q:f:F:G:ul:r:T:R:N:d:D:L:s:@:m:x:U:MXe:pPz:n?";

const LONG: &[LongOpt] = &[
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
    // sam_global_args
    LongOpt { name: "input-fmt", has_arg: true, key: "input-fmt" },
    LongOpt { name: "input-fmt-option", has_arg: true, key: "input-fmt-option" },
    LongOpt { name: "output-fmt", has_arg: true, key: "O" },
    LongOpt { name: "output-fmt-option", has_arg: true, key: "output-fmt-option" },
    LongOpt { name: "reference", has_arg: true, key: "T" },
    LongOpt { name: "threads", has_arg: true, key: "@" },
    LongOpt { name: "write-index", has_arg: false, key: "write-index" },
    LongOpt { name: "verbosity", has_arg: true, key: "verbosity" },
    LongOpt { name: "no-PG", has_arg: false, key: "no-PG" },
];

fn read_list(path: &str) -> Result<Vec<Vec<u8>>, Error> {
    let text =
        std::fs::read(path).map_err(|e| Error::file(path, format!("could not read: {e}")))?;
    Ok(text
        .split(|b| b.is_ascii_whitespace())
        .filter(|t| !t.is_empty())
        .map(<[u8]>::to_vec)
        .collect())
}

/// `[^]FILE` name lists for `-R` and `-N`.
fn read_name_set(arg: &str) -> Result<NameSet, Error> {
    let (negate, path) = match arg.strip_prefix('^') {
        Some(p) => (true, p),
        None => (false, arg),
    };
    Ok(NameSet { names: read_list(path)?.into_iter().collect(), negate })
}

/// A `.fai`-like list: reference name and length per line.
pub fn read_fai(path: &str) -> Result<Vec<Reference>, Error> {
    let text =
        std::fs::read(path).map_err(|e| Error::file(path, format!("could not read: {e}")))?;
    let mut refs = Vec::new();
    for line in text.split(|&b| b == b'\n').filter(|l| !l.is_empty()) {
        let mut f = line.split(|&b| b == b'\t');
        let name = f.next().unwrap_or_default();
        let len = f
            .next()
            .and_then(|l| std::str::from_utf8(l).ok()?.trim().parse::<u64>().ok())
            .ok_or_else(|| Error::file(path, "bad line in reference list"))?;
        refs.push(Reference { name: name.to_vec(), len });
    }
    Ok(refs)
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

/// BED intervals by reference name (resolved to ids once the header is read).
fn parse_bed(path: &str) -> Result<Vec<(Vec<u8>, i64, i64)>, Error> {
    let raw = std::fs::read(path).map_err(|e| Error::file(path, format!("could not read: {e}")))?;
    let text = if raw.starts_with(&[0x1f, 0x8b]) {
        let mut out = Vec::new();
        std::io::Read::read_to_end(&mut flate2::read::MultiGzDecoder::new(&raw[..]), &mut out)
            .map_err(|e| Error::file(path, e))?;
        out
    } else {
        raw
    };
    let mut t = Vec::new();
    for (n, line) in text.split(|&b| b == b'\n').enumerate() {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        if line.is_empty()
            || line.starts_with(b"#")
            || line.starts_with(b"track")
            || line.starts_with(b"browser")
        {
            continue;
        }
        let f: Vec<&[u8]> =
            line.split(|b| *b == b'\t' || *b == b' ').filter(|x| !x.is_empty()).collect();
        let num = |s: &[u8]| std::str::from_utf8(s).ok().and_then(|s| s.parse::<i64>().ok());
        let bad = || Error::file(path, format!("could not parse BED line {}", n + 1));
        let (beg, end) = match f.len() {
            0 => continue,
            1 => return Err(bad()),
            2 => {
                let p = num(f[1]).ok_or_else(bad)?;
                (p - 1, p)
            }
            _ => (num(f[1]).ok_or_else(bad)?, num(f[2]).ok_or_else(bad)?),
        };
        if end < beg {
            return Err(bad());
        }
        t.push((f[0].to_vec(), beg, end));
    }
    Ok(t)
}

/// Parses `view`'s arguments. `header_for` opens the input's header when BED targets need it.
pub fn parse(inv: &Invocation, args: &[String]) -> Result<ViewOptions, Error> {
    let (opts, positionals) =
        getopt::parse(args, SHORT, LONG).map_err(|e| Error::Usage(e.to_string()))?;
    let mut filter = Filter::default();
    let mut edit = RecordEdit::default();
    let mut out_bam = false;
    // -O and --output-fmt-option as every command parses them; -1 and -u set the level too.
    let mut out_fmt = OutputChoice::default();
    let mut header = HeaderMode::Without;
    let mut count = false;
    let mut output = "-".to_string();
    let mut unselected = None;
    let mut unmap = false;
    let mut fai: Option<String> = None;
    let mut reference: Option<String> = None;
    let mut read_groups: Option<NameSet> = None;
    let mut targets_path: Option<String> = None;
    let mut library: Option<String> = None;
    let mut threads = 0usize;
    let mut no_pg = false;
    let mut save_counts = None;
    let mut fraction: Option<f64> = None;
    let mut seed: Option<Option<u32>> = None;
    let mut keep_tags: Vec<[u8; 2]> = Vec::new();
    let mut remove_tags: Vec<[u8; 2]> = Vec::new();
    let mut keep_only = false;
    let mut customized_index = false;
    let mut fetch_pairs = false;
    let mut region_file = None;
    let mut multi_region = false;
    let mut remove_back = false;
    let mut write_index = false;
    let flag = |v: &str| parse_flags(v).map_err(Error::Message);
    for o in &opts {
        let v = o.value.as_deref().unwrap_or("");
        match o.key.as_str() {
            "b" => out_bam = true,
            "C" => return Err(Error::Message("CRAM is not supported by mdsam".into())),
            "1" => out_fmt.level = Some(1),
            "u" => out_fmt.level = Some(0),
            "h" => header = HeaderMode::With,
            "H" => header = HeaderMode::Only,
            "no-header" => header = HeaderMode::Without,
            "c" => count = true,
            "o" => output = v.to_string(),
            "U" => unselected = Some(v.to_string()),
            "p" => unmap = true,
            "P" => fetch_pairs = true,
            "t" => fai = Some(v.to_string()),
            "T" => reference = Some(v.to_string()),
            "M" => multi_region = true,
            "region-file" => {
                region_file = Some(v.to_string());
                multi_region = true;
            }
            "X" => customized_index = true,
            "L" => targets_path = Some(v.to_string()),
            "N" => add_to_name_set(&mut filter.read_names, read_name_set(v)?, "read-name")?,
            "r" => {
                let one = NameSet { names: HashSet::from([v.as_bytes().to_vec()]), negate: false };
                add_to_name_set(&mut read_groups, one, "read-group")?;
            }
            "R" => add_to_name_set(&mut read_groups, read_name_set(v)?, "read-group")?,
            "n" => filter.exclude_no_read_group = true,
            "d" => {
                let b = v.as_bytes();
                if b.len() > 2 && b[2] != b':' || b.len() < 2 {
                    return Err(Error::Message(format!("Invalid \"tag:value\" option: \"{v}\"")));
                }
                let values = (b.len() > 3).then(|| vec![b[3..].to_vec()]);
                set_tag_filter(&mut filter.tag, &b[..2], values)?;
            }
            "D" => {
                let (tag, path) =
                    v.split_once(':').filter(|(t, _)| t.len() == 2).ok_or_else(|| {
                        Error::Message(format!("Invalid \"tag:file\" option: \"{v}\""))
                    })?;
                let text = std::fs::read(path)
                    .map_err(|e| Error::file(path, format!("could not read: {e}")))?;
                let values: Vec<Vec<u8>> = text
                    .split(|b| b.is_ascii_whitespace() || *b == b';')
                    .filter(|t| !t.is_empty())
                    .map(<[u8]>::to_vec)
                    .collect();
                set_tag_filter(&mut filter.tag, tag.as_bytes(), Some(values))?;
            }
            "q" => filter.min_mapq = parse_c_int(v).unwrap_or(0).clamp(0, 255) as u8,
            "l" => library = Some(v.to_string()),
            "m" => filter.min_qlen = parse_c_int(v).unwrap_or(0),
            "e" => filter.expr = Some(Expr::parse(v).map_err(Error::Message)?),
            "f" => filter.require_flags = flag(v)?,
            "F" => filter.exclude_flags = flag(v)?,
            "G" => filter.reject_all_flags = flag(v)?,
            "rf" => filter.include_any_flags = flag(v)?,
            "add-flags" => edit.add_flags = flag(v)?,
            "remove-flags" => edit.remove_flags = flag(v)?,
            "x" => match v.strip_prefix('^') {
                Some(list) => {
                    keep_only = true;
                    keep_tags.extend(parse_tags(list)?);
                }
                None => remove_tags.extend(parse_tags(v)?),
            },
            "keep-tag" => {
                keep_only = true;
                keep_tags.extend(parse_tags(v)?);
            }
            "B" => remove_back = true,
            "s" => {
                let (s, f) = v
                    .split_once('.')
                    .ok_or_else(|| Error::Message("Incorrect sampling argument".into()))?;
                seed =
                    Some(if s == "auto" { None } else { Some(parse_c_int(s).unwrap_or(0) as u32) });
                fraction = Some(
                    format!("0.{f}")
                        .parse::<f64>()
                        .map_err(|_| Error::Message("Incorrect sampling argument".into()))?,
                );
            }
            "subsample" => {
                let f: f64 = v
                    .parse()
                    .map_err(|_| Error::Message(format!("Invalid subsampling fraction \"{v}\"")))?;
                if !(0.0..=1.0).contains(&f) {
                    return Err(Error::Message("Incorrect sampling argument".into()));
                }
                fraction = Some(f);
            }
            "subsample-seed" => {
                seed = Some(if v == "auto" {
                    None
                } else {
                    Some(
                        parse_c_int(v)
                            .ok_or_else(|| Error::Message(format!("Invalid seed \"{v}\"")))?
                            as u32,
                    )
                });
            }
            "save-counts" => save_counts = Some(v.to_string()),
            "z" | "S" | "input-fmt" | "input-fmt-option" | "verbosity" => {}
            "write-index" => write_index = true,
            "O" => out_fmt.set_format(v)?,
            "output-fmt-option" => out_fmt.set_option(v),
            "@" => threads = global::parse_threads(v)?,
            "no-PG" => no_pg = true,
            "?" => return Err(Error::Help),
            other => return Err(Error::Usage(format!("unhandled option {other}"))),
        }
    }
    if unmap && unselected.is_some() {
        return Err(Error::Message(
            "Options --unoutput and --unmap are mutually exclusive.".into(),
        ));
    }
    if fetch_pairs && count {
        return Err(Error::Message("The options -P and -c cannot be combined".into()));
    }
    if let Some(f) = region_file {
        targets_path = Some(f);
    }
    let mut positionals = positionals.into_iter();
    let input = positionals.next().unwrap_or_else(|| "-".to_string());
    let index_path = if customized_index { positionals.next() } else { None };
    let regions: Vec<String> = positionals.collect();

    let index = if write_index {
        let (out, idx, bai) = crate::pipeline::sink::index_request(&output);
        if out == "-" {
            return Err(Error::Message("failed to create \"-\": Invalid argument".into()));
        }
        output = out;
        Some((idx, bai))
    } else {
        None
    };
    let ext = OutputFormat::from_path(&output);
    let format = out_fmt.explicit.unwrap_or(if out_bam {
        OutputFormat::Bam
    } else if let Some(e) = ext {
        e
    } else if out_fmt.level.is_some() {
        OutputFormat::Bam
    } else {
        OutputFormat::Sam
    });
    if keep_only {
        edit.tags = TagEdit { tags: keep_tags, keep_only: true };
    } else if !remove_tags.is_empty() {
        edit.tags = TagEdit { tags: remove_tags, keep_only: false };
    }
    let fai = fai.or_else(|| reference.map(|r| format!("{r}.fai")));
    let fai_refs = fai.as_deref().map(read_fai).transpose()?;
    let subsample = fraction.map(|f| (f, seed.unwrap_or(None)));
    let bed = targets_path.as_deref().map(parse_bed).transpose()?;
    filter.read_groups = read_groups.clone();
    Ok(ViewOptions {
        input,
        regions,
        output,
        format,
        level: out_fmt.level.unwrap_or(-1),
        header,
        count,
        unselected,
        unmap_rejected: unmap,
        filter,
        edit,
        threads: threads + 1,
        fai_refs,
        keep_read_groups: read_groups,
        pg: (!no_pg).then(|| inv.pg_fields(args)),
        save_counts,
        subsample,
        index_path,
        bed,
        multi_region,
        fetch_pairs,
        remove_back,
        library: library.map(String::into_bytes),
        index,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_args(args: &[&str]) -> Result<ViewOptions, Error> {
        let inv = Invocation { argv0: "samtools".into(), command: "view".into() };
        parse(&inv, &args.iter().map(|a| a.to_string()).collect::<Vec<_>>())
    }

    fn list_file(name: &str, text: &str) -> String {
        let path =
            std::env::temp_dir().join(format!("mdsam-view-cli-{}-{name}", std::process::id()));
        std::fs::write(&path, text).unwrap();
        path.to_str().unwrap().to_string()
    }

    /// samtools 1.24: `-r`/`-R`/`-N` add to one set per family; include and `^` exclude lists
    /// do not mix.
    #[test]
    fn name_lists_accumulate_and_do_not_mix() {
        let groups = list_file("rg", "g2\ng3\n");
        let opts = parse_args(&["-r", "g1", "-R", &groups, "x.bam"]).unwrap();
        let set = opts.keep_read_groups.unwrap();
        assert_eq!((set.names.len(), set.negate), (3, false));

        let excluded = format!("^{groups}");
        for args in [
            &["-r", "g1", "-R", &excluded][..],
            &["-R", &excluded, "-r", "g1"],
            &["-N", &groups, "-N", &excluded],
        ] {
            let Err(err) = parse_args(&[args, &["x.bam"]].concat()) else {
                panic!("mixing must fail")
            };
            assert!(err.to_string().starts_with("cannot mix include and exclude"), "{err}");
        }
        let names = list_file("names", "a\nb\n");
        let opts = parse_args(&["-N", &names, "-N", &groups, "x.bam"]).unwrap();
        assert_eq!(opts.filter.read_names.unwrap().names.len(), 4);
    }
}
