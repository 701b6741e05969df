//! A GNU `getopt_long` work-alike, because samtools' command lines depend on its exact rules:
//! options may follow positionals (argv is permuted), short flags bundle (`-bh`), arguments attach
//! (`-@4`, `-q30`) or follow, long options take `--name=value` or `--name value` and may be
//! abbreviated to any unambiguous prefix, and `--` ends the options. (clap can be coaxed into most
//! of this, but not into samtools' `-h` meaning "header" together with prefix matching and exact
//! error texts, so this small parser is ours.)

/// A long option: its name, whether it takes an argument, and the key it reports.
#[derive(Clone, Copy)]
pub struct LongOpt {
    pub name: &'static str,
    pub has_arg: bool,
    pub key: &'static str,
}

/// The key of a long option getopt knows but the command refuses (samtools maps it to `'?'`).
pub const REFUSED: &str = "?refused";

/// One parsed option: the key (the short letter as a string, or a long option's key) and value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Opt {
    pub key: String,
    pub value: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GetoptError {
    /// A short option letter, or a long option as typed (`--foo=3`).
    Unknown(String),
    /// A short option letter, or a long option's name.
    MissingArgument(String),
    /// The long option as typed, and the names it could be, in table order.
    Ambiguous { option: String, candidates: Vec<String> },
    /// `--name=value` for an option without an argument.
    ArgumentNotAllowed(String),
    /// A [`REFUSED`] option, as typed (`--input-fmt` or `--input-fmt=bam`); getopt itself
    /// prints nothing for it, so the command decides what to say.
    Refused { option: String, value_attached: bool },
}

impl std::fmt::Display for GetoptError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            GetoptError::Unknown(o) if o.len() == 1 => write!(f, "invalid option -- '{o}'"),
            GetoptError::Unknown(o) => write!(f, "unrecognized option '{o}'"),
            GetoptError::MissingArgument(o) if o.len() == 1 => {
                write!(f, "option requires an argument -- '{o}'")
            }
            GetoptError::MissingArgument(o) => write!(f, "option '--{o}' requires an argument"),
            GetoptError::Ambiguous { option, candidates } => {
                write!(f, "option '{option}' is ambiguous; possibilities:")?;
                candidates.iter().try_for_each(|c| write!(f, " '--{c}'"))
            }
            GetoptError::ArgumentNotAllowed(o) => {
                write!(f, "option '--{o}' doesn't allow an argument")
            }
            GetoptError::Refused { option, .. } => write!(f, "unrecognised option '{option}'"),
        }
    }
}

/// Parses `args` (without the command name) with a getopt short spec such as `"bo:@:"`.
/// Returns the options in order and the positionals in order.
pub fn parse(
    args: &[String],
    short: &str,
    long: &[LongOpt],
) -> Result<(Vec<Opt>, Vec<String>), GetoptError> {
    let mut opts = Vec::new();
    let mut positionals = Vec::new();
    let mut i = 0;
    while i < args.len() {
        let arg = &args[i];
        i += 1;
        if arg == "--" {
            positionals.extend(args[i..].iter().cloned());
            break;
        }
        if let Some(body) = arg.strip_prefix("--") {
            let (name, inline) = match body.split_once('=') {
                Some((n, v)) => (n, Some(v.to_string())),
                None => (body, None),
            };
            let lo = find_long(long, name).map_err(|e| e.typed_as(arg))?;
            if lo.key == REFUSED {
                return Err(GetoptError::Refused {
                    option: arg.clone(),
                    value_attached: inline.is_some(),
                });
            }
            let value = if lo.has_arg {
                match inline {
                    Some(v) => Some(v),
                    None if i < args.len() => {
                        i += 1;
                        Some(args[i - 1].clone())
                    }
                    None => return Err(GetoptError::MissingArgument(lo.name.to_string())),
                }
            } else if inline.is_some() {
                return Err(GetoptError::ArgumentNotAllowed(lo.name.to_string()));
            } else {
                None
            };
            opts.push(Opt { key: lo.key.to_string(), value });
            continue;
        }
        if arg.len() < 2 || !arg.starts_with('-') {
            positionals.push(arg.clone());
            continue;
        }
        let chars: Vec<char> = arg[1..].chars().collect();
        let mut j = 0;
        while j < chars.len() {
            let c = chars[j];
            j += 1;
            let pos = short
                .find(c)
                .filter(|_| c != ':')
                .ok_or_else(|| GetoptError::Unknown(c.to_string()))?;
            let takes_arg = short[pos + c.len_utf8()..].starts_with(':');
            if !takes_arg {
                opts.push(Opt { key: c.to_string(), value: None });
                continue;
            }
            let rest: String = chars[j..].iter().collect();
            let value = if !rest.is_empty() {
                rest
            } else if i < args.len() {
                i += 1;
                args[i - 1].clone()
            } else {
                return Err(GetoptError::MissingArgument(c.to_string()));
            };
            opts.push(Opt { key: c.to_string(), value: Some(value) });
            break;
        }
    }
    Ok((opts, positionals))
}

fn find_long<'a>(long: &'a [LongOpt], name: &str) -> Result<&'a LongOpt, GetoptError> {
    if let Some(exact) = long.iter().find(|l| l.name == name) {
        return Ok(exact);
    }
    let matches: Vec<&LongOpt> = long.iter().filter(|l| l.name.starts_with(name)).collect();
    match matches.as_slice() {
        [] => Err(GetoptError::Unknown(name.to_string())),
        [one] => Ok(one),
        [first, rest @ ..]
            if rest.iter().all(|l| l.key == first.key && l.has_arg == first.has_arg) =>
        {
            Ok(first)
        }
        _ => Err(GetoptError::Ambiguous {
            option: name.to_string(),
            candidates: matches.iter().map(|l| l.name.to_string()).collect(),
        }),
    }
}

impl GetoptError {
    /// glibc names an unknown or ambiguous long option as it was typed, `=value` included.
    fn typed_as(self, arg: &str) -> Self {
        match self {
            GetoptError::Unknown(_) => GetoptError::Unknown(arg.to_string()),
            GetoptError::Ambiguous { candidates, .. } => {
                GetoptError::Ambiguous { option: arg.to_string(), candidates }
            }
            e => e,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    const LONG: &[LongOpt] = &[
        LongOpt { name: "no-PG", has_arg: false, key: "no-PG" },
        LongOpt { name: "output", has_arg: true, key: "o" },
        LongOpt { name: "output-fmt", has_arg: true, key: "O" },
    ];

    #[test]
    fn permutes_bundles_and_attaches() {
        let (o, p) =
            parse(&args("-bh in.sam -@4 -o out.bam --no-PG reg1 -q 30"), "bho:@:q:", LONG).unwrap();
        let keys: Vec<_> = o.iter().map(|o| (o.key.as_str(), o.value.as_deref())).collect();
        assert_eq!(
            keys,
            vec![
                ("b", None),
                ("h", None),
                ("@", Some("4")),
                ("o", Some("out.bam")),
                ("no-PG", None),
                ("q", Some("30"))
            ]
        );
        assert_eq!(p, vec!["in.sam", "reg1"]);
    }

    #[test]
    fn long_forms_and_errors() {
        let (o, _) = parse(&args("--output=x --output-fmt bam --no"), "", LONG).unwrap();
        assert_eq!(o[0].value.as_deref(), Some("x"));
        assert_eq!(o[1].key, "O");
        assert_eq!(o[2].key, "no-PG");
        let ambiguous = parse(&args("--out=x"), "", LONG).unwrap_err();
        assert_eq!(
            ambiguous.to_string(),
            "option '--out=x' is ambiguous; possibilities: '--output' '--output-fmt'"
        );
        let unknown = parse(&args("--foo=3"), "", LONG).unwrap_err();
        assert_eq!(unknown.to_string(), "unrecognized option '--foo=3'");
        let with_value = parse(&args("--no-PG=1"), "", LONG).unwrap_err();
        assert_eq!(with_value.to_string(), "option '--no-PG' doesn't allow an argument");
        assert_eq!(parse(&args("-Z"), "b", LONG), Err(GetoptError::Unknown("Z".into())));
        assert_eq!(parse(&args("-o"), "o:", LONG), Err(GetoptError::MissingArgument("o".into())));
        let (_, p) = parse(&args("-b -- -x"), "b", LONG).unwrap();
        assert_eq!(p, vec!["-x"]);
        let (_, p) = parse(&args("- -b"), "b", LONG).unwrap();
        assert_eq!(p, vec!["-"]);
    }
}
