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
