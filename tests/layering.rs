//! The layers of `src/` hold: data flows bytes → records → ops → records → bytes, and each layer
//! names only the layers below it.
//!
//! - `record` (lowest) names none of `ops`, `io`, `pipeline`, `cli`;
//! - `ops` (operations on records) names none of `io`, `pipeline`, `cli`, and touches no file
//!   (`std::fs`) and starts no thread (`thread`, `spawn`, `scope`), but for [`OPS_ALLOWED`];
//! - `io` (bytes and files ⇄ records) names none of `ops`, `pipeline`, `cli`;
//! - `pipeline` (wires io and ops per command) does not name `cli`, test modules included;
//! - `cli` (arguments → option structs) reads no files and no record formats: from `io` it names
//!   only the output-format choice, and it calls no file reader (`File::open`, `fs::read…`,
//!   `read_to_string`, `BufReader`, `flate2`, …), but for the commented [`CLI_ALLOWED`] entries;
//! - the modules outside the layers (`alloc`, `error`, `profile`, `progress`, `simulate`) name no
//!   layer, but for the commented [`OUTSIDE_ALLOWED`] entries.
//!
//! And the ways around a path check are closed: `$crate::…` in a macro counts as `crate::…`; the
//! crate root declares modules only (no `use`, so no re-export aliases a layer) and no macro is
//! `#[macro_export]`ed to it; no `#[path]` attribute puts a file in another module than its place.
//!
//! The check reads the code only: comments (doc links included) and string literals are blanked
//! first. Paths are followed from `crate::`, `super::` and `self::`, through `use` groups
//! (`use crate::{io::x, ops::y}`) and inline modules (`mod tests { use super::super::… }`), so
//! `super::super::super::io` written in `src/ops/sort/minhash.rs` counts as `crate::io`.
//!
//! And io keeps no option in a process global ([`io_globals`]); thread counts are passed down,
//! not read from the ambient pool ([`thread_counts`]); FASTA is read through `io::fasta` only
//! ([`fasta_access`]).

use std::path::Path;

mod fasta_access;
mod io_globals;
mod thread_counts;

/// One layer's rule: the crate modules files of `layer` must not name.
struct Rule {
    layer: &'static str,
    forbidden: &'static [&'static str],
    text: &'static str,
}

const RULES: &[Rule] = &[
    Rule {
        layer: "record",
        forbidden: &["ops", "io", "pipeline", "cli"],
        text: "record uses none of ops, io, pipeline, cli",
    },
    Rule {
        layer: "ops",
        forbidden: &["io", "pipeline", "cli"],
        text: "ops uses none of io, pipeline, cli",
    },
    Rule {
        layer: "io",
        forbidden: &["ops", "pipeline", "cli"],
        text: "io uses none of ops, pipeline, cli",
    },
    Rule { layer: "pipeline", forbidden: &["cli"], text: "pipeline does not use cli" },
];

const CLI_IO_RULE: &str =
    "cli does no record I/O: from io it names only the output format and spec";
const CLI_READ_RULE: &str = "cli reads no files or formats";

/// Exceptions to the cli rules: (file, path or identifier, why it is not record or format
/// reading). A file of `""` means every file of `src/cli/`.
const CLI_ALLOWED: &[(&str, &str, &str)] = &[
    // Which output format a command line asks for (`-O`, the output's extension): an option
    // value, not I/O.
    ("", "crate::io::format", "the output-format choice is an option value"),
    // `-O`, `--output-fmt-option`: the output spec (format, level, deflate engine, CRAM
    // settings) is built from option values and handed down.
    ("", "crate::io::output_spec", "the output spec is an option value"),
    // `fastq`/`fasta`'s `-T`, `-i`, `--barcode-tag`, … and `import`'s `-T` choose how FASTQ entries
    // are named and tagged: option values for the FASTQ writer and reader.
    ("src/cli/bam2fq.rs", "crate::io::fastq::style", "the FASTQ style is an option value"),
    ("src/cli/import.rs", "crate::io::fastq::style", "the FASTQ style is an option value"),
    // `mdsam man DIR` writes the man pages it generates from the usage texts; it reads nothing.
    ("src/cli/manpage.rs", "crate::io::output::write_file", "writes generated man pages"),
];

/// The layers; every other module of `src/` is outside them.
const LAYERS: &[&str] = &["record", "ops", "io", "pipeline", "cli"];

const OUTSIDE_RULE: &str = "a module outside the layers names no layer";

/// Exceptions to [`OUTSIDE_RULE`]: (file, path, why).
const OUTSIDE_ALLOWED: &[(&str, &str, &str)] = &[
    // `--profile FILE`: the JSON is written as every output file is (renamed into place); the
    // profile is fed by every layer and so sits outside them, writing through io's one call.
    ("src/profile.rs", "crate::io::output::write_file", "writes the profile's JSON atomically"),
];

const OPS_EFFECT_RULE: &str = "ops touches no file and starts no thread";

/// Exceptions to [`OPS_EFFECT_RULE`]: (file, identifier, why).
const OPS_ALLOWED: &[(&str, &str, &str)] = &[
    // The filter expression parser recurses as deep as the text nests: it runs on one thread
    // whose stack is sized for the text, joined at once. A stack, not parallelism.
    ("src/ops/view/expr.rs", "thread", "the expression parser's sized stack"),
    ("src/ops/view/expr.rs", "spawn", "the expression parser's sized stack"),
];

/// Identifiers that touch files or start threads in ops.
const OPS_EFFECTS: &[&str] =
    &["fs", "thread", "spawn", "scope", "spawn_fifo", "in_place_scope", "spawn_broadcast"];

const ROOT_RULE: &str = "the crate root declares modules only: no re-export, no exported macro";
const PATH_RULE: &str = "a module's file is where its name says: no #[path]";

/// Identifiers that read a file or decode a file format wherever they appear.
const READERS: &[&str] = &[
    "read_to_string",
    "read_to_end",
    "read_exact",
    "read_line",
    "BufReader",
    "flate2",
    "GzDecoder",
    "MultiGzDecoder",
    "Mmap",
    "MmapOptions",
];

/// Two-segment paths that open or read a file: `File::open`, `fs::read`, `fs::read_to_string`.
const READER_PATHS: &[[&str; 2]] = &[["File", "open"], ["fs", "read"], ["fs", "read_to_string"]];

/// A rule broken at a place in a file.
#[derive(Debug, PartialEq, Eq)]
struct Crossing {
    file: String,
    line: usize,
    rule: &'static str,
    found: String,
}

impl std::fmt::Display for Crossing {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}: `{}` breaks the rule \"{}\"", self.file, self.line, self.found, self.rule)
    }
}

/// `source` with comments, string and character literals replaced by spaces (newlines kept), so
/// that what is left is code and line numbers still match.
fn blank_comments_and_strings(source: &str) -> String {
    let chars: Vec<char> = source.chars().collect();
    let mut out = String::with_capacity(source.len());
    let blank = |out: &mut String, span: &[char]| {
        out.extend(span.iter().map(|&c| if c == '\n' { '\n' } else { ' ' }));
    };
    let is_ident = |c: char| c.is_alphanumeric() || c == '_';
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        let starts_token = i == 0 || !is_ident(chars[i - 1]);
        if c == '/' && next == Some('/') {
            let end = chars[i..].iter().position(|&c| c == '\n').map_or(chars.len(), |n| i + n);
            blank(&mut out, &chars[i..end]);
            i = end;
        } else if c == '/' && next == Some('*') {
            let (mut depth, mut j) = (0, i);
            while j < chars.len() {
                if chars[j] == '/' && chars.get(j + 1) == Some(&'*') {
                    depth += 1;
                    j += 2;
                } else if chars[j] == '*' && chars.get(j + 1) == Some(&'/') {
                    depth -= 1;
                    j += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    j += 1;
                }
            }
            blank(&mut out, &chars[i..j]);
            i = j;
        } else if let Some(end) = starts_token.then(|| raw_string_end(&chars, i)).flatten() {
            blank(&mut out, &chars[i..end]);
            i = end;
        } else if c == '"' {
            let mut j = i + 1;
            while j < chars.len() && chars[j] != '"' {
                j += if chars[j] == '\\' { 2 } else { 1 };
            }
            let end = (j + 1).min(chars.len());
            blank(&mut out, &chars[i..end]);
            i = end;
        } else if c == '\'' && next == Some('\\') {
            // `'\n'`, `'\''`, `'\u{1F600}'`: the closing quote comes after the escaped character.
            let end = chars
                .get(i + 3..)
                .unwrap_or_default()
                .iter()
                .position(|&c| c == '\'')
                .map_or(chars.len(), |n| i + 4 + n);
            blank(&mut out, &chars[i..end]);
            i = end;
        } else if c == '\'' && chars.get(i + 2) == Some(&'\'') {
            blank(&mut out, &chars[i..i + 3]);
            i += 3;
        } else {
            out.push(c);
            i += 1;
        }
    }
    out
}

/// The end of a raw string literal (`r"…"`, `r#"…"#`, `br"…"`) starting at `at`, if one does.
fn raw_string_end(chars: &[char], at: usize) -> Option<usize> {
    let mut j = at;
    if chars.get(j) == Some(&'b') || chars.get(j) == Some(&'c') {
        j += 1;
    }
    if chars.get(j) != Some(&'r') {
        return None;
    }
    j += 1;
    let hashes = chars[j..].iter().take_while(|&&c| c == '#').count();
    j += hashes;
    if chars.get(j) != Some(&'"') {
        return None;
    }
    let closing: Vec<char> = std::iter::once('"').chain(std::iter::repeat_n('#', hashes)).collect();
    let body = j + 1;
    let end = (body..chars.len()).find(|&k| chars[k..].starts_with(&closing))?;
    Some(end + closing.len())
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Token {
    Ident(String),
    /// `::`
    PathSep,
    Punct(char),
}

/// The tokens of blanked code, each with its line (from 1).
fn tokens(code: &str) -> Vec<(Token, usize)> {
    let chars: Vec<char> = code.chars().collect();
    let mut out = Vec::new();
    let (mut i, mut line) = (0, 1);
    while i < chars.len() {
        let c = chars[i];
        if c == '\n' {
            line += 1;
            i += 1;
        } else if c.is_whitespace() {
            i += 1;
        } else if c.is_alphabetic() || c == '_' {
            let len = chars[i..].iter().take_while(|c| c.is_alphanumeric() || **c == '_').count();
            out.push((Token::Ident(chars[i..i + len].iter().collect()), line));
            i += len;
        } else if c.is_ascii_digit() {
            i += chars[i..].iter().take_while(|c| c.is_alphanumeric() || **c == '_').count();
        } else if c == ':' && chars.get(i + 1) == Some(&':') {
            out.push((Token::PathSep, line));
            i += 2;
        } else {
            out.push((Token::Punct(c), line));
            i += 1;
        }
    }
    out
}

/// The module path of a file under `src/`: `src/ops/sort/minhash.rs` → `[ops, sort, minhash]`,
/// `src/ops/mod.rs` → `[ops]`.
fn module_of(file: &str) -> Vec<String> {
    let rel = file.strip_prefix("src/").unwrap_or(file).trim_end_matches(".rs");
    let mut parts: Vec<String> = rel.split('/').map(str::to_string).collect();
    if matches!(parts.last().map(String::as_str), Some("mod" | "lib" | "main")) {
        parts.pop();
    }
    parts
}

/// A path named in the code: the absolute module path it resolves to, as written, and its line.
struct Named {
    absolute: Vec<String>,
    written: String,
    line: usize,
}

fn ident(tokens: &[(Token, usize)], at: usize) -> Option<&str> {
    match tokens.get(at) {
        Some((Token::Ident(s), _)) => Some(s),
        _ => None,
    }
}

/// Every path that starts at `crate`, `super` or `self`, resolved against the module it is
/// written in (the file's module plus any inline `mod name { … }` around it).
fn named_paths(file: &str, code: &str) -> Vec<Named> {
    let tokens = tokens(code);
    let file_module = module_of(file);
    // One entry per open brace: the inline module it opens, if any.
    let mut braces: Vec<Option<String>> = Vec::new();
    let mut named = Vec::new();
    let mut i = 0;
    while i < tokens.len() {
        match &tokens[i].0 {
            Token::Punct('{') => {
                let opens_module = i >= 2 && ident(&tokens, i - 2) == Some("mod");
                braces.push(opens_module.then(|| ident(&tokens, i - 1).unwrap_or("").to_string()));
            }
            Token::Punct('}') => {
                braces.pop();
            }
            Token::Ident(root) if matches!(root.as_str(), "crate" | "super" | "self") => {
                let after_sep = i > 0 && tokens[i - 1].0 == Token::PathSep;
                // `$crate` in a macro is `crate` wherever the macro expands.
                let after_dollar = i > 0 && tokens[i - 1].0 == Token::Punct('$');
                if !after_sep && (!after_dollar || root == "crate") {
                    let mut module = file_module.clone();
                    module.extend(braces.iter().flatten().cloned());
                    let (paths, end) = path_at(&tokens, i);
                    for (segments, line) in paths {
                        if let Some(absolute) = resolve(&module, &segments) {
                            named.push(Named { absolute, written: segments.join("::"), line });
                        }
                    }
                    i = end;
                    continue;
                }
            }
            _ => {}
        }
        i += 1;
    }
    named
}

/// The path (or paths, for a `use` group) starting at token `at`, with the line of each; and the
/// token after it.
fn path_at(tokens: &[(Token, usize)], at: usize) -> (Vec<(Vec<String>, usize)>, usize) {
    let mut segments = vec![ident(tokens, at).unwrap_or_default().to_string()];
    let mut j = at + 1;
    while j < tokens.len() && tokens[j].0 == Token::PathSep {
        if let Some(next) = ident(tokens, j + 1) {
            segments.push(next.to_string());
            j += 2;
        } else if tokens.get(j + 1).map(|t| &t.0) == Some(&Token::Punct('{')) {
            return group_at(tokens, j + 2, &segments);
        } else {
            break;
        }
    }
    (vec![(segments, tokens[at].1)], j)
}

/// The items of a `use` group whose `{` is just before token `at`, each prefixed by `prefix`;
/// and the token after the closing `}`.
fn group_at(
    tokens: &[(Token, usize)],
    mut at: usize,
    prefix: &[String],
) -> (Vec<(Vec<String>, usize)>, usize) {
    let mut paths = Vec::new();
    while at < tokens.len() {
        match &tokens[at].0 {
            Token::Punct('}') => return (paths, at + 1),
            Token::Ident(first) if first != "self" => {
                let (items, end) = path_at(tokens, at);
                for (segments, line) in items {
                    paths.push(([prefix, &segments[..]].concat(), line));
                }
                at = end;
                // Skip an `as name` and get to the next item.
                while at < tokens.len()
                    && !matches!(tokens[at].0, Token::Punct(',') | Token::Punct('}'))
                {
                    at += 1;
                }
                if tokens.get(at).map(|t| &t.0) == Some(&Token::Punct(',')) {
                    at += 1;
                }
            }
            _ => at += 1,
        }
    }
    (paths, at)
}

/// `segments` (starting at `crate`, `super` or `self`) as an absolute module path, written in
/// `module`; `None` when `super` climbs above the crate.
fn resolve(module: &[String], segments: &[String]) -> Option<Vec<String>> {
    let mut absolute = module.to_vec();
    let mut rest = segments;
    match segments.first().map(String::as_str) {
        Some("crate") => {
            absolute.clear();
            rest = &segments[1..];
        }
        Some("self") => rest = &segments[1..],
        _ => {
            while rest.first().map(String::as_str) == Some("super") {
                absolute.pop()?;
                rest = &rest[1..];
            }
        }
    }
    absolute.extend(rest.iter().filter(|s| *s != "self").cloned());
    Some(absolute)
}

fn starts_with(path: &[String], prefix: &str) -> bool {
    let prefix: Vec<&str> = prefix.trim_start_matches("crate::").split("::").collect();
    path.len() >= prefix.len() && path.iter().zip(&prefix).all(|(a, b)| a == b)
}

/// The layer a file of `src/` belongs to, if any.
fn layer_of(file: &str) -> Option<&str> {
    let rel = file.strip_prefix("src/")?;
    let first = rel.split('/').next()?;
    Some(first.strip_suffix(".rs").unwrap_or(first))
}

fn cli_allows(file: &str, path_or_ident: &str) -> bool {
    CLI_ALLOWED.iter().any(|(f, allowed, _)| {
        (f.is_empty() || *f == file)
            && (allowed == &path_or_ident
                || path_or_ident.starts_with(&format!("{allowed}::"))
                || path_or_ident.strip_prefix("crate::") == Some(allowed))
    })
}

/// Every rule `source`, the text of `file` (a path like `src/io/output.rs`), breaks.
fn crossings(file: &str, source: &str) -> Vec<Crossing> {
    let code = blank_comments_and_strings(source);
    let mut found = Vec::new();
    let Some(layer) = layer_of(file) else { return found };
    let named = named_paths(file, &code);
    found.extend(path_attributes(file, &code));
    found.extend(root_exports(file, &code));
    if !LAYERS.contains(&layer) && layer != "lib" {
        for n in &named {
            let absolute = format!("crate::{}", n.absolute.join("::"));
            let allowed = OUTSIDE_ALLOWED.iter().any(|(f, path, _)| {
                *f == file && (absolute == *path || absolute.starts_with(&format!("{path}::")))
            });
            if LAYERS.iter().any(|m| starts_with(&n.absolute, m)) && !allowed {
                found.push(crossing(file, n.line, OUTSIDE_RULE, &n.written));
            }
        }
    }
    if layer == "ops" {
        found.extend(ops_effects(file, &code));
    }
    if layer == "io" {
        found.extend(io_globals::io_globals(file, &code));
    }
    found.extend(thread_counts::ambient_thread_counts(file, &code));
    found.extend(fasta_access::fasta_readers(file, &code));
    for rule in RULES.iter().filter(|r| r.layer == layer) {
        for n in &named {
            if rule.forbidden.iter().any(|m| starts_with(&n.absolute, m)) {
                found.push(crossing(file, n.line, rule.text, &n.written));
            }
        }
    }
    if layer == "cli" {
        for n in &named {
            let absolute = format!("crate::{}", n.absolute.join("::"));
            if starts_with(&n.absolute, "io") && !cli_allows(file, &absolute) {
                found.push(crossing(file, n.line, CLI_IO_RULE, &n.written));
            }
        }
        found.extend(file_readers(file, &code));
    }
    found.sort_by_key(|c| c.line);
    found
}

fn crossing(file: &str, line: usize, rule: &'static str, found: &str) -> Crossing {
    Crossing { file: file.to_string(), line, rule, found: found.to_string() }
}

/// The file and thread identifiers in ops code (blanked), less the allowed ones.
fn ops_effects(file: &str, code: &str) -> Vec<Crossing> {
    let mut found = Vec::new();
    for (token, line) in tokens(code) {
        let Token::Ident(name) = token else { continue };
        let allowed = OPS_ALLOWED.iter().any(|(f, id, _)| *f == file && *id == name);
        if OPS_EFFECTS.contains(&name.as_str()) && !allowed {
            found.push(crossing(file, line, OPS_EFFECT_RULE, &name));
        }
    }
    found
}

/// `#[path = …]` (or `#![path = …]`) anywhere: the module paths checked here follow the files.
fn path_attributes(file: &str, code: &str) -> Vec<Crossing> {
    let tokens = tokens(code);
    let mut found = Vec::new();
    for (i, (token, line)) in tokens.iter().enumerate() {
        if *token != Token::Punct('#') {
            continue;
        }
        let mut j = i + 1;
        if tokens.get(j).map(|t| &t.0) == Some(&Token::Punct('!')) {
            j += 1;
        }
        let opens = tokens.get(j).map(|t| &t.0) == Some(&Token::Punct('['));
        if opens && ident(&tokens, j + 1) == Some("path") {
            found.push(crossing(file, *line, PATH_RULE, "#[path]"));
        }
    }
    found
}

/// A `use` in the crate root (a re-export could give any layer's module another name), or a
/// `#[macro_export]` anywhere (it puts the macro at the root).
fn root_exports(file: &str, code: &str) -> Vec<Crossing> {
    let mut found = Vec::new();
    for (token, line) in tokens(code) {
        let Token::Ident(name) = token else { continue };
        if (name == "use" && file == "src/lib.rs") || name == "macro_export" {
            found.push(crossing(file, line, ROOT_RULE, &name));
        }
    }
    found
}

/// The file-reading calls in cli code (blanked), less the allowed ones.
fn file_readers(file: &str, code: &str) -> Vec<Crossing> {
    let tokens = tokens(code);
    let mut found = Vec::new();
    for (i, (token, line)) in tokens.iter().enumerate() {
        let Token::Ident(name) = token else { continue };
        let pair = (i >= 2 && tokens[i - 1].0 == Token::PathSep)
            .then(|| ident(&tokens, i - 2))
            .flatten()
            .map(|before| format!("{before}::{name}"));
        let hit = if READERS.contains(&name.as_str()) {
            Some(name.clone())
        } else {
            pair.filter(|p| READER_PATHS.iter().any(|[a, b]| *p == format!("{a}::{b}")))
        };
        if let Some(hit) = hit.filter(|h| !cli_allows(file, h)) {
            found.push(crossing(file, *line, CLI_READ_RULE, &hit));
        }
    }
    found
}

fn rust_files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

#[test]
fn the_layers_of_src_hold() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    rust_files(&root.join("src"), &mut files);
    files.sort();
    assert!(files.len() > 50, "found only {} files under src/", files.len());
    let mut all = Vec::new();
    for path in &files {
        let file = path.strip_prefix(root).unwrap().to_str().unwrap().to_string();
        all.extend(crossings(&file, &std::fs::read_to_string(path).unwrap()));
    }
    let report: Vec<String> = all.iter().map(ToString::to_string).collect();
    assert!(report.is_empty(), "{} layer crossings:\n{}", report.len(), report.join("\n"));
}

/// The single crossing `source` has as `file`, for the synthetic cases below.
fn only_crossing(file: &str, source: &str) -> Crossing {
    let mut found = crossings(file, source);
    assert_eq!(found.len(), 1, "{found:?}");
    found.remove(0)
}

#[test]
fn record_may_not_use_ops_io_pipeline_or_cli() {
    for module in ["ops", "io", "pipeline", "cli"] {
        let source = format!("//! Records.\n\nuse crate::{module}::thing;\n");
        let c = only_crossing("src/record/view.rs", &source);
        assert_eq!((c.line, c.rule), (3, RULES[0].text));
    }
    assert!(crossings("src/record/view.rs", "use crate::record::layout;\n").is_empty());
}

#[test]
fn ops_may_not_use_io_inline_or_through_super() {
    let inline = "fn f() -> u8 {\n    crate::io::sam::parse::SEQ_NT16[0]\n}\n";
    let c = only_crossing("src/ops/fixmate/basemod.rs", inline);
    assert_eq!(
        (c.line, c.rule, c.found.as_str()),
        (2, RULES[1].text, "crate::io::sam::parse::SEQ_NT16")
    );
    // Three levels up from src/ops/sort/minhash.rs is the crate root, so this names crate::io …
    let escape = "use super::super::super::io::sam;\n";
    assert_eq!(only_crossing("src/ops/sort/minhash.rs", escape).rule, RULES[1].text);
    // … but stays inside ops from one level deeper.
    assert!(crossings("src/ops/markdup/decide/stream.rs", escape).is_empty());
    // A group names each of its members.
    let group = "use crate::{record::Batch, pipeline::sink::Encoded};\n";
    assert_eq!(
        only_crossing("src/ops/sort/keys.rs", group).found,
        "crate::pipeline::sink::Encoded"
    );
}

#[test]
fn io_may_not_use_pipeline_or_cli() {
    let source = "fn commit() {\n    crate::pipeline::tempfiles::unregister(&p);\n}\n";
    let c = only_crossing("src/io/output.rs", source);
    assert_eq!((c.line, c.rule), (2, RULES[2].text));
    assert_eq!(only_crossing("src/io/open.rs", "use crate::cli::view;\n").rule, RULES[2].text);
    assert!(crossings("src/io/open.rs", "use crate::record::Batch;\n").is_empty());
}

#[test]
fn io_may_not_use_ops() {
    let c = only_crossing("src/io/checksum_report.rs", "use crate::ops::checksum::Crcs;\n");
    assert_eq!((c.line, c.rule), (1, RULES[2].text));
    let escape = "use super::super::super::ops::bam2fq::style::AuxChoice;\n";
    assert_eq!(only_crossing("src/io/fastq/format.rs", escape).rule, RULES[2].text);
}

#[test]
fn modules_outside_the_layers_name_no_layer_but_the_allowed_paths() {
    let write = "fn finish() {\n    crate::io::output::write_file(&p, b)\n}\n";
    assert!(crossings("src/profile.rs", write).is_empty());
    let c = only_crossing("src/progress.rs", write);
    assert_eq!((c.line, c.rule), (2, OUTSIDE_RULE));
    let open = "use crate::io::open::open_input;\n";
    assert_eq!(only_crossing("src/profile.rs", open).rule, OUTSIDE_RULE);
    let header = "use crate::record::Header;\n";
    assert_eq!(only_crossing("src/simulate/reads.rs", header).rule, OUTSIDE_RULE);
    assert!(crossings("src/profile.rs", "use crate::alloc::active;\n").is_empty());
}

#[test]
fn dollar_crate_in_a_macro_counts_as_crate() {
    let source = "macro_rules! m {\n    () => { $crate::io::bam::Writer::new() };\n}\n";
    let c = only_crossing("src/ops/view/mod.rs", source);
    assert_eq!(
        (c.line, c.rule, c.found.as_str()),
        (2, RULES[1].text, "crate::io::bam::Writer::new")
    );
    let inside = "macro_rules! m {\n    () => { $crate::record::Header::new() };\n}\n";
    assert!(crossings("src/ops/view/mod.rs", inside).is_empty());
}

#[test]
fn the_crate_root_declares_modules_only() {
    let c = only_crossing("src/lib.rs", "pub mod io;\npub use crate::io as codecs;\n");
    assert_eq!((c.line, c.rule), (2, ROOT_RULE));
    let c = only_crossing("src/lib.rs", "pub mod io;\npub use io::bam;\n");
    assert_eq!((c.line, c.rule), (2, ROOT_RULE));
    assert!(
        crossings("src/lib.rs", "pub mod io;\n#[allow(unsafe_code)]\npub mod alloc;\n").is_empty()
    );
    let exported = "#[macro_export]\nmacro_rules! m {\n    () => {};\n}\n";
    assert_eq!(only_crossing("src/record/aux.rs", exported).rule, ROOT_RULE);
}

#[test]
fn path_attributes_are_refused() {
    let source = "#[path = \"../../io/bam.rs\"]\nmod bam;\n";
    let c = only_crossing("src/ops/view/mod.rs", source);
    assert_eq!((c.line, c.rule, c.found.as_str()), (1, PATH_RULE, "#[path]"));
    assert_eq!(only_crossing("src/cli/view.rs", "#![path = \"x\"]\n").rule, PATH_RULE);
    assert!(crossings("src/ops/view/mod.rs", "#[allow(dead_code)]\nmod bam;\n").is_empty());
}

#[test]
fn ops_touches_no_file_and_starts_no_thread() {
    let cases = [
        ("let t = std::fs::read_to_string(p);", "fs"),
        ("use std::{fs, io};", "fs"),
        ("std::thread::spawn(move || work());", "thread"),
        ("rayon::scope(|s| s.spawn(|_| work()));", "scope"),
        ("let handle = builder.spawn(work);", "spawn"),
    ];
    for (line, first) in cases {
        let found = crossings("src/ops/sort/keys.rs", &format!("fn f() {{\n    {line}\n}}\n"));
        assert!(found.iter().all(|c| c.rule == OPS_EFFECT_RULE && c.line == 2), "{line}");
        assert_eq!(found.first().map(|c| c.found.as_str()), Some(first), "{line}");
    }
    // The expression parser's sized stack is the one exception; `thread_local!` starts nothing.
    let parser = "fn f() {\n    std::thread::Builder::new().spawn(parse)\n}\n";
    assert!(crossings("src/ops/view/expr.rs", parser).is_empty());
    assert_eq!(crossings("src/ops/view/filter.rs", parser).len(), 2);
    let local = "thread_local! {\n    static X: u8 = 0;\n}\n";
    assert!(crossings("src/ops/baq/probaln.rs", local).is_empty());
}

#[test]
fn readme_states_the_layer_order_of_lib_rs() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let read = |name: &str| std::fs::read_to_string(root.join(name)).unwrap();
    // The order is written once, the same way, in both.
    let order = "`record` → `io` and `ops` (side by side) → `pipeline` → `cli`";
    assert!(read("src/lib.rs").contains(order), "src/lib.rs does not state {order}");
    assert!(read("README.md").contains(order), "README.md does not state {order}");
}

#[test]
fn pipeline_tests_may_not_use_cli_either() {
    let source = "\
pub fn run() {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn t() {
        let opts = crate::cli::view::parse(&inv, &args).unwrap();
    }
}
";
    let c = only_crossing("src/pipeline/view.rs", source);
    assert_eq!((c.line, c.rule, c.found.as_str()), (9, RULES[3].text, "crate::cli::view::parse"));
    // Three levels up from the test module of src/pipeline/view.rs is the crate root; two levels
    // up is pipeline itself.
    let escape = "mod tests {\n    use super::super::super::cli::Invocation;\n}\n";
    assert_eq!(only_crossing("src/pipeline/view.rs", escape).line, 2);
    let inside = "mod tests {\n    use super::super::cli::Invocation;\n}\n";
    assert!(crossings("src/pipeline/view.rs", inside).is_empty());
    assert!(crossings("src/pipeline/view.rs", "mod tests {\n    use super::run;\n}\n").is_empty());
}

#[test]
fn cli_may_not_read_files_or_records() {
    let reads = [
        ("let text = std::fs::read(path)?;", "fs::read"),
        ("let f = std::fs::File::open(path)?;", "File::open"),
        ("use flate2::read;", "flate2"),
        ("let d = MultiGzDecoder::new(&raw[..]);", "MultiGzDecoder"),
        ("let r = std::io::BufReader::new(f);", "BufReader"),
        ("f.read_to_string(&mut s)?;", "read_to_string"),
    ];
    for (line, found) in reads {
        let source = format!("fn parse() {{\n    {line}\n}}\n");
        let c = only_crossing("src/cli/view.rs", &source);
        assert_eq!((c.line, c.rule, c.found.as_str()), (2, CLI_READ_RULE, found), "{line}");
    }
    let records = "use crate::io::open::{self, Opened};\n";
    assert_eq!(only_crossing("src/cli/index.rs", records).rule, CLI_IO_RULE);
    // The allowed paths, and reading words in comments and strings, pass.
    let allowed = "use crate::io::format::OutputFormat;\n// std::fs::read(path)\nconst S: &str = \"File::open\";\n";
    assert!(crossings("src/cli/sort.rs", allowed).is_empty());
    let man = "fn write() {\n    crate::io::output::write_file(&path, text.as_bytes())\n}\n";
    assert!(crossings("src/cli/manpage.rs", man).is_empty());
    assert_eq!(only_crossing("src/cli/view.rs", man).rule, CLI_IO_RULE);
}

#[test]
fn messages_name_the_file_the_line_and_the_rule() {
    let c = only_crossing("src/io/output.rs", "\n\nuse crate::pipeline::tempfiles;\n");
    assert_eq!(
        c.to_string(),
        "src/io/output.rs:3: `crate::pipeline::tempfiles` breaks the rule \"io uses none of ops, pipeline, cli\""
    );
}

#[test]
fn comments_strings_and_characters_are_not_code() {
    let code = blank_comments_and_strings(
        "a /* x\n /* y */ */ b // c\n\"d\\\"\" 'e' '\\'' r#\"f\"# 'life\n",
    );
    assert_eq!(code.split_whitespace().collect::<Vec<_>>(), ["a", "b", "'life"]);
    assert_eq!(code.lines().count(), 3);
}
