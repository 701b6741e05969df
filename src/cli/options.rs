//! One command's options in one place: the getopt table that parses them, the samtools global
//! long options the command takes ([`Globals`], samtools' `SAM_OPT_GLOBAL_OPTIONS`), and the
//! options samtools accepts without listing them in its usage text. `--help` and the man pages
//! print the usage text; completion lists [`OptionTable::names`]; the catalog's test checks each
//! table against its usage text both ways, so none of them can name an option the others lack.

use super::getopt::{self, GetoptError, LongOpt, Opt};
use super::global::Globals;
use crate::error::Error;

pub struct OptionTable {
    /// The command's name: getopt's messages start with it, as glibc's start with `argv[0]`.
    pub command: &'static str,
    /// getopt's short spec, e.g. `"rsl:@:"`.
    pub short: &'static str,
    /// The command's own long options.
    pub long: &'static [LongOpt],
    /// samtools' global long options, as this command takes them (`None`: getopt does not know
    /// their names, as in mdsam's own commands).
    pub globals: Option<Globals>,
    /// Options samtools accepts that its usage text does not list (`-x` or `--name`).
    pub unlisted: &'static [&'static str],
    /// samtools' table lists the global options before the command's own: getopt names the
    /// candidates of an ambiguous abbreviation in table order.
    pub globals_first: bool,
}

impl OptionTable {
    /// The command's long options followed by the global ones.
    pub fn long_options(&self) -> Vec<LongOpt> {
        let globals = self.globals.iter().flat_map(Globals::long_options);
        if self.globals_first {
            globals.chain(self.long.iter().copied()).collect()
        } else {
            self.long.iter().copied().chain(globals).collect()
        }
    }

    /// Parses `args` (without the command name) with getopt's rules.
    pub fn parse(&self, args: &[String]) -> Result<(Vec<Opt>, Vec<String>), GetoptError> {
        getopt::parse(args, self.short, &self.long_options())
    }

    /// [`Self::parse`], with a getopt failure turned into samtools' usage error: getopt's message
    /// and the usage, or the usage alone for a global option the command refuses.
    pub fn parse_or_usage(&self, args: &[String]) -> Result<(Vec<Opt>, Vec<String>), Error> {
        self.parse(args).map_err(|e| self.usage_error(e))
    }

    /// samtools' answer to a getopt failure (view has its own).
    pub fn usage_error(&self, e: GetoptError) -> Error {
        match e {
            GetoptError::Refused { .. } => Error::ShowUsage(None),
            e => Error::ShowUsage(Some(format!("{}: {e}", self.command))),
        }
    }

    /// Every option the command accepts, as `-x` and `--name`, short ones first.
    pub fn names(&self) -> Vec<String> {
        let short = self.short.chars().filter(|&c| c != ':').map(|c| format!("-{c}"));
        let long = self
            .long_options()
            .into_iter()
            .filter(|l| l.key != getopt::REFUSED)
            .map(|l| format!("--{}", l.name));
        short.chain(long).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::global::Take;

    const TABLE: OptionTable = OptionTable {
        command: "demo",
        short: "l:u@:",
        long: &[LongOpt { name: "no-PG", has_arg: false, key: "no-PG" }],
        globals: Some(Globals {
            input_fmt: Take::Refused,
            threads: Take::Short("@"),
            ..Globals::LONG
        }),
        globals_first: false,
        unlisted: &[],
    };

    fn strings(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn globals_join_the_command_options() {
        let (opts, pos) =
            TABLE.parse(&strings(&["--threads", "3", "--verbosity=2", "-u", "x"])).unwrap();
        let keys: Vec<_> = opts.iter().map(|o| (o.key.as_str(), o.value.as_deref())).collect();
        assert_eq!(keys, [("@", Some("3")), ("verbosity", Some("2")), ("u", None)]);
        assert_eq!(pos, ["x"]);
        let names = TABLE.names();
        assert!(names.contains(&"--threads".to_string()) && names.contains(&"-l".to_string()));
        assert!(!names.contains(&"--input-fmt".to_string()), "refused options are not offered");
    }

    #[test]
    fn a_refused_global_shows_only_the_usage() {
        let e = TABLE.parse(&strings(&["--input-fmt", "bam", "x"])).unwrap_err();
        assert_eq!(e, GetoptError::Refused { option: "--input-fmt".into(), value_attached: false });
        assert!(matches!(TABLE.usage_error(e), Error::ShowUsage(None)));
        let e = TABLE.parse(&strings(&["--input-fmt=bam"])).unwrap_err();
        assert_eq!(
            e,
            GetoptError::Refused { option: "--input-fmt=bam".into(), value_attached: true }
        );
        let e = TABLE.usage_error(GetoptError::Unknown("q".into()));
        assert!(matches!(e, Error::ShowUsage(Some(line)) if line == "demo: invalid option -- 'q'"));
    }
}
