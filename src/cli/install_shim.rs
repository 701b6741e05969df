//! `mdsam install-shim DIR`: puts a `samtools` in DIR that is this mdsam binary (a symlink), so
//! scripts written for samtools run mdsam unchanged once DIR is on PATH.

use crate::error::Error;

pub const USAGE: &str = "
Usage: mdsam install-shim DIR

Creates DIR/samtools, a symbolic link to this mdsam binary. Put DIR first on PATH to run
existing samtools scripts with mdsam.
";

pub fn run(_inv: &super::Invocation, args: &[String]) -> Result<(), Error> {
    let [dir] = args else {
        return Err(Error::Usage("install-shim takes one directory".into()));
    };
    let exe = std::env::current_exe()
        .map_err(|e| Error::Message(format!("cannot find mdsam itself: {e}")))?;
    std::fs::create_dir_all(dir).map_err(|e| Error::file(dir.as_str(), e))?;
    let link = std::path::Path::new(dir).join("samtools");
    if link.symlink_metadata().is_ok() {
        std::fs::remove_file(&link).map_err(|e| Error::file(link.display().to_string(), e))?;
    }
    #[cfg(unix)]
    std::os::unix::fs::symlink(&exe, &link)
        .map_err(|e| Error::file(link.display().to_string(), e))?;
    eprintln!("{} -> {}", link.display(), exe.display());
    Ok(())
}
