//! Helpers shared by the CLI's integration tests.
#![allow(dead_code)]
use std::path::Path;
use std::process::Command;

/// The `neardup` binary under test.
pub fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_neardup"))
}

/// Runs the binary in `dir`; it must succeed. Returns its standard output.
pub fn ok_in(dir: &Path, args: &[&str]) -> String {
    let out = bin().current_dir(dir).args(args).output().unwrap();
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}
