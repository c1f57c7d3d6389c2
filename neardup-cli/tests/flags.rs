//! Flags that had no test of their own: incremental runs through the CLI, cluster mode,
//! keep, format and field flags, eval's sweep and scores, `index add` with an automatic
//! design, and thread-count independence of boilerplate runs, sketch files and
//! `index fingerprint`.
mod common;
use common::ok_in;
use neardup::synth::{generate, SynthConfig};
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::Command;

fn lines(p: &Path) -> Vec<Value> {
    std::fs::read_to_string(p)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn ids(p: &Path) -> Vec<String> {
    lines(p)
        .iter()
        .map(|v| v["id"].as_str().unwrap().to_string())
        .collect()
}

fn corpus(seed: u64, base: usize) -> Vec<neardup::Document> {
    generate(&SynthConfig {
        base_documents: base,
        words: (150, 500),
        duplicate_rate: 0.5,
        edit_words: (1, 2),
        hosts: 3,
        seed,
        ..Default::default()
    })
    .documents
}

fn write(path: &Path, docs: &[neardup::Document], id: &str, text: &str) {
    let mut s = String::new();
    for d in docs {
        let mut v = serde_json::Map::new();
        v.insert(id.into(), d.id.clone().into());
        v.insert(text.into(), d.body.as_str().into());
        v.insert("url".into(), d.url.clone().into());
        s.push_str(&Value::Object(v).to_string());
        s.push('\n');
    }
    std::fs::write(path, s).unwrap();
}

#[test]
fn incremental_run_through_the_cli_equals_one_run() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let docs = corpus(3, 80);
    let (old, new) = docs.split_at(docs.len() / 2);
    write(&d.join("old.jsonl"), old, "id", "text");
    write(&d.join("new.jsonl"), new, "id", "text");
    write(&d.join("all.jsonl"), &docs, "id", "text");
    ok_in(
        d,
        &[
            "dedup",
            "old.jsonl",
            "-q",
            "--save-sketches",
            "old.sk",
            "-o",
            "old-kept.jsonl",
        ],
    );
    ok_in(
        d,
        &[
            "dedup",
            "new.jsonl",
            "-q",
            "--sketches",
            "old.sk",
            "-o",
            "new-kept.jsonl",
        ],
    );
    ok_in(d, &["dedup", "all.jsonl", "-q", "-o", "all-kept.jsonl"]);
    let new_ids: BTreeSet<String> = new.iter().map(|d| d.id.clone()).collect();
    let want: Vec<String> = ids(&d.join("all-kept.jsonl"))
        .into_iter()
        .filter(|i| new_ids.contains(i))
        .collect();
    assert!(!want.is_empty() && want.len() < new.len());
    assert_eq!(ids(&d.join("new-kept.jsonl")), want);
    // The saved file of the first run holds exactly its kept records.
    let saved = neardup::persist::sketches::SavedSketches::load(&d.join("old.sk")).unwrap();
    assert_eq!(saved.ids, ids(&d.join("old-kept.jsonl")));
}

#[test]
fn format_field_keep_and_cluster_mode_flags() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // A chain: sliding windows of 300 words, 5 words apart. Transitive mode merges
    // runs of them; verified mode keeps only members verified against the
    // representative.
    let base: Vec<String> = (0..600).map(|i| format!("w{}", i * 7919 % 5000)).collect();
    let chain: Vec<neardup::Document> = (0..20)
        .map(|k| {
            neardup::Document::text(
                format!("c{k:02}"),
                base[k * 5..k * 5 + 300 + k % 4].join(" "),
            )
        })
        .collect();
    write(&d.join("chain.jsonl"), &chain, "doc_id", "body");
    let args = |mode: &str, keep: &str| {
        vec![
            "dedup".to_string(),
            "chain.jsonl".into(),
            "--format".into(),
            "jsonl".into(),
            "--id-field".into(),
            "doc_id".into(),
            "--text-field".into(),
            "body".into(),
            "--cluster-mode".into(),
            mode.into(),
            "--keep".into(),
            keep.into(),
            "--charikar-threshold".into(),
            "360".into(),
            "--min-shared".into(),
            "1".into(),
            "-q".into(),
            "--clusters".into(),
            format!("{mode}-{keep}.jsonl"),
        ]
    };
    let clusters = |mode: &str, keep: &str| {
        let a = args(mode, keep);
        ok_in(d, &a.iter().map(String::as_str).collect::<Vec<_>>());
        lines(&d.join(format!("{mode}-{keep}.jsonl")))
    };
    let t = clusters("transitive", "first");
    let v = clusters("verified", "first");
    let members = |c: &[Value]| -> usize {
        c.iter()
            .map(|c| c["size"].as_u64().unwrap() as usize)
            .max()
            .unwrap_or(0)
    };
    assert!(
        members(&t) > members(&v),
        "transitive {} vs verified {}",
        members(&t),
        members(&v)
    );
    // The field flags found the ids.
    assert_eq!(t[0]["representative"], "c00");
    // --keep longest: the representative is a member with the most terms (words here).
    let l = clusters("transitive", "longest");
    assert!(
        l.iter().any(|c| c["representative"] != c["members"][0]),
        "longest picked a later member somewhere"
    );
    let text_len: BTreeMap<String, usize> =
        chain.iter().map(|c| (c.id.clone(), c.body.len())).collect();
    for c in &l {
        let rep = c["representative"].as_str().unwrap();
        let longest = c["members"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| text_len[m.as_str().unwrap()])
            .max()
            .unwrap();
        assert_eq!(text_len[rep], longest, "{c}");
    }
}

#[test]
fn eval_sweep_and_scores() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let docs = corpus(9, 30);
    let mut s = String::new();
    for (i, w) in docs.windows(2).enumerate() {
        let label = if w[1].id.contains("-v") && w[1].id.starts_with(&w[0].id) {
            1
        } else {
            0
        };
        s.push_str(&serde_json::json!({"id": i, "text_a": w[0].body.as_str(), "text_b": w[1].body.as_str(), "label": label}).to_string());
        s.push('\n');
    }
    std::fs::write(d.join("pairs.jsonl"), &s).unwrap();
    let n = s.lines().count();
    ok_in(
        d,
        &[
            "eval",
            "--pairs",
            "pairs.jsonl",
            "--sweep",
            "--json",
            "e.json",
            "--scores",
            "scores.jsonl",
        ],
    );
    let scores = lines(&d.join("scores.jsonl"));
    assert_eq!(scores.len(), n);
    for sc in &scores {
        let sc = &sc["scores"];
        assert!(sc["agreement"].as_u64().unwrap() <= 384, "{sc}");
        assert!(sc["judgement"]["near_duplicate"].is_boolean(), "{sc}");
    }
    let e: Value =
        serde_json::from_str(&std::fs::read_to_string(d.join("e.json")).unwrap()).unwrap();
    let algos = e["algorithms"].as_array().expect("algorithms");
    let charikar = algos.iter().find(|a| a["name"] == "charikar").unwrap();
    let sweep = charikar["sweep"].as_array().expect("a sweep");
    assert!(sweep.len() > 3);
    // The sweep's best F1 is the maximum over its points.
    let best = sweep
        .iter()
        .map(|p| p["f1"].as_f64().unwrap())
        .fold(0.0, f64::max);
    assert_eq!(charikar["best"]["f1"].as_f64().unwrap(), best);
    assert!(algos.iter().any(|a| a["name"] == "configured"));
}

#[test]
fn index_add_with_an_automatic_design_answers_like_a_scan() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let fps: Vec<u64> = (0..400u64).map(neardup::sketch::hash::mix64).collect();
    let first: String = fps[..200]
        .iter()
        .enumerate()
        .map(|(i, f)| format!("{i} {f:016x}\n"))
        .collect();
    let second: String = fps[200..]
        .iter()
        .enumerate()
        .map(|(i, f)| format!("{} {f:016x}\n", i + 200))
        .collect();
    std::fs::write(d.join("a.txt"), first).unwrap();
    std::fs::write(d.join("b.txt"), second).unwrap();
    ok_in(
        d,
        &[
            "index",
            "build",
            "a.txt",
            "-o",
            "x.idx",
            "--design",
            "auto:3:20:10",
        ],
    );
    ok_in(d, &["index", "add", "x.idx", "b.txt"]);
    // Queries: every stored fingerprint with 2 bits flipped, and one 4 bits away.
    let q: String = fps
        .iter()
        .map(|f| format!("{:016x}\n", f ^ 0b101))
        .chain([format!("{:016x}\n", fps[7] ^ 0xf)])
        .collect();
    std::fs::write(d.join("q.txt"), q).unwrap();
    let out = ok_in(d, &["index", "query", "x.idx", "q.txt"]);
    let rows: Vec<Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(rows.len(), 401);
    for (i, r) in rows.iter().enumerate() {
        let q = if i < 400 {
            fps[i] ^ 0b101
        } else {
            fps[7] ^ 0xf
        };
        let want: BTreeSet<u64> = fps
            .iter()
            .enumerate()
            .filter(|(_, f)| (*f ^ q).count_ones() <= 3)
            .map(|(j, _)| j as u64)
            .collect();
        let got: BTreeSet<u64> = r["matches"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m["id"].as_u64().unwrap())
            .collect();
        assert_eq!(got, want, "query {i}: {r}");
    }
}

#[test]
fn boilerplate_sketch_files_and_fingerprints_do_not_depend_on_threads() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    ok_in(
        d,
        &[
            "synth",
            "--base",
            "200",
            "--template-sites",
            "3",
            "--seed",
            "12",
            "-o",
            "c.jsonl",
        ],
    );
    let mut outs = Vec::new();
    for t in ["1", "2", "8"] {
        ok_in(
            d,
            &[
                "dedup",
                "c.jsonl",
                "-q",
                "--boilerplate",
                "--threads",
                t,
                "-o",
                &format!("k{t}.jsonl"),
                "--pairs",
                &format!("p{t}.jsonl"),
            ],
        );
        ok_in(
            d,
            &[
                "sketch",
                "c.jsonl",
                "-q",
                "--threads",
                t,
                "-o",
                &format!("s{t}.sk"),
            ],
        );
        let fp = Command::new(env!("CARGO_BIN_EXE_neardup"))
            .current_dir(d)
            .args(["index", "fingerprint", "c.jsonl"])
            .env("RAYON_NUM_THREADS", t)
            .output()
            .unwrap();
        assert!(fp.status.success());
        outs.push((
            std::fs::read(d.join(format!("k{t}.jsonl"))).unwrap(),
            std::fs::read(d.join(format!("p{t}.jsonl"))).unwrap(),
            std::fs::read(d.join(format!("s{t}.sk"))).unwrap(),
            fp.stdout,
        ));
    }
    assert!(!outs[0].1.is_empty() && !outs[0].3.is_empty());
    for o in &outs[1..] {
        assert!(o.0 == outs[0].0, "kept records differ");
        assert!(o.1 == outs[0].1, "pairs differ");
        assert!(o.2 == outs[0].2, "sketch files differ");
        assert!(o.3 == outs[0].3, "fingerprints differ");
    }
}
