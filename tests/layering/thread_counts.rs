//! Thread counts are passed down from the command, not read from the ambient pool (issue 41):
//! `rayon::current_num_threads()` answers for whatever pool the caller happens to run on.

use super::{Crossing, Token, crossing, crossings, only_crossing, tokens};

pub const THREAD_COUNT_RULE: &str =
    "thread counts are passed down: current_num_threads() only in pipeline/threads.rs";

/// The one file that may ask rayon how many threads there are: where pools are built.
const THREADS_FILE: &str = "src/pipeline/threads.rs";

/// Calls of rayon's free `current_num_threads` (the ambient pool) outside [`THREADS_FILE`]. A
/// method call on a pool value (`pool.current_num_threads()`) asks the pool the caller was
/// handed, and passes.
pub fn ambient_thread_counts(file: &str, code: &str) -> Vec<Crossing> {
    if file == THREADS_FILE {
        return Vec::new();
    }
    let tokens = tokens(code);
    let mut found = Vec::new();
    for (i, (token, line)) in tokens.iter().enumerate() {
        if *token != Token::Ident("current_num_threads".into()) {
            continue;
        }
        let method = i > 0 && tokens[i - 1].0 == Token::Punct('.');
        if !method {
            found.push(crossing(file, *line, THREAD_COUNT_RULE, "current_num_threads"));
        }
    }
    found
}

#[test]
fn thread_counts_come_from_the_command() {
    // What src/pipeline/sort/merge.rs did before the count travelled in `Runs`.
    let merge =
        "fn merge_into_run() {\n    let threads = rayon::current_num_threads().max(1);\n}\n";
    let c = only_crossing("src/pipeline/sort/merge.rs", merge);
    assert_eq!((c.line, c.rule, c.found.as_str()), (2, THREAD_COUNT_RULE, "current_num_threads"));
    let imported = "use rayon::current_num_threads;\n";
    assert_eq!(only_crossing("src/io/bgzf/gather.rs", imported).rule, THREAD_COUNT_RULE);
    // The pool a function was handed may be asked; threads.rs builds the pools.
    let handed = "fn f(pool: &ThreadPool) -> bool {\n    pool.current_num_threads() < 2\n}\n";
    assert!(crossings("src/pipeline/prefetch.rs", handed).is_empty());
    assert!(crossings(THREADS_FILE, merge).is_empty());
}
