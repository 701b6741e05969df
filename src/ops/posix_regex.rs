//! POSIX extended regular expressions (glibc `regcomp(REG_EXTENDED)`) rewritten into the `regex`
//! crate's syntax: the filter expressions' `=~` and markdup's `--barcode-rgx` / `--read-coords`.
//!
//! The two dialects agree on the common core (`. * + ? {m,n} | () ^ $ [...]`). What differs, and
//! is rewritten or rejected here as glibc would:
//! - glibc escapes: `\<` `\>` (word start/end), `` \` `` `\'` (buffer start/end) are mapped; `\w \W
//!   \s \S \b \B` are kept; any other escaped character means itself (glibc reads `\d` as `d`).
//! - a repetition at the start, after `(` or `|`, or after an anchor is an error (so `(?:` is too);
//!   a repetition of a repetition repeats it again (`a+?` is `(a+)?`, never lazy); `{,n}` is
//!   `{0,n}`; a `)` that closes nothing is a literal.
//! - inside brackets a backslash is an ordinary character, and `[`, `&`, `~`, `-` runs have no set
//!   operations, so they are escaped; `[[=c=]]` and `[[.c.]]` take single characters.
//! - `.` matches newlines (no `REG_NEWLINE`).
//!
//! Matching is Unicode-aware, as glibc's is under the UTF-8 locale samtools runs with here
//! (`"é" =~ "^.$"` and `"é" =~ "[[:alpha:]]"` are true). Back-references (`\1`..`\9`), which
//! glibc supports, fail to compile. Groups capture as in glibc, but where alternatives of
//! different lengths both match at one place the `regex` crate takes the first, POSIX the
//! longest (`(a|ab)` on `ab` captures `a` here): whole-match tests are unaffected.

use regex::bytes::{Regex, RegexBuilder};

/// Compiles a POSIX ERE pattern for a filter expression; the error is a one-line message in
/// htslib's form (`Failed regex: ...`).
pub fn compile(pattern: &[u8]) -> Result<Regex, String> {
    let pattern = String::from_utf8_lossy(pattern);
    let translated = translate(&pattern).map_err(|e| format!("Failed regex: {e}"))?;
    build(&translated)
        .map_err(|_| format!("Failed regex: Invalid regular expression \"{pattern}\""))
}

/// Compiles a POSIX ERE pattern as `regcomp(REG_EXTENDED)` does; the error is glibc's
/// `regerror` text, which samtools markdup prints.
pub fn compile_ere(pattern: &str) -> Result<Regex, String> {
    build(&translate(pattern)?).map_err(|_| "Invalid regular expression".to_string())
}

fn build(translated: &str) -> Result<Regex, regex::Error> {
    RegexBuilder::new(translated).dot_matches_new_line(true).build()
}

/// What the last translated item was, for glibc's rules on where a repetition may go.
#[derive(Clone, Copy)]
enum Last {
    /// Start of the pattern, of a group, or of an alternative: a repetition here is an error.
    Nothing,
    /// `^`, `$` or a `\<`-style assertion: a repetition after it is an error too.
    Assertion,
    /// Something repeatable, starting at this byte of the output.
    Atom(usize),
    /// An atom already repeated; glibc repeats the whole again (`a+?` is `(a+)?`, not lazy).
    Repeated(usize),
}

fn invalid_preceding() -> String {
    "Invalid preceding regular expression".to_string()
}

/// Rewrites POSIX ERE syntax into `regex` crate syntax.
fn translate(pattern: &str) -> Result<String, String> {
    let chars: Vec<char> = pattern.chars().collect();
    let mut out = String::with_capacity(pattern.len() + 8);
    let mut last = Last::Nothing;
    // Output offsets of the open groups.
    let mut groups: Vec<usize> = Vec::new();
    let mut at = 0;
    while at < chars.len() {
        let here = out.len();
        match chars[at] {
            c @ ('*' | '+' | '?' | '{') => {
                let atom_start = match last {
                    Last::Nothing | Last::Assertion => return Err(invalid_preceding()),
                    Last::Atom(start) => start,
                    Last::Repeated(start) => {
                        out.insert_str(start, "(?:");
                        out.push(')');
                        start
                    }
                };
                if c == '{' {
                    at = translate_interval(&chars, at, &mut out)?;
                } else {
                    out.push(c);
                    at += 1;
                }
                last = Last::Repeated(atom_start);
                continue;
            }
            '(' => {
                groups.push(here);
                out.push('(');
                last = Last::Nothing;
            }
            // glibc reads a `)` that closes nothing as a literal.
            ')' => match groups.pop() {
                Some(start) => {
                    out.push(')');
                    last = Last::Atom(start);
                }
                None => {
                    out.push_str(r"\)");
                    last = Last::Atom(here);
                }
            },
            '|' => {
                out.push('|');
                last = Last::Nothing;
            }
            c @ ('^' | '$') => {
                out.push(c);
                last = Last::Assertion;
            }
            '[' => {
                at = translate_bracket(&chars, at, &mut out)?;
                last = Last::Atom(here);
                continue;
            }
            '\\' => {
                let Some(&next) = chars.get(at + 1) else {
                    return Err("Trailing backslash".to_string());
                };
                last = Last::Atom(here);
                match next {
                    'w' | 'W' | 's' | 'S' => {
                        out.push('\\');
                        out.push(next);
                    }
                    'b' | 'B' => {
                        out.push('\\');
                        out.push(next);
                        last = Last::Assertion;
                    }
                    '<' | '>' | '`' | '\'' => {
                        out.push_str(match next {
                            '<' => r"\b{start}",
                            '>' => r"\b{end}",
                            '`' => r"\A",
                            _ => r"\z",
                        });
                        last = Last::Assertion;
                    }
                    '1'..='9' => {
                        return Err("back-references are not supported".to_string());
                    }
                    other => push_literal(&mut out, other),
                }
                at += 2;
                continue;
            }
            '.' => {
                out.push('.');
                last = Last::Atom(here);
            }
            other => {
                push_literal(&mut out, other);
                last = Last::Atom(here);
            }
        }
        at += 1;
    }
    if !groups.is_empty() {
        return Err("Unmatched ( or \\(".to_string());
    }
    Ok(out)
}

/// Copies the interval `{m}`, `{m,}`, `{m,n}` or `{,n}` starting at `chars[start] == '{'`;
/// returns the index after its `}`.
fn translate_interval(chars: &[char], start: usize, out: &mut String) -> Result<usize, String> {
    let close = chars[start..]
        .iter()
        .position(|&c| c == '}')
        .map(|p| start + p)
        .ok_or_else(|| "Unmatched \\{".to_string())?;
    let body: String = chars[start + 1..close].iter().collect();
    let bad = || "Invalid content of \\{\\}".to_string();
    let (min, max) = match body.split_once(',') {
        Some((min, max)) => (if min.is_empty() { "0" } else { min }, Some(max)),
        None => (body.as_str(), None),
    };
    let is_number = |t: &str| !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit());
    if !is_number(min) || max.is_some_and(|m| !m.is_empty() && !is_number(m)) {
        return Err(bad());
    }
    if let Some(max) = max.filter(|m| !m.is_empty())
        && max.parse::<u64>().ok() < min.parse::<u64>().ok()
    {
        return Err(bad());
    }
    out.push('{');
    out.push_str(min);
    if let Some(max) = max {
        out.push(',');
        out.push_str(max);
    }
    out.push('}');
    Ok(close + 1)
}

/// Appends `c` so that it matches only itself.
fn push_literal(out: &mut String, c: char) {
    let mut buf = [0u8; 4];
    out.push_str(&regex::escape(c.encode_utf8(&mut buf)));
}

/// Translates the bracket expression starting at `chars[start] == '['`; returns the index after
/// its closing `]`.
fn translate_bracket(chars: &[char], start: usize, out: &mut String) -> Result<usize, String> {
    let unmatched = || "Unmatched [, [^, [:, [., or [=".to_string();
    let mut at = start + 1;
    out.push('[');
    if chars.get(at) == Some(&'^') {
        out.push('^');
        at += 1;
    }
    // A `]` right after `[` or `[^` is a member, not the end.
    if chars.get(at) == Some(&']') {
        out.push_str(r"\]");
        at += 1;
    }
    loop {
        let Some(&c) = chars.get(at) else { return Err(unmatched()) };
        match c {
            ']' => {
                out.push(']');
                return Ok(at + 1);
            }
            '[' if matches!(chars.get(at + 1), Some(':' | '.' | '=')) => {
                let kind = chars[at + 1];
                let body_start = at + 2;
                let close = (body_start..chars.len().saturating_sub(1))
                    .find(|&i| chars[i] == kind && chars[i + 1] == ']')
                    .ok_or_else(unmatched)?;
                let body: String = chars[body_start..close].iter().collect();
                if kind == ':' {
                    out.push_str(
                        posix_class(&body)
                            .ok_or_else(|| "Invalid character class name".to_string())?,
                    );
                } else {
                    // Collating elements and equivalence classes: only single characters.
                    let mut single = body.chars();
                    match (single.next(), single.next()) {
                        (Some(only), None) => push_literal(out, only),
                        _ => return Err("Invalid collation character".to_string()),
                    }
                }
                at = close + 2;
            }
            '\\' | '[' | '&' | '~' => {
                out.push('\\');
                out.push(c);
                at += 1;
            }
            // `--` is set difference in the regex crate; in POSIX it is a range ending in `-`.
            '-' if out.ends_with('-') => {
                out.push_str(r"\-");
                at += 1;
            }
            _ => {
                out.push(c);
                at += 1;
            }
        }
    }
}

/// A bracket-expression class in `regex` syntax. The letter classes follow Unicode, as glibc's
/// do under a UTF-8 locale; the rest are ASCII, as glibc's are.
fn posix_class(name: &str) -> Option<&'static str> {
    Some(match name {
        "alpha" => r"\p{Alphabetic}",
        "upper" => r"\p{Uppercase}",
        "lower" => r"\p{Lowercase}",
        "alnum" => r"\p{Alphabetic}[:digit:]",
        "digit" => "[:digit:]",
        "xdigit" => "[:xdigit:]",
        "space" => "[:space:]",
        "blank" => "[:blank:]",
        "punct" => "[:punct:]",
        "print" => "[:print:]",
        "graph" => "[:graph:]",
        "cntrl" => "[:cntrl:]",
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn matches(pattern: &str, text: &str) -> bool {
        compile(pattern.as_bytes()).unwrap().is_match(text.as_bytes())
    }

    #[test]
    fn common_ere_syntax_matches_as_in_glibc() {
        assert!(matches("^a\\.b$", "a.b"));
        assert!(!matches("^a\\.b$", "axb"));
        assert!(matches("(a|x)+", "a.b"));
        assert!(matches("a{1,2}", "aa"));
        assert!(matches("[[:alpha:]]\\.[[:alpha:]]", "a.b"));
        assert!(matches("", "anything"));
        assert!(matches("a.b", "a\nb"));
    }

    #[test]
    fn glibc_escapes_are_mapped() {
        assert!(matches("\\<b", "a.b"));
        assert!(!matches("\\<b", "ab"));
        assert!(matches("a\\>", "a.b"));
        // glibc reads an unknown escape as the character itself.
        assert!(matches("\\d", "d"));
        assert!(!matches("\\d", "5"));
    }

    #[test]
    fn brackets_treat_backslash_and_set_operators_literally() {
        assert!(matches("[\\]", "\\"));
        assert!(matches("[]a]", "]"));
        assert!(matches("[^]a]", "b"));
        assert!(matches("[a&&b]", "&"));
        assert!(matches("[[.-.]]", "-"));
        assert!(matches("[+--]", ","));
    }

    #[test]
    fn invalid_patterns_fail_with_one_line() {
        for bad in ["[", "a{", "(", "\\1", "[[:alpha:]"] {
            let err = compile(bad.as_bytes()).unwrap_err();
            assert!(err.starts_with("") && !err.contains('\n'), "{bad}: {err}");
        }
    }

    #[test]
    fn repetition_follows_glibc() {
        for bad in
            ["*a", "(*a)", "b|*a", "+a", "{1}a", "^*a", "\\<+a", "a\\b?", "(?:a)", "a{2,1}", "a{x"]
        {
            let err = compile(bad.as_bytes()).unwrap_err();
            assert!(err.starts_with(""), "{bad}");
        }
        assert!(matches("^a+?$", ""));
        assert!(!matches("^a{1}{2}b", "ab"));
        assert!(matches("^a{1}{2}b", "aab"));
        assert!(matches("^a**$", "aaa"));
        assert!(matches("^a{,2}$", "aa"));
        assert!(!matches("^a{,2}$", "aaa"));
    }

    #[test]
    fn unopened_close_paren_is_literal() {
        assert!(matches("a)", "a)"));
        assert!(matches("[^a]+|)", "ACGT"));
        assert!(!matches("a)", "a"));
    }

    #[test]
    fn letter_classes_are_unicode() {
        assert!(matches("^[[:alpha:]]$", "é"));
        assert!(matches("^[[:upper:]][[:digit:]]$", "É1"));
        assert!(!matches("[[:digit:]]", "٣x"));
        assert!(compile(b"[[:foo:]]").is_err());
    }

    #[test]
    fn dot_matches_one_utf8_character() {
        assert!(matches("^.$", "ü"));
        assert!(!matches("^..$", "ü"));
    }
}
