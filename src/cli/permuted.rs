//! The arguments in the order GNU getopt leaves `argv`: options (with their values) first, then
//! the positionals. Commands that build their `@PG CL` after parsing (split, depad,
//! ampliconclip) record this order.

use super::options::OptionTable;

/// Whether the option starting `arg` takes the next argument as its value.
fn takes_next(table: &OptionTable, arg: &str) -> bool {
    if let Some(long) = arg.strip_prefix("--") {
        if long.contains('=') {
            return false;
        }
        let options = table.long_options();
        let exact = options.iter().find(|o| o.name == long);
        let mut prefixed = options.iter().filter(|o| o.name.starts_with(long));
        return match (exact, prefixed.next(), prefixed.next()) {
            (Some(o), _, _) | (None, Some(o), None) => o.has_arg,
            _ => false,
        };
    }
    let spec = table.short.as_bytes();
    for (i, c) in arg.bytes().enumerate().skip(1) {
        let takes_arg = spec
            .iter()
            .position(|&s| s == c && c != b':')
            .is_some_and(|at| spec.get(at + 1) == Some(&b':'));
        if takes_arg {
            // The rest of the word is the value, or the next argument when nothing is left.
            return i + 1 == arg.len();
        }
    }
    false
}

/// `args` reordered as getopt permutes them.
pub fn permuted(table: &OptionTable, args: &[String]) -> Vec<String> {
    let (mut options, mut positionals) = (Vec::new(), Vec::new());
    let mut i = 0;
    while i < args.len() {
        let a = &args[i];
        if a == "--" {
            options.push(a.clone());
            positionals.extend(args[i + 1..].iter().cloned());
            break;
        }
        if a.starts_with('-') && a.len() > 1 {
            options.push(a.clone());
            if takes_next(table, a) && i + 1 < args.len() {
                i += 1;
                options.push(args[i].clone());
            }
        } else {
            positionals.push(a.clone());
        }
        i += 1;
    }
    options.extend(positionals);
    options
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options_move_before_positionals() {
        let args: Vec<String> =
            ["in.bam", "-b", "x.bed", "-u", "--tolerance", "3", "--strand", "-@2"]
                .map(String::from)
                .to_vec();
        let got = permuted(&crate::cli::ampliconclip::OPTIONS, &args);
        assert_eq!(got, ["-b", "x.bed", "-u", "--tolerance", "3", "--strand", "-@2", "in.bam"]);
    }
}
