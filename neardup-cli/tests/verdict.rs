//! One verdict through the binary: for every preset × strategy × stage-one generator,
//! `neardup pair --json`'s `near_duplicate` equals whether `neardup dedup` (same flags)
//! reported the pair — for reported pairs and for candidates it rejected. The rejected
//! candidates are found by a brute force over every pair with the candidate definitions
//! written out here.
mod common;
use common::bin;
use neardup::sketch::broder::shared_supershingles;
use neardup::sketch::charikar::hamming;
use neardup::synth::{generate, SynthConfig};
use neardup::{Body, Document, SketchConfig, Sketcher};
use serde_json::Value;
use std::collections::{BTreeSet, HashMap};
use std::path::Path;

fn docs() -> Vec<Document> {
    generate(&SynthConfig {
        base_documents: 90,
        words: (80, 300),
        duplicate_rate: 0.6,
        hosts: 3,
        edit_words: (1, 6),
        template_sites: 1,
        html_share: 0.3,
        seed: 41,
        ..Default::default()
    })
    .documents
}

fn write_corpus(dir: &Path, docs: &[Document]) {
    let mut out = String::new();
    for (i, d) in docs.iter().enumerate() {
        let mut v = serde_json::json!({"id": d.id, "url": d.url});
        match &d.body {
            Body::Text(t) => v["text"] = t.clone().into(),
            Body::Html(h) => v["html"] = h.clone().into(),
        }
        out.push_str(&v.to_string());
        out.push('\n');
        let ext = if matches!(d.body, Body::Html(_)) {
            "html"
        } else {
            "txt"
        };
        std::fs::write(dir.join(format!("{i}.{ext}")), d.body.as_str()).unwrap();
    }
    std::fs::write(dir.join("corpus.jsonl"), out).unwrap();
}

#[test]
fn pair_json_agrees_with_dedup_for_every_configuration() {
    let dir = tempfile::tempdir().unwrap();
    let docs = docs();
    write_corpus(dir.path(), &docs);
    let index: HashMap<&str, usize> = docs
        .iter()
        .enumerate()
        .map(|(i, d)| (d.id.as_str(), i))
        .collect();
    let file = |i: usize| {
        let ext = if matches!(docs[i].body, Body::Html(_)) {
            "html"
        } else {
            "txt"
        };
        format!("{i}.{ext}")
    };
    let mut configs = 0;
    let mut negatives = 0;
    for preset in ["paper", "recall"] {
        for strategy in ["uniform", "henzinger"] {
            for candidates in ["broder", "pugh", "simhash", "charikar-blocks"] {
                let mut flags: Vec<String> = vec![
                    "--preset".into(),
                    preset.into(),
                    "--strategy".into(),
                    strategy.into(),
                    "--candidates".into(),
                    candidates.into(),
                ];
                if candidates == "charikar-blocks" && preset == "recall" {
                    flags.extend(["--block-distance".into(), "32".into()]);
                }
                let what = flags.join(" ");
                let out = bin()
                    .current_dir(dir.path())
                    .args([
                        "dedup",
                        "corpus.jsonl",
                        "-q",
                        "-o",
                        "kept.jsonl",
                        "--pairs",
                        "pairs.jsonl",
                    ])
                    .args(&flags)
                    .output()
                    .unwrap();
                assert!(
                    out.status.success(),
                    "{what}: {}",
                    String::from_utf8_lossy(&out.stderr)
                );
                let reported: BTreeSet<(usize, usize)> =
                    std::fs::read_to_string(dir.path().join("pairs.jsonl"))
                        .unwrap()
                        .lines()
                        .map(|l| serde_json::from_str::<Value>(l).unwrap())
                        .filter(|p| p["kind"] != "exact")
                        .map(|p| {
                            let (a, b) = (
                                index[p["a"].as_str().unwrap()],
                                index[p["b"].as_str().unwrap()],
                            );
                            (a.min(b), a.max(b))
                        })
                        .collect();
                assert!(!reported.is_empty(), "{what}: some near pairs");
                // Candidates the run rejected: pairs (not reported, not exact duplicates)
                // that the generator's definition makes candidates.
                let mut cfg = SketchConfig::default();
                if preset == "recall" {
                    cfg.shingle_size = 3;
                    cfg.minhashes = 168;
                    cfg.supershingles = 84;
                    cfg.charikar_bits = 1024;
                    cfg.charikar_features = neardup::Features::Shingles;
                }
                if candidates == "pugh" {
                    cfg.pugh = Some(Default::default());
                }
                let sk = Sketcher::new(cfg).unwrap();
                let sketches: Vec<_> = docs.iter().map(|d| sk.sketch(d)).collect();
                // Records dropped as exact duplicates are not compared again by dedup.
                let mut seen = BTreeSet::new();
                let active: Vec<usize> = (0..docs.len())
                    .filter(|&i| seen.insert(sketches[i].exact))
                    .collect();
                let mut rejected = Vec::new();
                for (i, &a) in active.iter().enumerate() {
                    for &b in &active[i + 1..] {
                        let (x, y) = (&sketches[a], &sketches[b]);
                        if reported.contains(&(a, b)) {
                            continue;
                        }
                        let candidate = match candidates {
                            "broder" => {
                                shared_supershingles(&x.supershingles, &y.supershingles)
                                    >= if preset == "paper" { 2 } else { 35 }
                            }
                            "pugh" => x.pugh.iter().zip(&y.pugh).any(|(p, q)| p == q && *p != 0),
                            "simhash" => (x.simhash ^ y.simhash).count_ones() <= 3,
                            _ => {
                                hamming(&x.charikar, &y.charikar)
                                    <= if preset == "paper" { 12 } else { 32 }
                            }
                        };
                        if candidate {
                            rejected.push((a, b));
                        }
                    }
                }
                let sample = reported
                    .iter()
                    .take(4)
                    .map(|&p| (p, true))
                    .chain(rejected.iter().take(4).map(|&p| (p, false)));
                for ((a, b), want) in sample {
                    let out = bin()
                        .current_dir(dir.path())
                        .args(["pair", &file(a), &file(b), "--json"])
                        .args(["--url-a", docs[a].url.as_deref().unwrap_or("")])
                        .args(["--url-b", docs[b].url.as_deref().unwrap_or("")])
                        .args(&flags)
                        .output()
                        .unwrap();
                    assert!(out.status.success(), "{what}");
                    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
                    assert_eq!(v["near_duplicate"], want, "{what}: pair {a} {b}: {v}");
                }
                negatives += rejected.len().min(4);
                configs += 1;
            }
        }
    }
    assert_eq!(configs, 16);
    eprintln!("rejected candidates checked: {negatives}");
    assert!(
        negatives >= 16,
        "too few rejected candidates checked: {negatives}"
    );
}
