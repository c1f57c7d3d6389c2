//! The committed demo corpus is exactly what the generator writes (so it is the
//! project's own, reproducible data).
use std::process::Command;

#[test]
fn demo_corpus_is_generated() {
    let dir = tempfile::tempdir().unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_neardup"))
        .current_dir(dir.path())
        .args([
            "synth",
            "--base",
            "150",
            "--min-words",
            "60",
            "--max-words",
            "300",
            "--html-share",
            "0.3",
            "--seed",
            "7",
            "-o",
            "demo.jsonl",
            "--truth",
            "truth.jsonl",
        ])
        .output()
        .unwrap();
    assert!(out.status.success());
    let root = env!("CARGO_MANIFEST_DIR");
    assert_eq!(
        std::fs::read(dir.path().join("demo.jsonl")).unwrap(),
        std::fs::read(format!("{root}/../fixtures/demo.jsonl")).unwrap()
    );
    assert_eq!(
        std::fs::read(dir.path().join("truth.jsonl")).unwrap(),
        std::fs::read(format!("{root}/../fixtures/demo-truth.jsonl")).unwrap()
    );
}

/// An installed binary carries the demo corpus: copied away from the checkout and run
/// from another directory, `neardup dedup` without input still dedups the demo corpus.
#[test]
fn installed_binary_runs_the_demo_anywhere() {
    let dir = tempfile::tempdir().unwrap();
    let bin = dir.path().join("neardup");
    std::fs::copy(env!("CARGO_BIN_EXE_neardup"), &bin).unwrap();
    let out = Command::new(&bin)
        .current_dir(dir.path())
        .args(["dedup", "-q", "-o", "kept.jsonl", "--report", "report.json"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.path().join("report.json")).unwrap()).unwrap();
    let demo = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../fixtures/demo.jsonl"
    ))
    .unwrap();
    assert_eq!(report["accounting"]["read"], demo.lines().count() as u64);
    let kept = std::fs::read_to_string(dir.path().join("kept.jsonl")).unwrap();
    assert!(kept.lines().count() > 100 && kept.lines().count() < demo.lines().count());
}
