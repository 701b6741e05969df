//! A GNU `getopt_long` work-alike, because samtools' command lines depend on its exact rules:
//! options may follow positionals (argv is permuted), short flags bundle (`-bh`), arguments attach
//! (`-@4`, `-q30`) or follow, long options take `--name=value` or `--name value` and may be
//! abbreviated to any unambiguous prefix, and `--` ends the options. (clap can be coaxed into most
//! of this, but not into samtools' `-h` meaning "header" together with prefix matching and exact
//! error texts, so this small parser is ours.)

/// A long option: its name, whether it takes an argument, and the key it reports.
pub struct LongOpt {
    pub name: &'static str,
    pub has_arg: bool,
    pub key: &'static str,
}

/// One parsed option: the key (the short letter as a string, or a long option's key) and value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Opt {
    pub key: String,
    pub value: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GetoptError {
    Unknown(String),
    MissingArgument(String),
    Ambiguous(String),
}

impl std::fmt::Display for GetoptError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            GetoptError::Unknown(o) if o.len() == 1 => write!(f, "invalid option -- '{o}'"),
            GetoptError::Unknown(o) => write!(f, "unrecognized option '--{o}'"),
            GetoptError::MissingArgument(o) if o.len() == 1 => {
                write!(f, "option requires an argument -- '{o}'")
            }
            GetoptError::MissingArgument(o) => write!(f, "option '--{o}' requires an argument"),
            GetoptError::Ambiguous(o) => write!(f, "option '--{o}' is ambiguous"),
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
            let lo = find_long(long, name)?;
            let value = if lo.has_arg {
                match inline {
                    Some(v) => Some(v),
                    None if i < args.len() => {
                        i += 1;
                        Some(args[i - 1].clone())
                    }
                    None => return Err(GetoptError::MissingArgument(lo.name.to_string())),
                }
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
        _ => Err(GetoptError::Ambiguous(name.to_string())),
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
        assert_eq!(parse(&args("--out x"), "", LONG), Err(GetoptError::Ambiguous("out".into())));
        assert_eq!(parse(&args("-Z"), "b", LONG), Err(GetoptError::Unknown("Z".into())));
        assert_eq!(parse(&args("-o"), "o:", LONG), Err(GetoptError::MissingArgument("o".into())));
        let (_, p) = parse(&args("-b -- -x"), "b", LONG).unwrap();
        assert_eq!(p, vec!["-x"]);
        let (_, p) = parse(&args("- -b"), "b", LONG).unwrap();
        assert_eq!(p, vec!["-"]);
    }
}
