//! `tview`'s command line → [`TviewOptions`] (samtools 1.24 `bam_tview_main` in
//! `bam_tview.c`); the text and HTML screens are [`crate::pipeline::tview`]. The interactive
//! (curses) screen is not built in: it goes to a real samtools when there is one.

use super::c_number::{atoi, strtol};
use super::delegate;
use super::global::Globals;
use super::options::OptionTable;
use crate::error::Error;
use crate::pipeline::tview::TviewOptions;

pub const USAGE: &str = include_str!("usage/tview.txt");

pub const OPTIONS: OptionTable = OptionTable {
    command: "tview",
    short: "s:p:d:Xw:i",
    long: &[],
    // SAM_OPT_GLOBAL_OPTIONS('-', 0, '-', '-', 0, '-').
    globals: Some(Globals::INPUT_OPTIONS_ONLY),
    globals_first: true,
    unlisted: &["--write-index"],
};

/// samtools' `error(NULL)`: the usage on stderr, `exit(-1)`.
fn usage_exit() -> Error {
    eprint!("{USAGE}");
    Error::Status(255)
}

/// samtools' `error(fmt, ...)`: the line, `exit(-1)`.
fn error_exit(line: &str) -> Error {
    eprint!("{line}");
    Error::Status(255)
}

/// What the command line asks for.
pub enum Request {
    Draw(TviewOptions),
    /// The curses screen (no `-d`, or `-d C`).
    Interactive,
}

/// Parses `tview` arguments; `columns` is the `COLUMNS` variable (the text and HTML width
/// unless `-w` is given).
pub fn parse(args: &[String], columns: Option<&str>) -> Result<Request, Error> {
    let (opts, positionals) = match OPTIONS.parse(args) {
        Ok(parsed) => parsed,
        Err(super::getopt::GetoptError::Refused { .. }) => return Err(usage_exit()),
        Err(e) => {
            eprintln!("tview: {e}");
            return Err(usage_exit());
        }
    };
    let (mut display, mut width, mut has_index) = (b'C', 0i64, false);
    let mut o = TviewOptions {
        input: String::new(),
        index: None,
        reference: None,
        position: None,
        sample: None,
        width: 80,
        html: false,
        show_inserts: true,
        filter: None,
    };
    let mut global_reference = None;
    // `--input-fmt-option reference=`: the CRAM input's FASTA, unless one is named otherwise.
    let mut fmt_reference = None;
    for opt in opts {
        let v = opt.value.unwrap_or_default();
        match opt.key.as_str() {
            "w" => {
                let read = strtol(&v, 10);
                // An `int` in samtools.
                width = i64::from(read.value as i32);
                if read.used == 0 || read.used != v.len() || width < 1 {
                    return Err(error_exit(&format!("Could not parse: -w {v}\n")));
                }
            }
            "s" => o.sample = Some(v),
            "p" => o.position = Some(v),
            "X" => has_index = true,
            "i" => o.show_inserts = false,
            "d" => {
                display = match v.bytes().next() {
                    Some(b'H' | b'h') => b'H',
                    Some(b'T' | b't') => b'T',
                    _ => b'C',
                }
            }
            "reference" => global_reference = Some(v),
            "input-fmt-option" => {
                match super::global::parse_input_fmt_option(&v, &mut fmt_reference) {
                    Ok(filter) => o.filter = filter.or(o.filter),
                    // samtools' `error(NULL)` after htslib's line: status 255, not 1.
                    Err(Error::ShowUsage(line)) => {
                        if let Some(line) = line {
                            eprintln!("{line}");
                        }
                        return Err(usage_exit());
                    }
                    Err(e) => return Err(e),
                }
            }
            _ => {}
        }
    }
    if positionals.is_empty() {
        return Err(usage_exit());
    }
    if width != 0 && display == b'C' {
        return Err(error_exit("The -w option is currently supported only with -d T and -d H\n"));
    }
    if display == b'C' {
        return Ok(Request::Interactive);
    }
    let mut rest = positionals.into_iter();
    o.input = rest.next().unwrap_or_default();
    if has_index {
        let Some(index) = rest.next() else {
            eprintln!("Incorrect number of arguments provided! Aborting...");
            return Err(Error::Failed);
        };
        // samtools opens the index argument as the alignments too (`argv[ref_index]`), so
        // `-X` only ever reads a file that is both; kept, for the same messages.
        o.input = index.clone();
        o.index = Some(index);
    }
    o.reference = rest.next().or(global_reference).or(fmt_reference);
    o.html = display == b'H';
    // `html_tv_init`: COLUMNS when set (under 10 means 80), then `-w`.
    if let Some(c) = columns {
        o.width = i64::from(atoi(c));
        if o.width < 10 {
            o.width = 80;
        }
    }
    if width != 0 {
        o.width = width;
    }
    Ok(Request::Draw(o))
}

/// Runs `samtools tview`.
pub fn run(inv: &super::Invocation, args: &[String]) -> Result<(), Error> {
    let columns = std::env::var("COLUMNS").ok();
    match parse(args, columns.as_deref())? {
        Request::Draw(o) => crate::pipeline::tview::run(&o),
        Request::Interactive => {
            if let delegate::Target::Samtools { .. } = delegate::target() {
                let mut argv = vec![inv.argv0.clone(), inv.command.clone()];
                argv.extend(args.iter().cloned());
                return Err(Error::Status(delegate::run(&argv, "tview")));
            }
            Err(Error::Bare(
                "samtools tview: the interactive screen needs a samtools to run it (none found); use -d T (text) or -d H (HTML)"
                    .into(),
            ))
        }
    }
}
