//! Single-threaded sketching throughput on a JSONL corpus (`{"text"}` or `{"html"}`).
//!
//! `cargo run --release --example sketch_throughput -- CORPUS.jsonl`
use neardup::{Body, Document, SketchConfig, Sketcher};
use std::io::BufRead;
use std::time::Instant;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let path = std::env::args()
        .nth(1)
        .ok_or("usage: sketch_throughput CORPUS.jsonl")?;
    let mut docs = Vec::new();
    for line in std::io::BufReader::new(std::fs::File::open(path)?).lines() {
        let v: serde_json::Value = serde_json::from_str(&line?)?;
        let url = v["url"].as_str().map(str::to_owned);
        let body = match (v["text"].as_str(), v["html"].as_str()) {
            (Some(t), _) => Body::Text(t.to_owned()),
            (None, Some(h)) => Body::Html(h.to_owned()),
            _ => continue,
        };
        docs.push(Document {
            id: String::new(),
            url,
            body,
        });
    }
    let bytes: usize = docs.iter().map(|d| d.body.len()).sum();
    let sk = Sketcher::new(SketchConfig::default())?;
    let tok = sk.tokenizer();
    let mut t = neardup::tokenize::Tokens::default();
    let start = Instant::now();
    let mut nterms = 0usize;
    for d in &docs {
        t.clear();
        tok.tokenize(&d.body, d.url.as_deref(), &mut t);
        nterms += t.fps.len();
    }
    let tt = start.elapsed().as_secs_f64();
    let mut scratch = neardup::sketch::Scratch::default();
    let start = Instant::now();
    let mut x = 0u64;
    for d in &docs {
        x ^= sk.sketch_with(d, &mut scratch).simhash;
    }
    let st = start.elapsed().as_secs_f64();
    // Per stage, on the tokenized documents.
    let toks: Vec<Vec<u64>> = docs
        .iter()
        .map(|d| {
            let mut t = neardup::tokenize::Tokens::default();
            tok.tokenize(&d.body, d.url.as_deref(), &mut t);
            t.fps
        })
        .collect();
    let mut sh = Vec::new();
    let start = Instant::now();
    for t in &toks {
        sh.clear();
        neardup::shingle::shingles(t, 8, false, &mut sh);
        x ^= sh.first().copied().unwrap_or(0);
    }
    let shingle_t = start.elapsed().as_secs_f64();
    let mut mins = vec![0u64; 84];
    let start = Instant::now();
    for t in &toks {
        sh.clear();
        neardup::shingle::shingles(t, 8, false, &mut sh);
        sk.minhasher().min_values(&sh, &mut mins);
        x ^= mins[0];
    }
    let minhash_t = start.elapsed().as_secs_f64() - shingle_t;
    let proj = neardup::charikar::Projector::new(384, 2, 0);
    let mut ps = neardup::charikar::ProjectScratch::default();
    let mut out = vec![0u64; 6];
    let start = Instant::now();
    for t in &toks {
        proj.project(t, &[], &mut ps, &mut out);
        x ^= out[0];
    }
    let charikar_t = start.elapsed().as_secs_f64();
    let start = Instant::now();
    for t in &toks {
        x ^= neardup::hash::combine128(t, 1) as u64;
    }
    let exact_t = start.elapsed().as_secs_f64();
    println!("stages: shingle {shingle_t:.2}s minhash {minhash_t:.2}s charikar384 {charikar_t:.2}s exact {exact_t:.2}s");
    let mb = bytes as f64 / 1e6;
    println!("docs {} MB {:.1} terms {} | tokenize {:.2}s {:.0} MB/s | full sketch {:.2}s {:.0} MB/s ({x:x})",
        docs.len(), mb, nterms, tt, mb / tt, st, mb / st);
    Ok(())
}
