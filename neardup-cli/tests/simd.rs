//! `NEARDUP_SIMD=portable|avx2|avx512 neardup dedup` writes the same bytes on every
//! path this CPU has; a path it lacks, or an unknown name, is an error.
use neardup::sketch::{simd_detect, SimdLevel, SIMD_ENV};
use std::process::Command;

#[test]
fn dedup_output_is_identical_on_every_vector_path() {
    let dir = tempfile::tempdir().unwrap();
    let run = |path: Option<&str>| {
        let mut c = Command::new(env!("CARGO_BIN_EXE_neardup"));
        c.current_dir(dir.path());
        if let Some(p) = path {
            c.env(SIMD_ENV, p);
        } else {
            c.env_remove(SIMD_ENV);
        }
        c.args([
            "dedup",
            "-q",
            "-o",
            "-",
            "--pairs",
            "pairs.jsonl",
            "--preset",
            "recall",
        ]);
        let out = c.output().unwrap();
        let pairs = std::fs::read(dir.path().join("pairs.jsonl")).unwrap_or_default();
        (out, pairs)
    };
    let (default, default_pairs) = run(None);
    assert!(default.status.success());
    let widest = simd_detect();
    for (name, level) in [
        ("portable", SimdLevel::Portable),
        ("avx2", SimdLevel::Avx2),
        ("avx512", SimdLevel::Avx512),
    ] {
        let (out, pairs) = run(Some(name));
        if level <= widest {
            assert!(
                out.status.success(),
                "{name}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            assert!(out.stdout == default.stdout, "{name}: kept records differ");
            assert_eq!(pairs, default_pairs, "{name}: pairs differ");
        } else {
            assert_eq!(out.status.code(), Some(1), "{name} on a CPU without it");
            assert!(String::from_utf8_lossy(&out.stderr).contains("no such path"));
        }
    }
    let (out, _) = run(Some("sse9"));
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("expected portable, avx2 or avx512"));
}
