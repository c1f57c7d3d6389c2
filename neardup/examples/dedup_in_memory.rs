//! The two-stage run on documents already in memory, timed the way
//! `bench/peers/peers.py` times its peers: the corpus is loaded first (untimed), then
//! sketching (both stages), the exact pre-pass, candidates, filter and clusters are
//! timed together through the library's `Pipeline::run`.
//!
//!     cargo run --release --example dedup_in_memory -- CORPUS.jsonl [THREADS]
//!
//! The corpus is a JSONL file with `id` and `text` fields per line (e.g. the Rust
//! documentation corpus of `bench/run.sh`). Prints one line with the seconds, the
//! counts and the peak memory; the CLI's `dedup` run, which also reads and parses the
//! file, is timed separately by the bench script.
use neardup::{Document, Pipeline};
use std::io::BufRead;
use std::time::Instant;

fn main() {
    let mut args = std::env::args().skip(1);
    let path = args
        .next()
        .expect("usage: dedup_in_memory CORPUS.jsonl [THREADS]");
    let threads = args.next().map(|t| t.parse::<usize>().expect("THREADS"));
    let file = std::fs::File::open(&path).expect("open corpus");
    let mut docs = Vec::new();
    for (i, line) in std::io::BufReader::new(file).lines().enumerate() {
        let line = line.expect("read");
        let v: serde_json::Value = serde_json::from_str(&line).expect("json");
        let id = v["id"]
            .as_str()
            .map_or_else(|| i.to_string(), str::to_owned);
        let d = Document::text(id, v["text"].as_str().unwrap_or_default());
        docs.push(match v["url"].as_str() {
            Some(u) => d.with_url(u),
            None => d,
        });
    }
    let n = docs.len();
    let mb = docs.iter().map(|d| d.body.len()).sum::<usize>() as f64 / 1e6;
    let pipeline = Pipeline::builder()
        .threads(threads)
        .build()
        .expect("pipeline");
    let t = Instant::now();
    let d = pipeline.run(docs).expect("run");
    let secs = t.elapsed().as_secs_f64();
    println!(
        "in memory: {secs:.3} s for {n} docs, {mb:.1} MB ({:.1} MB/s); kept {}, exact {}, near {}, verified pairs {}",
        mb / secs,
        d.stats.kept,
        d.stats.exact_duplicates,
        d.stats.near_duplicates,
        d.stats.verified
    );
    let s = &d.stats.seconds;
    println!(
        "  stages: sketch {:.3} s, exact {:.3} s, candidates {:.3} s, filter {:.3} s, clusters {:.3} s",
        s.sketch, s.exact, s.candidates, s.filter, s.cluster
    );
    if let Some(peak) = neardup::pipeline::peak_memory_bytes() {
        println!(
            "  peak memory {} MB (the loaded corpus included)",
            peak / 1_000_000
        );
    }
}
