//! Crash safety: a process killed while writing a saved file never leaves a damaged file
//! at the destination — it holds the previous contents or the complete new ones; the
//! partial output is a `.neardup-*` temporary file, detectable by its name.
use neardup::persist::sketches::SavedSketches;
use std::process::{Command, Stdio};
use std::time::Duration;

#[test]
fn killing_a_writer_leaves_the_previous_file_intact() {
    let dir = tempfile::tempdir().unwrap();
    let bin = env!("CARGO_BIN_EXE_neardup");
    let run = |args: &[&str]| {
        let s = Command::new(bin)
            .current_dir(dir.path())
            .args(args)
            .output()
            .unwrap();
        assert!(s.status.success(), "{}", String::from_utf8_lossy(&s.stderr));
    };
    run(&["synth", "--base", "30000", "--seed", "2", "-o", "big.jsonl"]);
    run(&["synth", "--base", "50", "--seed", "3", "-o", "small.jsonl"]);
    // The previous file.
    run(&["sketch", "small.jsonl", "-o", "snap.sketches", "-q"]);
    let before = SavedSketches::load(&dir.path().join("snap.sketches")).unwrap();
    let mut replaced = false;
    for delay_ms in [20u64, 80, 200, 400, 800, 1600] {
        let mut child = Command::new(bin)
            .current_dir(dir.path())
            .args([
                "sketch",
                "big.jsonl",
                "-o",
                "snap.sketches",
                "-q",
                "--threads",
                "1",
            ])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_millis(delay_ms));
        let _ = child.kill();
        let _ = child.wait();
        // Whatever the moment of the kill: the destination loads, old or complete new.
        let now =
            SavedSketches::load(&dir.path().join("snap.sketches")).expect("never a damaged file");
        if now.len() == before.len() {
            assert_eq!(now.ids, before.ids);
        } else {
            replaced = true;
            assert!(now.len() > before.len());
        }
        // Leftover partial output, if any, is recognizable.
        for e in std::fs::read_dir(dir.path()).unwrap() {
            let name = e.unwrap().file_name().to_string_lossy().into_owned();
            assert!(
                ["big.jsonl", "small.jsonl", "snap.sketches"].contains(&name.as_str())
                    || name.starts_with(".neardup-"),
                "{name}"
            );
        }
        if replaced {
            break;
        }
    }
}

#[test]
fn an_interrupted_dedup_leaves_no_partial_outputs_under_their_names() {
    let dir = tempfile::tempdir().unwrap();
    let bin = env!("CARGO_BIN_EXE_neardup");
    let s = Command::new(bin)
        .current_dir(dir.path())
        .args(["synth", "--base", "30000", "--seed", "5", "-o", "c.jsonl"])
        .output()
        .unwrap();
    assert!(s.status.success());
    let mut child = Command::new(bin)
        .current_dir(dir.path())
        .args([
            "dedup",
            "c.jsonl",
            "-o",
            "kept.jsonl",
            "--clusters",
            "cl.jsonl",
            "--report",
            "r.json",
            "-q",
            "--threads",
            "1",
        ])
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(300));
    let _ = child.kill();
    let status = child.wait().unwrap();
    if !status.success() {
        // Killed before the end: no output exists under its final name.
        for f in ["kept.jsonl", "cl.jsonl", "r.json"] {
            assert!(!dir.path().join(f).exists(), "{f} exists after the kill");
        }
    }
}
