//! Committed saved files of every format version (fixtures/compat/): reading them gives
//! the stored answers, writing the same input reproduces them byte for byte, and an
//! outdated version is refused with its reason.
use neardup::index::SimhashIndex;
use neardup::io::{Fields, Input, Reader};
use neardup::persist::sketches::SavedSketches;
use neardup::sketch::tokenize::TokenizerVersion;
use neardup::{Pipeline, Sketcher};
use std::path::PathBuf;
use std::process::Command;

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../fixtures/compat")).join(name)
}

fn corpus() -> Vec<neardup::Document> {
    let input = Input::detect(fixture("corpus.jsonl"), "corpus.jsonl", None);
    Reader::new(vec![input], Fields::default())
        .strict(true)
        .map(|r| r.unwrap().into_doc().unwrap().unwrap())
        .collect()
}

/// Reads a committed sketch file: the kept records of the corpus, each with the sketch
/// this build computes for it.
fn check_sketch_file(name: &str) -> SavedSketches {
    let saved = SavedSketches::load(&fixture(name)).unwrap();
    let docs = corpus();
    let d = Pipeline::builder()
        .build()
        .unwrap()
        .run(docs.clone())
        .unwrap();
    let kept: Vec<&str> = d.kept.iter().map(|i| d.ids[i as usize].as_str()).collect();
    assert_eq!(saved.ids, kept);
    assert!(saved.len() >= 10);
    assert_eq!(saved.sites.len(), saved.len());
    let sk = Sketcher::new(saved.config.clone()).unwrap();
    for (i, id) in saved.ids.iter().enumerate() {
        let doc = docs.iter().find(|d| &d.id == id).unwrap();
        assert_eq!(
            saved.sketches.get(i).to_owned(),
            sk.sketch(doc),
            "record {id}: the stored sketch differs from this build's: bump the version"
        );
    }
    saved
}

#[test]
fn sketch_file_v2_is_read_without_sites() {
    let saved = check_sketch_file("v2.sketches");
    assert!(saved.sites.iter().all(Option::is_none));
}

#[test]
fn sketch_file_v3_reads_with_sites_and_rewrites_byte_for_byte() {
    let saved = check_sketch_file("v3.sketches");
    // Each record's site is its URL's host, as the pipeline computes it.
    let docs = corpus();
    let mut with_site = 0;
    for (id, site) in saved.ids.iter().zip(&saved.sites) {
        let doc = docs.iter().find(|d| &d.id == id).unwrap();
        let host = doc.url.as_deref().and_then(|u| {
            let rest = u.split_once("://")?.1;
            Some(rest.split(['/', '?', '#']).next()?.to_ascii_lowercase())
        });
        if let Some(s) = site {
            assert_eq!(host.as_deref(), Some(s.as_str()), "record {id}");
            with_site += 1;
        }
    }
    assert!(with_site > 0, "the corpus has URLs, so the file has sites");
    sketch_again_equals("v3.sketches", &["--tokenizer", "1"]);
}

/// `neardup sketch corpus.jsonl -q` with `flags` writes the committed file `name` byte
/// for byte; returns the bytes written.
fn sketch_again_equals(name: &str, flags: &[&str]) -> Vec<u8> {
    let dir = tempfile::tempdir().unwrap();
    let again = dir.path().join("again.sketches");
    let out = Command::new(env!("CARGO_BIN_EXE_neardup"))
        .arg("sketch")
        .arg(fixture("corpus.jsonl"))
        .arg("-o")
        .arg(&again)
        .arg("-q")
        .args(flags)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let bytes = std::fs::read(&again).unwrap();
    assert_eq!(bytes, std::fs::read(fixture(name)).unwrap(), "{name}");
    bytes
}

/// Version 4: sketches made without the simhash. Every other part of each record is
/// the sketch of the default settings (which compute the simhash), the simhash field is
/// 0, the settings say so, and the same command writes the same bytes.
#[test]
fn sketch_file_v4_reads_without_simhashes_and_rewrites_byte_for_byte() {
    let saved = check_sketch_file("v4.sketches");
    assert!(!saved.config.simhash);
    let full = Sketcher::new(v1_settings()).unwrap();
    let docs = corpus();
    for (i, id) in saved.ids.iter().enumerate() {
        let doc = docs.iter().find(|d| &d.id == id).unwrap();
        let mut want = full.sketch(doc);
        assert_ne!(want.simhash, 0, "record {id}");
        want.simhash = 0;
        assert_eq!(saved.sketches.get(i).to_owned(), want, "record {id}");
    }
    let again = sketch_again_equals("v4.sketches", &["--simhash", "false", "--tokenizer", "1"]);
    // A build that reads version 3 only would take the zeros for simhashes: the file
    // says version 4.
    assert_eq!(&again[8..12], &4u32.to_le_bytes());
}

/// The default settings with tokenizer version 1, as files before version 5 were made.
fn v1_settings() -> neardup::SketchConfig {
    neardup::SketchConfig::builder()
        .tokenizer(TokenizerVersion::V1)
        .build()
        .unwrap()
}

/// A pipeline of the default settings with tokenizer version 1.
fn v1_pipeline() -> Pipeline {
    Pipeline::builder()
        .sketch_config(v1_settings())
        .build()
        .unwrap()
}

/// Version 5: sketches of tokenizer version 2, which the settings in the header say;
/// the same command writes the same bytes.
#[test]
fn sketch_file_v5_records_its_tokenizer_and_rewrites_byte_for_byte() {
    let saved = check_sketch_file("v5.sketches");
    assert_eq!(saved.config.tokenizer, TokenizerVersion::V2);
    assert_eq!(saved.config, neardup::SketchConfig::default());
    let again = sketch_again_equals("v5.sketches", &[]);
    assert_eq!(&again[8..12], &5u32.to_le_bytes());
    assert!(String::from_utf8_lossy(&again).contains("\"tokenizer\":2"));
}

/// Sketches saved before tokenizer versions are of version 1: a run of version 2
/// refuses them naming both versions (its terms are not theirs); a run told to use
/// version 1 compares with them.
#[test]
fn old_sketches_are_compared_only_under_their_tokenizer() {
    let saved = SavedSketches::load(&fixture("v3.sketches")).unwrap();
    assert_eq!(saved.config.tokenizer, TokenizerVersion::V1);
    let docs = corpus();
    let err = Pipeline::builder()
        .build()
        .unwrap()
        .run_against(&saved, docs.clone(), Ok)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("tokenizer version 1") && err.contains("tokenizer version 2"),
        "{err}"
    );
    let d = v1_pipeline().run_against(&saved, docs, Ok).unwrap();
    assert_eq!(d.previous, saved.len());
    for flags in [&[][..], &["--tokenizer", "1"][..]] {
        let out = Command::new(env!("CARGO_BIN_EXE_neardup"))
            .arg("dedup")
            .arg(fixture("corpus.jsonl"))
            .arg("--sketches")
            .arg(fixture("v3.sketches"))
            .args(["-o", "-", "-q"])
            .args(flags)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        if flags.is_empty() {
            assert_eq!(out.status.code(), Some(1), "{stderr}");
            assert!(stderr.contains("tokenizer version 1"), "{stderr}");
        } else {
            assert!(out.status.success(), "{stderr}");
        }
    }
    // The deduper's state of version-1 sketches: refused by a version-2 deduper.
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state");
    std::fs::create_dir(&state).unwrap();
    for f in ["snapshot.0", "log.0"] {
        std::fs::copy(fixture("v1.state").join(f), state.join(f)).unwrap();
    }
    let err = match neardup::Deduper::open(
        &state,
        Pipeline::builder().build().unwrap(),
        Default::default(),
    ) {
        Ok(_) => panic!("a state of tokenizer 1 opened by a deduper of tokenizer 2"),
        Err(e) => e.to_string(),
    };
    assert!(
        err.contains("tokenizer version 1") && err.contains("tokenizer version 2"),
        "{err}"
    );
}

#[test]
fn sketch_file_v1_is_refused_with_its_reason() {
    let err = SavedSketches::load(&fixture("v1.sketches"))
        .unwrap_err()
        .to_string();
    assert!(err.contains("v1.sketches"), "{err}");
    assert!(err.contains("version 1"), "{err}");
    assert!(err.contains("32-bit"), "{err}");
    let out = Command::new(env!("CARGO_BIN_EXE_neardup"))
        .arg("dedup")
        .arg(fixture("corpus.jsonl"))
        .arg("--sketches")
        .arg(fixture("v1.sketches"))
        .args(["-o", "-", "-q"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(out.stdout.is_empty());
}

#[test]
fn index_v1_answers_as_stored_and_rewrites_byte_for_byte() {
    let idx = SimhashIndex::load(&fixture("v1.index")).unwrap();
    let fps: Vec<(u64, u64)> = std::fs::read_to_string(fixture("fingerprints.txt"))
        .unwrap()
        .lines()
        .map(|l| {
            let (id, fp) = l.split_once(' ').unwrap();
            (id.parse().unwrap(), u64::from_str_radix(fp, 16).unwrap())
        })
        .collect();
    assert_eq!(idx.len(), fps.len());
    // Every stored fingerprint, with 0..=4 bits flipped, against a brute-force scan.
    for (n, &(_, fp)) in fps.iter().enumerate() {
        for flips in 0..=4u32 {
            let q = (0..flips).fold(fp, |q, i| q ^ (1u64 << ((n as u32 * 7 + i * 13) % 64)));
            let mut got: Vec<u64> = idx.query(q).into_iter().map(|m| m.id).collect();
            got.sort_unstable();
            let mut want: Vec<u64> = fps
                .iter()
                .filter(|(_, f)| (f ^ q).count_ones() <= 3)
                .map(|(id, _)| *id)
                .collect();
            want.sort_unstable();
            assert_eq!(got, want, "query {q:016x}");
        }
    }
    let dir = tempfile::tempdir().unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_neardup"))
        .args(["index", "build"])
        .arg(fixture("fingerprints.txt"))
        .arg("-o")
        .arg(dir.path().join("again.index"))
        .args(["--design", "k3-4"])
        .output()
        .unwrap();
    assert!(out.status.success());
    assert_eq!(
        std::fs::read(dir.path().join("again.index")).unwrap(),
        std::fs::read(fixture("v1.index")).unwrap()
    );
}

/// A deduper state whose log is version 1 (one system call per entry; made by
/// `neardup stream --state v1.state < corpus.jsonl`): every record is stored with the
/// sketch this build computes (a copy under another id is its exact duplicate, the
/// record itself is its own), and opening it rewrites the log as version 3.
#[test]
fn deduper_state_with_a_v1_log_opens_with_every_record() {
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state");
    std::fs::create_dir(&state).unwrap();
    for f in ["snapshot.0", "log.0"] {
        std::fs::copy(fixture("v1.state").join(f), state.join(f)).unwrap();
    }
    let log = std::fs::read(state.join("log.0")).unwrap();
    assert_eq!(
        &log[8..12],
        &1u32.to_le_bytes(),
        "the fixture is a version 1 log"
    );
    let docs = corpus();
    let d = neardup::Deduper::open(&state, v1_pipeline(), Default::default()).unwrap();
    assert_eq!(d.len(), docs.len());
    for doc in &docs {
        assert_eq!(
            d.check(doc).unwrap(),
            neardup::Verdict::Exact { of: doc.id.clone() },
            "record {}",
            doc.id
        );
        let mut copy = doc.clone();
        copy.id = format!("copy-of-{}", doc.id);
        assert_eq!(
            d.check_and_insert(&copy).unwrap(),
            neardup::Verdict::Exact { of: doc.id.clone() }
        );
    }
    let log = std::fs::read(state.join("log.0")).unwrap();
    assert_eq!(
        &log[8..12],
        &3u32.to_le_bytes(),
        "opened for appending: rewritten as version 3"
    );
    drop(d);
    let d = neardup::Deduper::open(&state, v1_pipeline(), Default::default()).unwrap();
    assert_eq!(d.len(), docs.len());
}
