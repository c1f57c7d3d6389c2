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

/// The lines of the corpus `neardup synth ARGS -o DIR/NAME` writes, with `bad` (a record
/// without text) inserted at line index `at`.
pub fn synth_lines(dir: &Path, name: &str, args: &[&str], at: usize) -> Vec<String> {
    let path = dir.join(name);
    let out = bin()
        .arg("synth")
        .args(args)
        .arg("-o")
        .arg(&path)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut lines: Vec<String> = std::fs::read_to_string(&path)
        .unwrap()
        .lines()
        .map(str::to_owned)
        .collect();
    lines.insert(at, r#"{"id": "bad"}"#.to_owned());
    lines
}
