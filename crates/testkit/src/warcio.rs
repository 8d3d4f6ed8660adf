//! `warcio check`, the archivists' reader, run on a WARC file a test wrote.

use std::path::Path;
use std::process::Command;

/// Runs `warcio check -v` on `path` and asserts that it passes with every record's digest
/// verified; returns its report. Without warcio the check is skipped loudly (`None`), except
/// under CI (`CI=true`), where its absence fails: `.ci/run` installs it. `what` names the file
/// in the skip message.
pub fn warcio_check(path: &Path, what: &str) -> Option<String> {
    let have = Command::new("python3")
        .args(["-c", "import warcio"])
        .status()
        .is_ok_and(|s| s.success());
    if !have {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "warcio is missing under CI: `pip install warcio` (see .ci/run)"
        );
        eprintln!("SKIPPED: warcio check of {what} (pip install warcio to run it)");
        return None;
    }
    let check = Command::new("python3")
        .args(["-m", "warcio.cli", "check", "-v"])
        .arg(path)
        .output()
        .expect("python3 runs");
    let out = String::from_utf8_lossy(&check.stdout).into_owned();
    assert!(
        check.status.success(),
        "warcio check failed:\n{out}\n{}",
        String::from_utf8_lossy(&check.stderr)
    );
    // Every record with a digest is checked and passes.
    assert!(out.contains("digest pass"), "{out}");
    assert!(!out.contains("digest failed"), "{out}");
    Some(out)
}
