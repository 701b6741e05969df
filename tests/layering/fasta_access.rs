//! FASTA and `.fai` files are read through `io::fasta` only (issue 41: five readers became one):
//! no module elsewhere defines a FASTA reader, index or parser of its own, and noodles' FASTA
//! crate is named only where noodles-cram takes its references.

use super::{Crossing, Token, crossing, crossings, ident, only_crossing, tokens};

pub const FASTA_RULE: &str = "FASTA and .fai are read through io::fasta only";

/// Where FASTA reading lives.
const FASTA_MODULE: &str = "src/io/fasta/";

/// Files that may name `noodles_fasta`, and why: noodles-cram takes its references as a
/// `noodles_fasta::Repository` of `Record`s, which mdsam answers from `io::fasta::Fasta`.
const NOODLES_FASTA_ALLOWED: &[(&str, &str)] = &[
    ("src/io/cram/reference.rs", "answers noodles-cram's Repository from io::fasta"),
    ("src/io/cram/reader.rs", "hands the Repository to noodles-cram's decoder"),
    ("src/io/cram/writer.rs", "hands the Repository to the encoder"),
    ("src/io/cram/container_out.rs", "takes the Repository's sequences to encode against"),
    ("src/io/cram/decode/mod.rs", "holds the Repository's sequences while decoding"),
];

/// Words that make a name FASTA's: `IndexedFasta`, `read_fai`, `faidx_load`.
const FASTA_WORDS: &[&str] = &["fasta", "fai", "faidx", "fa"];
/// Words that make it a reader: `parse_fai`, `FastaReader`, `fasta_references`.
const READING_WORDS: &[&str] = &[
    "read",
    "reader",
    "parse",
    "parser",
    "load",
    "loader",
    "open",
    "build",
    "index",
    "indexed",
    "fetch",
    "scan",
    "references",
];

/// The lower-case words of an identifier: `IndexedFasta` → `indexed`, `fasta`;
/// `parse_fai` → `parse`, `fai`.
fn words(name: &str) -> Vec<String> {
    let mut out = Vec::new();
    for part in name.split('_').filter(|p| !p.is_empty()) {
        let mut word = String::new();
        for c in part.chars() {
            if c.is_uppercase() && !word.is_empty() {
                out.push(std::mem::take(&mut word));
            }
            word.extend(c.to_lowercase());
        }
        out.push(word);
    }
    out
}

/// Outside [`FASTA_MODULE`]: items whose name says they read FASTA or `.fai`, and
/// `noodles_fasta` outside [`NOODLES_FASTA_ALLOWED`].
pub fn fasta_readers(file: &str, code: &str) -> Vec<Crossing> {
    if file.starts_with(FASTA_MODULE) {
        return Vec::new();
    }
    let tokens = tokens(code);
    let mut found = Vec::new();
    let noodles_allowed = NOODLES_FASTA_ALLOWED.iter().any(|(f, _)| *f == file);
    for (i, (token, line)) in tokens.iter().enumerate() {
        let Token::Ident(name) = token else { continue };
        if name == "noodles_fasta" && !noodles_allowed {
            found.push(crossing(file, *line, FASTA_RULE, name));
            continue;
        }
        let defines = matches!(name.as_str(), "fn" | "struct" | "enum" | "trait" | "type");
        let Some(item) = defines.then(|| ident(&tokens, i + 1)).flatten() else { continue };
        let w = words(item);
        let fasta = w.iter().any(|w| FASTA_WORDS.contains(&w.as_str()));
        let reading = w.iter().any(|w| READING_WORDS.contains(&w.as_str()));
        if fasta && reading {
            found.push(crossing(file, *line, FASTA_RULE, &format!("{name} {item}")));
        }
    }
    found
}

#[test]
fn fasta_is_read_through_io_fasta_only() {
    // What src/io/faidx.rs held beside io/fasta_index before they became one module.
    let whole = "pub struct IndexedFasta {\n    bytes: Vec<u8>,\n}\n";
    let c = only_crossing("src/io/faidx.rs", whole);
    assert_eq!((c.line, c.rule, c.found.as_str()), (1, FASTA_RULE, "struct IndexedFasta"));
    let fai = "fn parse_fai(text: &[u8]) -> Option<()> {\n    None\n}\n";
    assert_eq!(only_crossing("src/io/faidx.rs", fai).found, "fn parse_fai");
    let list = "pub fn read_fai(path: &str) {}\n";
    assert_eq!(only_crossing("src/io/fai.rs", list).rule, FASTA_RULE);
    let refs = "fn fasta_references(path: &str) {}\n";
    assert_eq!(only_crossing("src/pipeline/view/request.rs", refs).rule, FASTA_RULE);
    // noodles' FASTA reader from a command, or a new io file.
    let noodles = "use noodles_fasta::io::Reader;\n";
    assert_eq!(only_crossing("src/pipeline/mpileup.rs", noodles).rule, FASTA_RULE);
    assert_eq!(only_crossing("src/io/bed.rs", noodles).rule, FASTA_RULE);
    // io::fasta itself, the CRAM Repository plumbing, and FASTA writers pass.
    assert!(crossings("src/io/fasta/whole.rs", fai).is_empty());
    assert!(crossings("src/io/cram/reader.rs", "use noodles_fasta as fasta;\n").is_empty());
    let writers = "fn write_fasta() {}\nfn finish_fasta() {}\nstruct FaidxOptions;\n";
    assert!(crossings("src/ops/consensus/emit.rs", writers).is_empty());
    assert_eq!(words("IndexedFasta"), ["indexed", "fasta"]);
    assert_eq!(words("read_fai_or_fasta"), ["read", "fai", "or", "fasta"]);
}
