//! io keeps no command-line option in a process global (issue 41): the `static`s io may hold.

use super::{Crossing, Token, crossing, crossings, ident, only_crossing, tokens};

pub const IO_GLOBAL_RULE: &str =
    "io keeps no option in a process global: options travel in InputSpec and OutputSpec";

/// The `static`s io may hold besides constant tables (a `static` of an array type): (file,
/// name, why it carries no command-line option). Any other `static` in `src/io` is refused, so
/// that an option cannot go back into a `Mutex` or `OnceLock` set while options are parsed.
const IO_STATICS_ALLOWED: &[(&str, &str, &str)] = &[
    ("src/io/bgzf/codec.rs", "CHOICE", "the inflate engine, from MDSAM_INFLATE or the CPU"),
    ("src/io/bgzf/codec.rs", "FROM_ENV", "the default deflate engine, from MDSAM_DEFLATE"),
    ("src/io/recycle.rs", "SHARED", "spare buffers; no settable cap: budgets pass theirs a call"),
    ("src/io/remote/mod.rs", "WITH_CREDENTIALS", "credentials taken out of URLs, kept hidden"),
    ("src/io/tempfiles.rs", "REGISTERED", "temporary files to remove on a signal"),
    ("src/io/tempfiles.rs", "INSTALL", "the signal handler, installed once"),
    ("src/io/tempfiles.rs", "CLEANING", "the signal handler's re-entry guard"),
    ("src/io/mapped_fault.rs", "INSTALL", "the SIGBUS handler, installed once"),
    ("src/io/cram/guard.rs", "GUARDED", "a thread's panic-hook silence (thread-local)"),
    ("src/io/cram/guard.rs", "ONCE", "the panic hook, installed once"),
    ("src/io/cram/context_slots.rs", "TABLE", "a decoding thread's scratch (thread-local)"),
    ("src/io/cram/htslib_fields.rs", "QUERY", "a thread's scratch (thread-local)"),
    ("src/io/cram/decode/mod.rs", "DECODED", "a decoding thread's scratch (thread-local)"),
    ("src/io/bgzf/gather.rs", "KEPT", "a deflating thread's compressor (thread-local)"),
    ("src/io/bgzf/reader.rs", "INFLATER", "an inflating thread's decompressor (thread-local)"),
];

/// `static NAME: TYPE` items of an io file that are neither constant tables (an array type) nor
/// in [`IO_STATICS_ALLOWED`].
pub fn io_globals(file: &str, code: &str) -> Vec<Crossing> {
    let tokens = tokens(code);
    let mut found = Vec::new();
    for (i, (token, line)) in tokens.iter().enumerate() {
        if *token != Token::Ident("static".into()) {
            continue;
        }
        // `static mut NAME` or `static NAME`, then `:`.
        let at = if ident(&tokens, i + 1) == Some("mut") { i + 2 } else { i + 1 };
        let Some(name) = ident(&tokens, at) else { continue };
        if tokens.get(at + 1).map(|t| &t.0) != Some(&Token::Punct(':')) {
            continue;
        }
        let table = tokens.get(at + 2).map(|t| &t.0) == Some(&Token::Punct('['));
        let allowed = IO_STATICS_ALLOWED.iter().any(|(f, n, _)| *f == file && *n == name);
        if !table && !allowed {
            found.push(crossing(file, *line, IO_GLOBAL_RULE, &format!("static {name}")));
        }
    }
    found
}

#[test]
fn io_keeps_no_option_in_a_process_global() {
    // What `io/cram/reference.rs` held before the reference travelled in InputSpec/OutputSpec.
    let chosen = "static CHOSEN_FASTA: Mutex<Option<String>> = Mutex::new(None);\n";
    let c = only_crossing("src/io/cram/reference.rs", chosen);
    assert_eq!((c.line, c.rule, c.found.as_str()), (1, IO_GLOBAL_RULE, "static CHOSEN_FASTA"));
    let lazy =
        "fn level() -> i32 {\n    static LEVEL: OnceLock<i32> = OnceLock::new();\n    0\n}\n";
    assert_eq!(only_crossing("src/io/output_spec.rs", lazy).line, 2);
    assert_eq!(only_crossing("src/io/x.rs", "static mut N: usize = 0;\n").rule, IO_GLOBAL_RULE);
    // Constant tables, the allowed ones, and statics outside io pass.
    assert!(crossings("src/io/sam/parse.rs", "static T: [u8; 4] = [0; 4];\n").is_empty());
    let env = "static FROM_ENV: OnceLock<Engine> = OnceLock::new();\n";
    assert!(crossings("src/io/bgzf/codec.rs", env).is_empty());
    assert!(crossings("src/pipeline/view.rs", chosen).is_empty());
}
