//! Times each sketching stage on one thread over a JSONL corpus held in memory, beside
//! a plain split-and-hash loop (the floor). Used to profile the hot paths on real data:
//!
//!     cargo run --release --example sketch_stages -- CORPUS.jsonl [--html]
//!
//! The corpus is any JSONL file with a `text` (or `html` with `--html`) field per line,
//! e.g. the Rust documentation corpus of `bench/run.sh`.
use neardup::sketch::broder::{supershingles, MinHasher};
use neardup::sketch::charikar::Projector;
use neardup::sketch::shingle::shingles;
use neardup::sketch::tokenize::{Tokenizer, Tokens};
use neardup::{Document, SketchConfig, Sketcher};
use std::hint::black_box;
use std::io::BufRead;
use std::time::Instant;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let path = args
        .first()
        .expect("usage: sketch_stages CORPUS.jsonl [--html]");
    let html = args.iter().any(|a| a == "--html");
    let file = std::fs::File::open(path).expect("open corpus");
    let mut docs = Vec::new();
    for line in std::io::BufReader::new(file).lines() {
        let line = line.expect("read");
        let v: serde_json::Value = serde_json::from_str(&line).expect("json");
        let url = v["url"].as_str().map(str::to_owned);
        let id = docs.len().to_string();
        let d = if html {
            Document::html(id, v["html"].as_str().unwrap_or_default())
        } else {
            Document::text(id, v["text"].as_str().unwrap_or_default())
        };
        docs.push(match url {
            Some(u) => d.with_url(u),
            None => d,
        });
    }
    let mb = docs.iter().map(|d| d.body.len()).sum::<usize>() as f64 / 1e6;
    println!("{} documents, {mb:.1} MB", docs.len());
    let report = |name: &str, t: Instant| {
        let s = t.elapsed().as_secs_f64();
        println!("{name:<24} {s:>7.3} s  {:>7.1} MB/s", mb / s);
    };

    let t = Instant::now();
    let mut x = 0u64;
    for d in &docs {
        for w in d
            .body
            .as_str()
            .split(|c: char| !c.is_ascii_alphanumeric())
            .filter(|w| !w.is_empty())
        {
            x ^= neardup::sketch::hash::term_fingerprint(w.as_bytes());
        }
    }
    black_box(x);
    report("split+hash (floor)", t);

    let tok = Tokenizer::default();
    // Each timed loop reuses its buffers; the inputs of the next stage are made
    // outside the timing.
    let mut tk = Tokens::default();
    let t = Instant::now();
    for d in &docs {
        tk.clear();
        tok.tokenize(&d.body, d.url.as_deref(), &mut tk);
        black_box(&tk);
    }
    report("tokenize", t);
    let terms: Vec<Vec<u64>> = docs
        .iter()
        .map(|d| {
            tk.clear();
            tok.tokenize(&d.body, d.url.as_deref(), &mut tk);
            tk.fps.clone()
        })
        .collect();
    let nterms: usize = terms.iter().map(Vec::len).sum();
    println!(
        "  {nterms} terms, {:.1} bytes per term",
        mb * 1e6 / nterms as f64
    );

    let mut v = Vec::new();
    let t = Instant::now();
    for f in &terms {
        v.clear();
        shingles(f, 8, false, &mut v);
        black_box(&v);
    }
    report("shingles", t);
    let sh: Vec<Vec<u64>> = terms
        .iter()
        .map(|f| {
            let mut v = Vec::new();
            shingles(f, 8, false, &mut v);
            v
        })
        .collect();

    let mh = MinHasher::new(84, 0);
    let t = Instant::now();
    let mut mins = vec![0u64; 84];
    let mut ss = [0u64; 6];
    for s in &sh {
        mh.min_values(s, &mut mins);
        supershingles(&mins, &mut ss);
        black_box(&ss);
    }
    report("min-hash + supershingles", t);

    let p = Projector::new(384, 2, 0).concat(&Projector::new(64, 3, 0));
    let t = Instant::now();
    let mut out = vec![0u64; 7];
    for f in &terms {
        p.project(f, &[], &mut out);
        black_box(&out);
    }
    report("charikar 384 + simhash", t);

    let t = Instant::now();
    for f in &terms {
        black_box(neardup::sketch::hash::combine128(f, 1));
    }
    report("exact fingerprint", t);

    let sk = Sketcher::new(SketchConfig::default()).expect("config");
    let t = Instant::now();
    for d in &docs {
        black_box(sk.sketch(d));
    }
    report("whole sketch", t);
}
