//! Inputs named by URL (issue 40): `http://`, `s3+http://` and `gs://` read from real servers
//! started here on 127.0.0.1 (Debian's nginx, moto's S3 server), and failures injected by
//! `tests/support/fault_proxy.py`. Every output is compared with the same command on the local
//! file, and with the samtools 1.24 oracle where it reads the URL. Each test skips (with a
//! message) when its server software is absent, and fails under `CI=true`, whose `.ci/run`
//! installs it.

use std::io::{BufRead, BufReader};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use crate::support::{self, mdsam_bin, scratch_dir, simulated_sam};
use mdsam::simulate::{Order, SimulateOptions};

/// A server this test started; stopped (by its own process id) when dropped.
struct Server {
    child: Child,
    port: u16,
}

impl Drop for Server {
    /// SIGTERM, not SIGKILL: nginx's master then stops its workers too.
    fn drop(&mut self) {
        let pid = self.child.id().to_string();
        let stopped =
            Command::new("kill").args(["-TERM", &pid]).status().is_ok_and(|s| s.success());
        if !stopped {
            let _ = self.child.kill();
        }
        let _ = self.child.wait();
    }
}

fn absent(what: &str) -> Option<Server> {
    if std::env::var("CI").is_ok_and(|v| v == "true") {
        panic!("{what}; under CI=true this is a failure (.ci/run installs it)");
    }
    eprintln!("skipping: {what}");
    None
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// Waits until something accepts connections on `port` (at most 20 s).
fn wait_for(port: u16, child: &mut Child) -> bool {
    let start = Instant::now();
    while start.elapsed() < Duration::from_secs(20) {
        if TcpStream::connect(("127.0.0.1", port)).is_ok() {
            return true;
        }
        if child.try_wait().ok().flatten().is_some() {
            return false;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    false
}

fn find_program(name: &str, also: &[&str]) -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .map(|d| d.join(name))
        .chain(also.iter().map(PathBuf::from))
        .find(|p| p.is_file())
}

/// nginx serving `root` (range requests are nginx's own), with `/forbidden/` answering 403.
fn nginx(root: &Path, scratch: &Path) -> Option<Server> {
    nginx_serving(root, scratch, None)
}

/// A CA and a certificate for 127.0.0.1 it signed, made with openssl in `dir`.
struct Certificates {
    ca: PathBuf,
    cert: PathBuf,
    key: PathBuf,
}

fn certificates(dir: &Path) -> Option<Certificates> {
    if find_program("openssl", &["/usr/bin/openssl"]).is_none() {
        absent("openssl not found (apt-get install openssl)")?;
    }
    let at = |name: &str| dir.join(name).to_str().unwrap().to_string();
    let (ca_key, ca, key, csr, ext, cert) = (
        at("ca.key"),
        at("ca.pem"),
        at("leaf.key"),
        at("leaf.csr"),
        at("leaf.ext"),
        at("leaf.pem"),
    );
    std::fs::write(&ext, "subjectAltName=IP:127.0.0.1\nbasicConstraints=CA:FALSE\n").unwrap();
    let new_key = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"];
    let openssl = |args: &[&str]| {
        let out = Command::new("openssl").args(args).output().expect("run openssl");
        assert!(out.status.success(), "openssl {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    };
    let subject = ["-days", "2", "-subj", "/CN=mdsam test CA", "-keyout", &ca_key, "-out", &ca];
    openssl(&[&["req", "-x509"][..], &new_key, &subject].concat());
    openssl(
        &[&["req", "-subj", "/CN=127.0.0.1", "-keyout", &key, "-out", &csr][..], &new_key].concat(),
    );
    openssl(&[
        "x509",
        "-req",
        "-days",
        "2",
        "-set_serial",
        "7",
        "-in",
        &csr,
        "-CA",
        &ca,
        "-CAkey",
        &ca_key,
        "-extfile",
        &ext,
        "-out",
        &cert,
    ]);
    Some(Certificates {
        ca: dir.join("ca.pem"),
        cert: dir.join("leaf.pem"),
        key: dir.join("leaf.key"),
    })
}

/// [`nginx`], over TLS with `tls`'s certificate when given.
fn nginx_serving(root: &Path, scratch: &Path, tls: Option<&Certificates>) -> Option<Server> {
    let Some(bin) = find_program("nginx", &["/usr/sbin/nginx"]) else {
        return absent("nginx not found (apt-get install nginx-light)");
    };
    let port = free_port();
    let run = scratch.join("nginx");
    std::fs::create_dir_all(&run).unwrap();
    let root_user = Command::new("id").arg("-u").output().is_ok_and(|o| o.stdout == b"0\n");
    let conf = format!(
        "{user}daemon off;\nworker_processes 1;\npid {run}/nginx.pid;\nerror_log {run}/error.log;\n\
         events {{ worker_connections 256; }}\n\
         http {{\n log_format conn '$connection $status $http_range';\n\
         access_log {run}/access.log conn;\n client_body_temp_path {run}/body;\n proxy_temp_path {run}/proxy;\n\
         fastcgi_temp_path {run}/fastcgi;\n uwsgi_temp_path {run}/uwsgi;\n scgi_temp_path {run}/scgi;\n\
         server {{\n  listen 127.0.0.1:{port}{ssl};\n  root {root};\n  location /forbidden/ {{ return 403; }}\n }}\n}}\n",
        user = if root_user { "user root;\n" } else { "" },
        ssl = tls.map_or(String::new(), |t| format!(
            " ssl;\n  ssl_certificate {};\n  ssl_certificate_key {}",
            t.cert.display(),
            t.key.display()
        )),
        run = run.display(),
        root = root.display(),
    );
    std::fs::write(run.join("nginx.conf"), conf).unwrap();
    let mut child = Command::new(bin)
        .args(["-p", run.to_str().unwrap(), "-c", run.join("nginx.conf").to_str().unwrap()])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start nginx");
    assert!(wait_for(port, &mut child), "nginx did not start: {}", run.display());
    Some(Server { child, port })
}

/// moto's S3 server (`pip install 'moto[server]'`).
fn moto() -> Option<Server> {
    let Some(bin) = find_program("moto_server", &[]) else {
        return absent("moto_server not found (pip install 'moto[server]')");
    };
    let port = free_port();
    let mut child = Command::new(bin)
        .args(["-H", "127.0.0.1", "-p", &port.to_string()])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start moto_server");
    assert!(wait_for(port, &mut child), "moto_server did not start");
    Some(Server { child, port })
}

/// The fault-injecting proxy in front of `upstream`, misbehaving as `mode` says.
fn fault_proxy(upstream: u16, mode: &str) -> Server {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/support/fault_proxy.py");
    let mut child = Command::new("python3")
        .arg(script)
        .args(["--upstream", &format!("127.0.0.1:{upstream}"), "--mode", mode, "--lifetime", "120"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("start fault_proxy.py");
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap()).read_line(&mut line).unwrap();
    let port = line.trim().parse().expect("proxy port");
    Server { child, port }
}

/// A coordinate-sorted, indexed BAM of `pairs` simulated pairs in `dir/data/x.bam`.
fn indexed_bam(dir: &Path, pairs: u64) -> PathBuf {
    let opts = SimulateOptions {
        pairs,
        order: Order::Coordinate,
        n_refs: 3,
        ref_len: 200_000,
        ..Default::default()
    };
    let sam = simulated_sam(dir, &opts);
    let data = dir.join("data");
    std::fs::create_dir_all(&data).unwrap();
    let bam = data.join("x.bam");
    support::run_ok(
        &mdsam_bin(),
        &["view", "-b", "-o", bam.to_str().unwrap(), sam.to_str().unwrap()],
    );
    support::run_ok(&mdsam_bin(), &["index", bam.to_str().unwrap()]);
    bam
}

/// Runs mdsam in an empty directory of its own: the copy of a remote index that it keeps in the
/// current directory (as htslib does) never carries over from one run or test to another.
fn mdsam(args: &[&str], env: &[(&str, &str)]) -> Output {
    static RUNS: AtomicUsize = AtomicUsize::new(0);
    let n = RUNS.fetch_add(1, Ordering::Relaxed);
    let cwd = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("remote-runs")
        .join(format!("{}-{n}", std::process::id()));
    std::fs::create_dir_all(&cwd).unwrap();
    let out = mdsam_in(&cwd, args, env);
    let _ = std::fs::remove_dir_all(&cwd);
    out
}

fn mdsam_in(cwd: &Path, args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut cmd = Command::new(mdsam_bin());
    cmd.args(args).current_dir(cwd);
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.output().expect("run mdsam")
}

fn stdout_ok(out: &Output, what: &str) -> Vec<u8> {
    assert!(out.status.success(), "{what}: {}", String::from_utf8_lossy(&out.stderr));
    out.stdout.clone()
}

/// The commands (`IN`: the input) whose output must be the same on the URL as on the local
/// file (with the URL named where the local file was).
const SAME_AS_LOCAL: [&[&str]; 9] = [
    &["view", "-@", "2", "IN", "chr3:5000-90000"],
    &["view", "-h", "IN"],
    &["view", "-c", "IN"],
    &["flagstat", "IN"],
    &["idxstats", "IN"],
    &["head", "-n", "3", "IN"],
    &["quickcheck", "-vvv", "IN"],
    &["view", "IN", "chr1:10000-20000", "chr2:150000-150500", "chr3:1-100"],
    &["view", "-M", "IN", "chr1:10000-20000", "chr1:15000-30000", "*"],
];

fn with_input<'a>(args: &[&'a str], input: &'a str) -> Vec<&'a str> {
    args.iter().map(|&a| if a == "IN" { input } else { a }).collect()
}

fn assert_same_as_local(url: &str, local: &str, env: &[(&str, &str)]) {
    for args in SAME_AS_LOCAL {
        let context = format!("{:?}", with_input(args, url));
        // quickcheck reports on stderr; the others must print the same there too (nothing).
        let both = |out: Output| [stdout_ok(&out, &context), out.stderr].concat();
        let remote = both(mdsam(&with_input(args, url), env));
        let local_out = both(mdsam(&with_input(args, local), &[]));
        let remote = String::from_utf8_lossy(&remote).replace(url, local);
        assert!(!local_out.is_empty(), "{context}: no output");
        assert_eq!(
            support::sam_without_pg(remote.as_bytes()),
            support::sam_without_pg(&local_out),
            "{context}: output differs from the local file's"
        );
    }
}

/// `read` phase's bytes from a `--profile` file: what was fetched.
fn bytes_fetched(profile: &Path) -> f64 {
    let text = std::fs::read_to_string(profile).expect("profile written");
    let json: serde_json::Value = serde_json::from_str(&text).unwrap();
    json["phases"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| p["name"] == "read")
        .map(|p| p["bytes_read"].as_f64().unwrap())
        .sum()
}

/// Every reading command gives the local file's output on an http:// URL, and the oracle's
/// where it reads the URL; a region query fetches a small part of the file (`--profile`).
#[test]
fn http_inputs_read_as_the_local_file() {
    let dir = scratch_dir("remote_http_inputs");
    let bam = indexed_bam(&dir, 20_000);
    let Some(server) = nginx(&dir.join("data"), &dir) else { return };
    let url = format!("http://127.0.0.1:{}/x.bam", server.port);
    let local = bam.to_str().unwrap();
    assert_same_as_local(&url, local, &[]);
    // Small ranges and windows: the read-ahead's ordering over many ranges.
    let small = [("MDSAM_REMOTE_CHUNK", "65536"), ("MDSAM_REMOTE_PARALLEL", "3")];
    let whole = stdout_ok(&mdsam(&["view", &url], &small), "view, small ranges");
    assert_eq!(whole, stdout_ok(&mdsam(&["view", local], &[]), "view local"));

    let size = std::fs::metadata(&bam).unwrap().len() as f64;
    let profile = dir.join("region.json");
    let region = ["view", "-c", "--profile", profile.to_str().unwrap(), &url, "chr2:100000-101000"];
    let count = stdout_ok(&mdsam(&region, &[]), "region count");
    let local_count = stdout_ok(&mdsam(&["view", "-c", local, "chr2:100000-101000"], &[]), "local");
    assert_eq!(count, local_count);
    assert_ne!(count, b"0\n", "the region holds reads");
    let fetched = bytes_fetched(&profile);
    eprintln!("region query fetched {fetched} of {size} bytes");
    assert!(fetched > 0.0 && fetched < size / 4.0, "fetched {fetched} of {size} bytes");

    if let Some(oracle) = support::oracle() {
        // In the scratch directory: htslib keeps a copy of a remote index in the current one.
        let theirs = Command::new(&oracle)
            .args(["view", &url, "chr1:10000-20000"])
            .current_dir(&dir)
            .output()
            .expect("run the oracle");
        if theirs.status.success() {
            let ours = stdout_ok(&mdsam(&["view", &url, "chr1:10000-20000"], &[]), "view region");
            assert_eq!(ours, theirs.stdout, "samtools 1.24 on the same URL");
        } else {
            eprintln!(
                "the oracle does not read http URLs here: {}",
                String::from_utf8_lossy(&theirs.stderr)
            );
        }
    }
}

/// A server that ignores `Range` (the proxy drops it; nginx then answers 200 with the whole
/// file) is read front to back, as samtools' libcurl reader reads it, where mdsam used to stop
/// at the first request; a region query, which needs ranges, fails with one line naming the URL.
#[test]
fn servers_that_ignore_ranges_are_read_front_to_back() {
    let dir = scratch_dir("remote_no_range");
    let bam = indexed_bam(&dir, 20_000);
    let Some(server) = nginx(&dir.join("data"), &dir) else { return };
    let proxy = fault_proxy(server.port, "no-range");
    let url = format!("http://127.0.0.1:{}/x.bam", proxy.port);
    let local = bam.to_str().unwrap();
    assert!(std::fs::metadata(&bam).unwrap().len() > 1 << 20, "larger than the first request");
    for args in [&["view", "IN"][..], &["view", "-c", "IN"], &["flagstat", "IN"]] {
        let ours = stdout_ok(&mdsam(&with_input(args, &url), &[]), &format!("{args:?} no-range"));
        let theirs = stdout_ok(&mdsam(&with_input(args, local), &[]), &format!("{args:?} local"));
        assert_eq!(ours, theirs, "{args:?}");
    }
    let region = mdsam(&["view", "-c", &url, "chr2:100000-101000"], &[]);
    let stderr = String::from_utf8_lossy(&region.stderr);
    assert_eq!(region.status.code(), Some(1), "{stderr}");
    assert_eq!(stderr.trim_end().lines().count(), 1, "one line: {stderr}");
    assert!(stderr.contains(&url) && stderr.contains("ignores range requests"), "{stderr}");
}

/// https:// against nginx over TLS: the server's certificate is checked against the CA that
/// `CURL_CA_BUNDLE` names, as libcurl (htslib) checks it; without the bundle (Mozilla's roots)
/// the unknown CA is refused with one line naming the URL.
#[test]
fn https_inputs_are_checked_against_the_ca_bundle() {
    let dir = scratch_dir("remote_https");
    let bam = indexed_bam(&dir, 20_000);
    let Some(tls) = certificates(&dir) else { return };
    let Some(server) = nginx_serving(&dir.join("data"), &dir, Some(&tls)) else { return };
    let url = format!("https://127.0.0.1:{}/x.bam", server.port);
    let local = bam.to_str().unwrap();
    let bundle = [("CURL_CA_BUNDLE", tls.ca.to_str().unwrap())];
    for args in [&["view", "IN"][..], &["view", "-c", "IN", "chr2:100000-101000"]] {
        let ours = stdout_ok(&mdsam(&with_input(args, &url), &bundle), &format!("{args:?} https"));
        let theirs = stdout_ok(&mdsam(&with_input(args, local), &[]), &format!("{args:?} local"));
        assert_eq!(ours, theirs, "{args:?}");
    }
    let refused = mdsam(&["view", "-c", &url], &[]);
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert_eq!(refused.status.code(), Some(1), "{stderr}");
    assert_eq!(stderr.trim_end().lines().count(), 1, "one line: {stderr}");
    assert!(stderr.contains(&url), "{stderr}");
}

/// `DATA##idx##INDEX` and `-X` name an index that is not beside the URL.
#[test]
fn http_index_named_apart() {
    let dir = scratch_dir("remote_http_index_apart");
    let bam = indexed_bam(&dir, 2_000);
    let data = dir.join("data");
    std::fs::rename(data.join("x.bam.bai"), data.join("elsewhere.bai")).unwrap();
    let Some(server) = nginx(&data, &dir) else { return };
    let base = format!("http://127.0.0.1:{}", server.port);
    let local = bam.to_str().unwrap();
    let local_index = data.join("elsewhere.bai");
    let expected = stdout_ok(
        &mdsam(&["view", "-X", local, local_index.to_str().unwrap(), "chr1:1000-5000"], &[]),
        "local -X",
    );
    let joined = format!("{base}/x.bam##idx##{base}/elsewhere.bai");
    let ours = stdout_ok(&mdsam(&["view", &joined, "chr1:1000-5000"], &[]), "##idx##");
    assert_eq!(ours, expected);
    let url = format!("{base}/x.bam");
    let index = format!("{base}/elsewhere.bai");
    let ours = stdout_ok(&mdsam(&["view", "-X", &url, &index, "chr1:1000-5000"], &[]), "-X");
    assert_eq!(ours, expected);
    let missing = mdsam(&["view", &url, "chr1:1000-5000"], &[]);
    assert_eq!(missing.status.code(), Some(1), "no index beside the URL");
}

/// A URL's index is copied into the current directory and read from there by the next run,
/// as htslib does (samtools 1.24 leaves the same file); a directory that cannot take the copy
/// still gets the query answered, where htslib fails it.
#[test]
fn remote_index_is_kept_in_the_working_directory() {
    let dir = scratch_dir("remote_index_copy");
    let bam = indexed_bam(&dir, 2_000);
    let data = dir.join("data");
    let Some(server) = nginx(&data, &dir) else { return };
    let url = format!("http://127.0.0.1:{}/x.bam", server.port);
    let region = "chr2:1000-50000";
    let expected = stdout_ok(&mdsam(&["view", bam.to_str().unwrap(), region], &[]), "local");
    assert!(!expected.is_empty(), "the region holds reads");
    let work = dir.join("work");
    std::fs::create_dir_all(&work).unwrap();
    let first = stdout_ok(&mdsam_in(&work, &["view", &url, region], &[]), "first query");
    assert_eq!(first, expected);
    let index = std::fs::read(data.join("x.bam.bai")).unwrap();
    assert_eq!(std::fs::read(work.join("x.bam.bai")).ok(), Some(index.clone()), "copy kept");
    let leftovers: Vec<_> = std::fs::read_dir(&work).unwrap().flatten().collect();
    assert_eq!(leftovers.len(), 1, "only the copy: {leftovers:?}");
    if let Some(oracle) = support::oracle() {
        let theirs = dir.join("theirs");
        std::fs::create_dir_all(&theirs).unwrap();
        let out = Command::new(&oracle)
            .args(["view", &url, region])
            .current_dir(&theirs)
            .output()
            .expect("run the oracle");
        if out.status.success() {
            assert_eq!(out.stdout, expected, "samtools 1.24 on the URL");
            assert_eq!(std::fs::read(theirs.join("x.bam.bai")).ok(), Some(index), "htslib's copy");
        }
    }
    // Without the server's index, the copy answers; elsewhere the query has no index.
    std::fs::remove_file(data.join("x.bam.bai")).unwrap();
    let again = stdout_ok(&mdsam_in(&work, &["view", &url, region], &[]), "from the copy");
    assert_eq!(again, expected);
    assert_eq!(mdsam(&["view", &url, region], &[]).status.code(), Some(1), "no index anywhere");
    std::fs::write(data.join("x.bam.bai"), std::fs::read(work.join("x.bam.bai")).unwrap()).unwrap();
    // /proc takes no new file, not even from root.
    let unwritable =
        stdout_ok(&mdsam_in(Path::new("/proc"), &["view", &url, region], &[]), "/proc");
    assert_eq!(unwritable, expected);
}

/// A region query reads each body to its end, so its connections go back to the pool: the
/// request for the region's bytes goes on a connection an earlier request opened (on a real
/// link a new one costs a round trip more, two for https).
#[test]
fn a_query_reuses_its_connections() {
    let dir = scratch_dir("remote_reuse");
    let bam = indexed_bam(&dir, 2_000);
    let Some(server) = nginx(&dir.join("data"), &dir) else { return };
    let url = format!("http://127.0.0.1:{}/x.bam", server.port);
    let region = "chr2:1000-50000";
    let expected = stdout_ok(&mdsam(&["view", bam.to_str().unwrap(), region], &[]), "local");
    let log = dir.join("nginx/access.log");
    let work = dir.join("work");
    std::fs::create_dir_all(&work).unwrap();
    // The first query copies the index; the second reads the copy, as a script's later ones do.
    stdout_ok(&mdsam_in(&work, &["view", &url, region], &[]), "first query");
    std::fs::write(&log, b"").unwrap();
    let got = stdout_ok(&mdsam_in(&work, &["view", &url, region], &[]), "second query");
    assert_eq!(got, expected);
    // nginx writes a line once a request is done; the last may trail the client's exit.
    std::thread::sleep(Duration::from_millis(300));
    let lines = std::fs::read_to_string(&log).unwrap();
    let requests: Vec<&str> = lines.lines().collect();
    let connections: std::collections::BTreeSet<&str> =
        requests.iter().filter_map(|l| l.split(' ').next()).collect();
    assert!(requests.len() >= 3, "opening, tail and the region's bytes: {lines}");
    assert!(connections.len() < requests.len(), "a connection reused: {lines}");
}

/// 403, 404, a body cut short every time, a server too slow: one line naming the URL and the
/// cause, exit 1, no output file left; a cut or a 500 that passes is retried and reads whole.
#[test]
fn http_failures_are_clear_and_transient_ones_retried() {
    let dir = scratch_dir("remote_http_failures");
    let bam = indexed_bam(&dir, 2_000);
    let data = dir.join("data");
    std::fs::create_dir_all(data.join("forbidden")).unwrap();
    std::fs::copy(&bam, data.join("forbidden/x.bam")).unwrap();
    let Some(server) = nginx(&data, &dir) else { return };
    let local = stdout_ok(&mdsam(&["view", bam.to_str().unwrap()], &[]), "local");
    let fast = [("MDSAM_REMOTE_BACKOFF_MS", "10"), ("MDSAM_REMOTE_RETRIES", "2")];
    let out = dir.join("out.sam");
    let out_path = out.to_str().unwrap();
    let fails = |url: &str, env: &[(&str, &str)], cause: &str| {
        let got = mdsam(&["view", "-o", out_path, url], env);
        let stderr = String::from_utf8_lossy(&got.stderr);
        assert_eq!(got.status.code(), Some(1), "{url}: {stderr}");
        assert_eq!(stderr.trim_end().lines().count(), 1, "one line: {stderr}");
        assert!(stderr.contains(url) && stderr.contains(cause), "{url}, {cause}: {stderr}");
        assert!(!out.exists() || std::fs::read(&out).unwrap().is_empty(), "{url}: output left");
        let _ = std::fs::remove_file(&out);
    };
    let base = format!("http://127.0.0.1:{}", server.port);
    fails(&format!("{base}/nothing.bam"), &fast, "404");
    fails(&format!("{base}/forbidden/x.bam"), &fast, "403");
    // Credentials in a URL appear in no message.
    let secret = format!("http://someone:s3cret@127.0.0.1:{}/nothing.bam", server.port);
    let got = mdsam(&["view", &secret], &fast);
    let stderr = String::from_utf8_lossy(&got.stderr);
    assert_eq!(got.status.code(), Some(1));
    assert!(
        stderr.contains(&format!("{base}/nothing.bam")) && !stderr.contains("s3cret"),
        "{stderr}"
    );

    let cut = fault_proxy(server.port, "drop-always");
    fails(&format!("http://127.0.0.1:{}/x.bam", cut.port), &fast, "after 3 tries");
    let slow = fault_proxy(server.port, "delay:5");
    let short_wait = [("MDSAM_REMOTE_TIMEOUT", "1"), ("MDSAM_REMOTE_RETRIES", "0")];
    fails(&format!("http://127.0.0.1:{}/x.bam", slow.port), &short_wait, "timed out");

    for mode in ["drop-once", "fail-then-ok:2"] {
        let proxy = fault_proxy(server.port, mode);
        let url = format!("http://127.0.0.1:{}/x.bam", proxy.port);
        assert_eq!(stdout_ok(&mdsam(&["view", &url], &fast), mode), local, "{mode}");
    }
}

/// `s3+http://` against moto's S3 server, credentials from the environment and the endpoint
/// from `HTS_S3_HOST` (htslib's) or `AWS_ENDPOINT_URL` (the AWS SDKs'); a profile from a
/// credentials file; a missing key is a clear 404.
#[test]
fn s3_inputs_read_as_the_local_file() {
    let dir = scratch_dir("remote_s3_inputs");
    let bam = indexed_bam(&dir, 5_000);
    let Some(server) = moto() else { return };
    let endpoint = format!("http://127.0.0.1:{}", server.port);
    let agent = ureq::Agent::new_with_defaults();
    agent.put(&format!("{endpoint}/reads")).send_empty().expect("create bucket");
    for (file, key) in [(bam.clone(), "dir/x.bam"), (dir.join("data/x.bam.bai"), "dir/x.bam.bai")] {
        let bytes = std::fs::read(file).unwrap();
        agent.put(&format!("{endpoint}/reads/{key}")).send(&bytes[..]).expect("upload");
    }
    let creds = dir.join("credentials");
    std::fs::write(
        &creds,
        "[other]\naws_access_key_id = testing\naws_secret_access_key = testing\n",
    )
    .unwrap();
    let host = format!("127.0.0.1:{}", server.port);
    let env = [
        ("HTS_S3_HOST", host.as_str()),
        ("AWS_ACCESS_KEY_ID", "testing"),
        ("AWS_SECRET_ACCESS_KEY", "testing"),
        ("AWS_DEFAULT_REGION", "us-east-1"),
    ];
    let local = bam.to_str().unwrap();
    assert_same_as_local("s3+http://reads/dir/x.bam", local, &env);
    let sdk_env = [
        ("AWS_ENDPOINT_URL", endpoint.as_str()),
        ("AWS_SHARED_CREDENTIALS_FILE", creds.to_str().unwrap()),
    ];
    let region = ["view", "s3://other@reads/dir/x.bam", "chr1:1000-9000"];
    let ours = stdout_ok(&mdsam(&region, &sdk_env), "s3 with a profile");
    assert_eq!(ours, stdout_ok(&mdsam(&["view", local, "chr1:1000-9000"], &[]), "local"));
    let missing = mdsam(&["view", "s3+http://reads/dir/none.bam"], &env);
    let stderr = String::from_utf8_lossy(&missing.stderr);
    assert_eq!(missing.status.code(), Some(1));
    assert!(stderr.contains("s3+http://reads/dir/none.bam") && stderr.contains("404"), "{stderr}");
    assert!(!stderr.contains("X-Amz"), "no signature in messages: {stderr}");
}

/// S3 keys from a credentials file that a credential helper rewrites during the run: the store
/// refuses the old keys (`ExpiredToken`, injected by the proxy in front of moto at its 4th
/// request, when it also moves the new file into place), mdsam reads the file again and goes on.
/// Keys from the environment cannot be renewed: that run ends with one clear line.
#[test]
fn s3_keys_rewritten_mid_run_are_read_again() {
    let dir = scratch_dir("remote_s3_key_rotation");
    let bam = indexed_bam(&dir, 5_000);
    let Some(server) = moto() else { return };
    let endpoint = format!("http://127.0.0.1:{}", server.port);
    let agent = ureq::Agent::new_with_defaults();
    agent.put(&format!("{endpoint}/reads")).send_empty().expect("create bucket");
    let bytes = std::fs::read(&bam).unwrap();
    assert!(bytes.len() > 6 * 65_536, "enough 64 KiB ranges to rotate mid-run");
    agent.put(&format!("{endpoint}/reads/x.bam")).send(&bytes[..]).expect("upload");
    let creds = dir.join("credentials");
    let keys =
        |id: &str| format!("[default]\naws_access_key_id = {id}\naws_secret_access_key = s\n");
    let local = stdout_ok(&mdsam(&["view", bam.to_str().unwrap()], &[]), "local");
    let one_range_at_a_time = [("MDSAM_REMOTE_CHUNK", "65536"), ("MDSAM_REMOTE_PARALLEL", "1")];

    std::fs::write(&creds, keys("OLDKEY")).unwrap();
    std::fs::write(dir.join("credentials.next"), keys("NEWKEY")).unwrap();
    let proxy = fault_proxy(server.port, &format!("rotate-keys:4:{}", creds.display()));
    let proxied = format!("http://127.0.0.1:{}", proxy.port);
    let mut env = vec![
        ("AWS_ENDPOINT_URL", proxied.as_str()),
        ("AWS_SHARED_CREDENTIALS_FILE", creds.to_str().unwrap()),
    ];
    env.extend(one_range_at_a_time);
    let out = mdsam(&["view", "s3://reads/x.bam"], &env);
    assert_eq!(stdout_ok(&out, "keys rewritten mid-run"), local);
    assert!(std::fs::read_to_string(&creds).unwrap().contains("NEWKEY"), "the proxy rotated");
    drop(proxy);

    let proxy = fault_proxy(server.port, &format!("rotate-keys:4:{}", creds.display()));
    std::fs::write(dir.join("credentials.next"), keys("NEWKEY")).unwrap();
    let proxied = format!("http://127.0.0.1:{}", proxy.port);
    let mut env = vec![
        ("AWS_ENDPOINT_URL", proxied.as_str()),
        ("AWS_ACCESS_KEY_ID", "ENVKEY"),
        ("AWS_SECRET_ACCESS_KEY", "s"),
        ("MDSAM_REMOTE_BACKOFF_MS", "10"),
    ];
    env.extend(one_range_at_a_time);
    let out =
        mdsam(&["view", "-o", dir.join("out.sam").to_str().unwrap(), "s3://reads/x.bam"], &env);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("s3://reads/x.bam") && stderr.contains("ExpiredToken"), "{stderr}");
    assert_eq!(stderr.trim_end().lines().count(), 1, "one line: {stderr}");
    assert!(!dir.join("out.sam").exists(), "no half-written output");
}

/// `gs://BUCKET/OBJECT` maps to the storage host's `/BUCKET/OBJECT` (here nginx, through
/// `MDSAM_GCS_ENDPOINT`).
#[test]
fn gs_inputs_read_as_the_local_file() {
    let dir = scratch_dir("remote_gs_inputs");
    let bam = indexed_bam(&dir, 2_000);
    let root = dir.join("storage");
    std::fs::create_dir_all(root.join("bucket")).unwrap();
    std::fs::rename(dir.join("data"), root.join("bucket/data")).unwrap();
    let Some(server) = nginx(&root, &dir) else { return };
    let endpoint = format!("http://127.0.0.1:{}", server.port);
    let env = [("MDSAM_GCS_ENDPOINT", endpoint.as_str()), ("GCS_OAUTH_TOKEN", "token")];
    let local = root.join("bucket/data/x.bam");
    let _ = bam;
    let ours =
        stdout_ok(&mdsam(&["view", "gs://bucket/data/x.bam", "chr2:1000-50000"], &env), "gs");
    let theirs = mdsam(&["view", local.to_str().unwrap(), "chr2:1000-50000"], &[]);
    assert_eq!(ours, stdout_ok(&theirs, "local"));
}

/// The bases of each sequence of a FASTA file, by name, upper-cased.
fn fasta_sequences(path: &Path) -> Vec<(String, Vec<u8>)> {
    let text = std::fs::read_to_string(path).unwrap();
    text.split('>')
        .filter(|r| !r.is_empty())
        .map(|r| {
            let (head, body) = r.split_once('\n').unwrap();
            let name = head.split_whitespace().next().unwrap().to_string();
            let bases: Vec<u8> = body.bytes().filter(|b| !b.is_ascii_whitespace()).collect();
            (name, bases.to_ascii_uppercase())
        })
        .collect()
}

/// A CRAM URL: its reference comes from a `REF_PATH` URL template (then found in `REF_CACHE`,
/// which the fetch filled as htslib fills it), its region queries from the `.crai` beside it.
#[test]
fn cram_references_and_index_over_http() {
    let dir = scratch_dir("remote_cram");
    let opts = SimulateOptions {
        pairs: 2_000,
        order: Order::Coordinate,
        n_refs: 2,
        ref_len: 60_000,
        ..Default::default()
    };
    let sam = simulated_sam(&dir, &opts);
    let made_with = support::simulated_fasta(&dir, &opts);
    let data = dir.join("data");
    std::fs::create_dir_all(data.join("ref")).unwrap();
    let cram = data.join("x.cram");
    let (cram_path, sam_path) = (cram.to_str().unwrap(), sam.to_str().unwrap());
    let made = made_with.to_str().unwrap();
    support::run_ok(&mdsam_bin(), &["view", "-C", "-T", made, "-o", cram_path, sam_path]);
    support::run_ok(&mdsam_bin(), &["index", cram_path]);
    // The reference only where REF_PATH says (the @SQ UR names a file no longer there).
    let fasta = dir.join("elsewhere.fa");
    std::fs::rename(&made_with, &fasta).unwrap();
    let _ = std::fs::remove_file(made_with.with_extension("fa.fai"));
    let header = stdout_ok(&mdsam(&["view", "-H", cram_path], &[]), "header");
    let header = String::from_utf8(header).unwrap();
    let mut md5s = Vec::new();
    for (name, bases) in fasta_sequences(&fasta) {
        let line = header.lines().find(|l| l.contains(&format!("SN:{name}\t"))).unwrap();
        let md5 = line.split('\t').find_map(|f| f.strip_prefix("M5:")).unwrap().to_string();
        std::fs::write(data.join("ref").join(&md5), &bases).unwrap();
        md5s.push((md5, bases));
    }
    let Some(server) = nginx(&data, &dir) else { return };
    let url = format!("http://127.0.0.1:{}/x.cram", server.port);
    let ref_path = format!("http://127.0.0.1:{}/ref/%s", server.port);
    let cache = dir.join("cache");
    let ref_cache = format!("{}/%2s/%s", cache.display());
    let env = [("REF_PATH", ref_path.as_str()), ("REF_CACHE", ref_cache.as_str())];
    let fasta_path = fasta.to_str().unwrap();
    for region in [&["chr1:1000-20000", "chr2"][..], &[][..]] {
        let mut ours_args = vec!["view", url.as_str()];
        ours_args.extend_from_slice(region);
        let mut local_args = vec!["view", "-T", fasta_path, cram_path];
        local_args.extend_from_slice(region);
        let ours = stdout_ok(&mdsam(&ours_args, &env), "CRAM URL with REF_PATH URL");
        let local = stdout_ok(&mdsam(&local_args, &[]), "local CRAM with -T");
        assert!(!local.is_empty());
        assert_eq!(ours, local, "{region:?}");
    }
    for (md5, bases) in &md5s {
        let cached = cache.join(&md5[..2]).join(&md5[2..]);
        assert_eq!(&std::fs::read(&cached).expect("REF_CACHE filled"), bases);
    }
}
