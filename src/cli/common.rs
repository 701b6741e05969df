//! The options most commands share, taken in one place: `-@`/`--threads`, `--no-PG`,
//! `--write-index`, `--reference` and `--input-fmt-option` (CRAM's reference), and
//! `--verbosity`, accepted and ignored (mdsam has no log levels).

use super::{Invocation, global};
use crate::error::Error;
use crate::pipeline::threads::Threads;

#[derive(Default)]
pub struct CommonOptions {
    /// `-@`.
    pub threads: Threads,
    pub no_pg: bool,
    pub write_index: bool,
    /// `--reference`, `--input-fmt-option reference=`: the FASTA CRAM inputs are decoded
    /// against and CRAM outputs encoded against.
    pub reference: Option<String>,
}

impl CommonOptions {
    /// Takes the option `key` if it is a shared one; `false` leaves it to the command.
    pub fn take(&mut self, key: &str, value: Option<&str>) -> Result<bool, Error> {
        match key {
            "@" => self.threads = global::parse_threads(value.unwrap_or(""))?,
            "no-PG" => self.no_pg = true,
            "write-index" => self.write_index = true,
            "reference" => self.reference = Some(value.unwrap_or("").to_string()),
            "input-fmt-option" => {
                global::parse_input_fmt_option(value.unwrap_or(""), &mut self.reference)?;
            }
            "verbosity" => global::check_verbosity(value.unwrap_or(""))?,
            _ => return Ok(false),
        }
        Ok(true)
    }

    /// The `@PG` fields to add, unless `--no-PG`.
    pub fn pg(&self, inv: &Invocation, args: &[String]) -> Option<Vec<(String, String)>> {
        (!self.no_pg).then(|| inv.pg_fields(args))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shared_options_are_taken_and_others_left() {
        let mut c = CommonOptions::default();
        assert!(c.take("@", Some("3")).unwrap());
        assert!(c.take("no-PG", None).unwrap());
        assert!(c.take("verbosity", Some("8")).unwrap());
        assert!(!c.take("l", Some("1")).unwrap());
        assert!(c.take("@", Some("x")).is_err());
        assert_eq!((c.threads.extra(), c.no_pg, c.write_index), (3, true, false));
    }
}
