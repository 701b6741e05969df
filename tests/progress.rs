//! The progress bar on a real terminal (a detached tmux session whose pane is captured) and its
//! absence when stderr is not a terminal or `--no-progress` is given.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use mdsam::simulate::SimulateOptions;

use crate::support::{mdsam_bin, program_on_path, scratch_dir, simulated_sam};

/// A detached tmux session running one shell command in a 160×20 pane, on a tmux server of its
/// own (socket `-L name`): tests run in parallel, and two `new-session` calls racing to start one
/// shared server can fail with "server exited unexpectedly". The server is killed when dropped.
struct Terminal {
    tmux: PathBuf,
    name: String,
}

impl Terminal {
    fn start(tmux: &Path, name: &str, command: &str) -> Terminal {
        let terminal =
            Terminal { tmux: tmux.to_path_buf(), name: format!("{name}-{}", std::process::id()) };
        let mut last = String::new();
        // A server can still fail to come up on a loaded host; a second try on the same socket
        // tells that apart from a tmux that cannot run at all.
        for _ in 0..3 {
            let out = terminal
                .tmux()
                .args(["-f", "/dev/null", "new-session", "-d", "-s", &terminal.name])
                .args(["-x", "160", "-y", "20", command])
                .env_remove("TMUX")
                .output()
                .expect("tmux runs");
            if out.status.success() {
                return terminal;
            }
            last = String::from_utf8_lossy(&out.stderr).into_owned();
            std::thread::sleep(Duration::from_millis(500));
        }
        panic!("tmux new-session failed: {last}");
    }

    /// A tmux command addressed to this terminal's own server.
    fn tmux(&self) -> Command {
        let mut command = Command::new(&self.tmux);
        command.args(["-L", &self.name]);
        command
    }

    fn screen(&self) -> String {
        let out = self
            .tmux()
            .args(["capture-pane", "-p", "-t", &self.name])
            .output()
            .expect("tmux capture-pane runs");
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// The screen once it contains `text`; panics with the screen after `timeout`.
    fn wait_for(&self, text: &str, timeout: Duration) -> String {
        let start = Instant::now();
        loop {
            let screen = self.screen();
            if screen.contains(text) {
                return screen;
            }
            assert!(start.elapsed() < timeout, "no {text:?} on the terminal; it shows:\n{screen}");
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

impl Drop for Terminal {
    fn drop(&mut self) {
        let _ = self.tmux().arg("kill-server").status();
    }
}

fn shell_command(args: &[&str], count_file: &Path) -> String {
    format!(
        "{} {} > {}; echo EXIT=$?; sleep 120",
        mdsam_bin().display(),
        args.join(" "),
        count_file.display()
    )
}

/// Opens the FIFO for writing (which waits for the reader) on a thread, giving up after 20 s so
/// a reader that never came fails the test instead of hanging it.
fn open_fifo_writer(path: &Path) -> std::fs::File {
    let (tx, rx) = std::sync::mpsc::channel();
    let path = path.to_path_buf();
    std::thread::spawn(move || {
        let _ = tx.send(std::fs::OpenOptions::new().write(true).open(path));
    });
    rx.recv_timeout(Duration::from_secs(20))
        .expect("mdsam opened the FIFO")
        .expect("FIFO opens for writing")
}

/// mdsam reads half an input from a pipe and waits for the rest: the bar must be on the screen
/// then, with bytes, rate and records; at the end it stays as a summary above the count.
#[test]
fn bar_is_drawn_while_reading_from_a_pipe() {
    let Some(tmux) = program_on_path("tmux", "-V") else { return };
    let dir = scratch_dir("progress_pipe");
    let input = simulated_sam(&dir, &SimulateOptions { pairs: 20_000, ..Default::default() });
    let data = std::fs::read(&input).unwrap();
    let fifo = dir.join("input.fifo");
    assert!(Command::new("mkfifo").arg(&fifo).status().unwrap().success());
    let count = dir.join("count.txt");
    let fifo_arg = fifo.to_str().unwrap();
    let terminal = Terminal::start(
        &tmux,
        "mdsam-progress-pipe",
        &shell_command(&["view", "-c", fifo_arg], &count),
    );

    let mut writer = open_fifo_writer(&fifo);
    let half = data.len() / 2;
    writer.write_all(&data[..half]).unwrap();
    writer.flush().unwrap();
    let during = terminal.wait_for(" records (", Duration::from_secs(20));
    assert!(during.contains("view ["), "the bar names the command:\n{during}");
    assert!(during.contains("MiB"), "the bar shows bytes read:\n{during}");
    assert!(during.contains("B/s)"), "the bar shows the rate:\n{during}");
    assert!(!during.contains("EXIT="), "mdsam waits for the rest of the input:\n{during}");

    writer.write_all(&data[half..]).unwrap();
    drop(writer);
    let after = terminal.wait_for("EXIT=", Duration::from_secs(30));
    assert!(after.contains("EXIT=0"), "{after}");
    let records = std::fs::read_to_string(&count).unwrap().trim().parse::<u64>().unwrap();
    assert!(records > 0);
    let total = format!("{} records", with_commas(records));
    assert!(after.contains(&total), "the summary counts every record ({total}):\n{after}");
}

/// A reader warning met while the bar runs ends the bar, so the warning is printed whole on a
/// line of its own instead of being drawn over.
#[test]
fn warnings_are_not_drawn_over() {
    let Some(tmux) = program_on_path("tmux", "-V") else { return };
    let dir = scratch_dir("progress_warning");
    let input = simulated_sam(&dir, &SimulateOptions { pairs: 20_000, ..Default::default() });
    let data = std::fs::read(&input).unwrap();
    let fifo = dir.join("input.fifo");
    assert!(Command::new("mkfifo").arg(&fifo).status().unwrap().success());
    let count = dir.join("count.txt");
    let terminal = Terminal::start(
        &tmux,
        "mdsam-progress-warning",
        &shell_command(&["view", "-c", fifo.to_str().unwrap()], &count),
    );
    let mut writer = open_fifo_writer(&fifo);
    let half = data.len() / 2;
    let cut = half + data[half..].iter().position(|&b| b == b'\n').unwrap() + 1;
    writer.write_all(&data[..cut]).unwrap();
    writer.flush().unwrap();
    terminal.wait_for(" records (", Duration::from_secs(20));
    writer.write_all(b"stray\t0\tchrNowhere\t100\t60\t4M\t*\t0\t0\tACGT\tIIII\n").unwrap();
    writer.write_all(&data[cut..]).unwrap();
    drop(writer);
    let screen = terminal.wait_for("EXIT=", Duration::from_secs(30));
    let warning = "[W::sam_parse1] unrecognized reference name \"chrNowhere\"; treated as unmapped";
    assert!(screen.lines().any(|l| l.trim_end() == warning), "warning not whole:\n{screen}");
    assert!(screen.contains("EXIT=0"), "{screen}");
}

/// For a file the size is known: the bar shows a total and an ETA. `--no-progress` draws none.
#[test]
fn bar_shows_total_and_eta_for_a_file_unless_turned_off() {
    let Some(tmux) = program_on_path("tmux", "-V") else { return };
    let dir = scratch_dir("progress_file");
    let input = simulated_sam(&dir, &SimulateOptions { pairs: 5_000, ..Default::default() });
    let input = input.to_str().unwrap();

    let count = dir.join("count.txt");
    let terminal = Terminal::start(
        &tmux,
        "mdsam-progress-file",
        &shell_command(&["view", "-c", input], &count),
    );
    let screen = terminal.wait_for("EXIT=", Duration::from_secs(30));
    assert!(screen.contains("EXIT=0"), "{screen}");
    assert!(screen.contains("ETA"), "a file's bar has an ETA:\n{screen}");
    let size = std::fs::metadata(input).unwrap().len() as f64 / (1 << 20) as f64;
    let total = format!("/{size:.2} MiB");
    assert!(screen.contains(&total), "the bar shows the file size {total}:\n{screen}");
    drop(terminal);

    let quiet = Terminal::start(
        &tmux,
        "mdsam-progress-off",
        &shell_command(&["view", "--no-progress", "-c", input], &count),
    );
    let screen = quiet.wait_for("EXIT=", Duration::from_secs(30));
    assert!(screen.contains("EXIT=0"), "{screen}");
    assert!(!screen.contains("ETA") && !screen.contains("records"), "no bar:\n{screen}");
    assert!(std::fs::read_to_string(&count).unwrap().trim().parse::<u64>().unwrap() > 0);
}

/// stderr redirected to a file (not a terminal): a successful run writes nothing there, as
/// samtools does, so scripts reading samtools' stderr see no difference.
#[test]
fn redirected_stderr_gets_nothing() {
    let dir = scratch_dir("progress_redirected");
    let input = simulated_sam(&dir, &SimulateOptions { pairs: 5_000, ..Default::default() });
    let input = input.to_str().unwrap();
    let out = |name: &str| dir.join(name).to_str().unwrap().to_string();
    let runs: [Vec<String>; 4] = [
        vec!["view".into(), "-c".into(), input.into()],
        vec!["sort".into(), "-o".into(), out("sorted.bam"), input.into()],
        vec!["markdup-pipeline".into(), input.into(), out("md.bam")],
        vec![
            "view".into(),
            "--no-progress".into(),
            "-b".into(),
            "-o".into(),
            out("v.bam"),
            input.into(),
        ],
    ];
    for args in runs {
        let log = dir.join("stderr.txt");
        let status = Command::new(mdsam_bin())
            .args(&args)
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&log).unwrap())
            .status()
            .unwrap();
        assert!(status.success(), "mdsam {args:?} failed");
        let stderr = std::fs::read(&log).unwrap();
        assert!(
            stderr.is_empty(),
            "mdsam {args:?} wrote to stderr: {}",
            String::from_utf8_lossy(&stderr)
        );
    }
}

fn with_commas(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}
