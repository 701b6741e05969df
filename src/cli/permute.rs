//! argv as glibc's `getopt_long` leaves it: the options (with their separate arguments) first,
//! then `--` if given, then the other arguments. samtools commands that call `stringify_argv`
//! after parsing (reset, addreplacerg) write this order into their `@PG CL`.

use super::getopt::LongOpt;

/// `args` (already parsed successfully with `short` and `long`) in getopt's permuted order.
pub fn permuted(args: &[String], short: &str, long: &[LongOpt]) -> Vec<String> {
    let mut options = Vec::new();
    let mut others = Vec::new();
    let mut i = 0;
    while i < args.len() {
        let arg = &args[i];
        i += 1;
        if arg == "--" {
            options.push(arg.clone());
            others.extend(args[i..].iter().cloned());
            break;
        }
        let takes_next = if let Some(body) = arg.strip_prefix("--") {
            !body.contains('=') && long_takes_arg(long, body)
        } else if arg.len() >= 2 && arg.starts_with('-') {
            short_bundle_takes_next(&arg[1..], short)
        } else {
            others.push(arg.clone());
            continue;
        };
        options.push(arg.clone());
        if takes_next && i < args.len() {
            options.push(args[i].clone());
            i += 1;
        }
    }
    options.extend(others);
    options
}

/// Whether the long option `name` (exact or an abbreviation) takes an argument.
fn long_takes_arg(long: &[LongOpt], name: &str) -> bool {
    long.iter()
        .find(|l| l.name == name)
        .or_else(|| long.iter().find(|l| l.name.starts_with(name)))
        .is_some_and(|l| l.has_arg)
}

/// Whether a bundle of short options ends with one whose argument is the next word.
fn short_bundle_takes_next(bundle: &str, short: &str) -> bool {
    for (at, c) in bundle.char_indices() {
        let takes_arg = short
            .find(c)
            .filter(|_| c != ':')
            .is_some_and(|p| short[p + c.len_utf8()..].starts_with(':'));
        if takes_arg {
            return at + c.len_utf8() == bundle.len();
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options_come_before_the_other_arguments() {
        let long = [LongOpt { name: "output-fmt", has_arg: true, key: "O" }];
        let args: Vec<String> =
            ["in.bam", "-o", "x", "--output", "bam", "-ux", "-@2", "b"].map(String::from).to_vec();
        assert_eq!(
            permuted(&args, "o:u@:x", &long),
            ["-o", "x", "--output", "bam", "-ux", "-@2", "in.bam", "b"]
        );
    }
}
