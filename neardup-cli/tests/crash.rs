//! Crash safety: a process that dies while writing an output never leaves a damaged
//! file at the destination — it holds the previous contents (or the complete new ones);
//! the partial output is a `.neardup-*` temporary file, detectable by its name.
//!
//! The crash is placed, not hoped for: the writers' test-only fault point
//! (`NEARDUP_FAULT_AFTER=NAME:BYTES`, see `neardup::persist::atomic`) aborts the process
//! after that many bytes of the named output, so each test proves the kill landed in
//! the middle of the write (a partial temporary file of exactly that size exists).
mod common;
use common::{bin, ok_in};
use neardup::persist::atomic::FAULT_ENV;
use neardup::persist::sketches::SavedSketches;
use std::path::Path;
use std::process::Output;

fn crash(dir: &Path, fault: &str, args: &[&str]) -> Output {
    let out = bin()
        .current_dir(dir)
        .env(FAULT_ENV, fault)
        .args(args)
        .output()
        .unwrap();
    assert!(
        !out.status.success(),
        "the fault point must stop the process"
    );
    assert!(
        String::from_utf8_lossy(&out.stderr).contains(FAULT_ENV),
        "stopped by the fault point: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// The partial temporary files left in `dir`, with their sizes.
fn partials(dir: &Path) -> Vec<(String, u64)> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap())
        .filter(|e| e.file_name().to_string_lossy().starts_with(".neardup-"))
        .map(|e| {
            (
                e.file_name().to_string_lossy().into_owned(),
                e.metadata().unwrap().len(),
            )
        })
        .collect()
}

#[test]
fn a_sketch_file_killed_mid_write_leaves_the_previous_file_intact() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    ok_in(
        d,
        &["synth", "--base", "400", "--seed", "2", "-o", "big.jsonl"],
    );
    ok_in(
        d,
        &["synth", "--base", "50", "--seed", "3", "-o", "small.jsonl"],
    );
    ok_in(d, &["sketch", "small.jsonl", "-o", "snap.sketches", "-q"]);
    let before = std::fs::read(d.join("snap.sketches")).unwrap();
    let full = {
        ok_in(d, &["sketch", "big.jsonl", "-o", "full.sketches", "-q"]);
        std::fs::metadata(d.join("full.sketches")).unwrap().len()
    };
    for bytes in [0u64, 1, 4096, full / 2, full - 13] {
        crash(
            d,
            &format!("snap.sketches:{bytes}"),
            &["sketch", "big.jsonl", "-o", "snap.sketches", "-q"],
        );
        // The previous file, byte for byte, still loads.
        assert_eq!(
            std::fs::read(d.join("snap.sketches")).unwrap(),
            before,
            "at {bytes}"
        );
        SavedSketches::load(&d.join("snap.sketches")).unwrap();
        // The crash happened mid-write: the partial file holds exactly `bytes` bytes.
        let p = partials(d);
        assert_eq!(p.len(), 1, "{p:?}");
        assert_eq!(p[0].1, bytes, "{p:?}");
        std::fs::remove_file(d.join(&p[0].0)).unwrap();
    }
}

#[test]
fn a_dedup_killed_mid_write_leaves_no_partial_output_under_its_name() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    ok_in(
        d,
        &["synth", "--base", "300", "--seed", "5", "-o", "c.jsonl"],
    );
    let args = [
        "dedup",
        "c.jsonl",
        "-o",
        "kept.jsonl",
        "--clusters",
        "cl.jsonl",
        "--pairs",
        "pairs.jsonl",
        "--report",
        "r.json",
        "-q",
    ];
    // No earlier outputs: none may appear under its final name.
    for target in ["kept.jsonl", "cl.jsonl", "pairs.jsonl", "r.json"] {
        crash(d, &format!("{target}:100"), &args);
        assert!(!d.join(target).exists(), "{target} exists after the crash");
        let p = partials(d);
        assert!(p.iter().any(|(_, n)| *n == 100), "{target}: {p:?}");
        for (name, _) in p {
            std::fs::remove_file(d.join(name)).unwrap();
        }
    }
    // Earlier outputs: each keeps its previous contents when a crash hits its write.
    ok_in(d, &args);
    let before: Vec<Vec<u8>> = ["kept.jsonl", "cl.jsonl", "pairs.jsonl"]
        .iter()
        .map(|f| std::fs::read(d.join(f)).unwrap())
        .collect();
    ok_in(
        d,
        &["synth", "--base", "300", "--seed", "6", "-o", "c.jsonl"],
    );
    for (i, target) in ["kept.jsonl", "cl.jsonl", "pairs.jsonl"].iter().enumerate() {
        crash(d, &format!("{target}:100"), &args);
        assert_eq!(
            std::fs::read(d.join(target)).unwrap(),
            before[i],
            "{target}"
        );
    }
}
