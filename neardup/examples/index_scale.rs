//! Simhash index figures at scale (the guide's performance page, docs/performance.md):
//!
//! ```text
//! cargo run --release --example index_scale -- [STORED] [BATCH_STORED] [QUERIES]
//! ```
//!
//! (0 skips a part.)
//!
//! defaults 10 M stored fingerprints (online queries, k = 3, one thread: median and p99
//! latency, plain and compressed tables, bytes per fingerprint per table), 100 M stored
//! fingerprints streamed from a temporary file against a batch of 1 M queries (stored
//! fingerprints scanned per second per core), and all pairs among 1 M (k = 3).
//! Fingerprints are uniformly random (ChaCha8, fixed seeds); planted neighbours check
//! that every answer is found.
use neardup::index::{all_pairs, batch_query, CompressedIndex, Design, SimhashIndex};
use rand::RngExt;
use rand_chacha::rand_core::SeedableRng;
use rand_chacha::ChaCha8Rng;
use std::io::{BufReader, BufWriter, Read, Write};
use std::time::Instant;

fn flip(rng: &mut ChaCha8Rng, fp: u64, bits: u32) -> u64 {
    let mut out = fp;
    while (out ^ fp).count_ones() < bits {
        out ^= 1 << rng.random_range(0..64u32);
    }
    out
}

fn percentiles(mut ns: Vec<u64>) -> (f64, f64, f64) {
    ns.sort_unstable();
    let p = |q: f64| ns[((ns.len() - 1) as f64 * q) as usize] as f64 / 1000.0;
    let mean = ns.iter().sum::<u64>() as f64 / ns.len() as f64 / 1000.0;
    (p(0.5), p(0.99), mean)
}

fn online(n: usize, design: Design, name: &str) {
    let mut rng = ChaCha8Rng::seed_from_u64(1);
    let fps: Vec<u64> = (0..n).map(|_| rng.random()).collect();
    let t = Instant::now();
    let idx = SimhashIndex::new(design).unwrap();
    idx.extend(fps.iter().enumerate().map(|(i, &f)| (i as u64, f)));
    println!(
        "online {name}: {n} stored, {} tables, built in {:.1} s",
        idx.table_count(),
        t.elapsed().as_secs_f64()
    );
    let queries: Vec<(u64, Option<u64>)> = (0..200_000)
        .map(|i| {
            if i % 2 == 0 {
                let j = rng.random_range(0..n);
                let d = rng.random_range(0..=3);
                (flip(&mut rng, fps[j], d), Some(j as u64))
            } else {
                (rng.random(), None)
            }
        })
        .collect();
    // Queries run one after another on this thread.
    let run = |q: &dyn Fn(u64) -> Vec<neardup::index::Match>| {
        let mut ns = Vec::with_capacity(queries.len());
        for &(fp, want) in &queries {
            let t = Instant::now();
            let m = q(fp);
            ns.push(t.elapsed().as_nanos() as u64);
            if let Some(w) = want {
                assert!(m.iter().any(|m| m.id == w), "planted neighbour missed");
            }
        }
        percentiles(ns)
    };
    let (med, p99, mean) = run(&|fp| idx.query(fp));
    println!("  plain tables, 1 thread: median {med:.2} µs, p99 {p99:.2} µs, mean {mean:.2} µs");
    let t = Instant::now();
    let c = CompressedIndex::from_index(&idx);
    let build = t.elapsed().as_secs_f64();
    let (med, p99, mean) = run(&|fp| c.query(fp));
    println!(
        "  compressed tables ({:.2} bytes per fingerprint per table vs 16 plain, built in {build:.1} s): median {med:.2} µs, p99 {p99:.2} µs, mean {mean:.2} µs",
        c.bytes_per_fingerprint()
    );
    if name == "k3-10" {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.idx");
        let t = Instant::now();
        idx.save(&path).unwrap();
        let saved = t.elapsed().as_secs_f64();
        let bytes = std::fs::metadata(&path).unwrap().len();
        let t = Instant::now();
        let back = SimhashIndex::load(&path).unwrap();
        let loaded = t.elapsed().as_secs_f64();
        assert_eq!(back.len(), n);
        println!(
            "  saved in {saved:.1} s ({:.0} MB), loaded (tables rebuilt) in {loaded:.1} s",
            bytes as f64 / 1e6
        );
    }
    println!(
        "  peak memory so far {:.0} MB",
        neardup::pipeline::peak_memory_bytes().unwrap_or(0) as f64 / 1e6
    );
}

fn batch(stored: usize, queries: usize) {
    let shard: usize = std::env::var("SHARD")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1 << 20);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("stored.bin");
    let mut rng = ChaCha8Rng::seed_from_u64(2);
    let qs: Vec<u64> = (0..queries).map(|_| rng.random()).collect();
    // Stored set: random, plus one planted neighbour (distance 0..=3) of each of the
    // first 1000 queries.
    {
        let mut w = BufWriter::with_capacity(1 << 22, std::fs::File::create(&path).unwrap());
        for i in 0..stored as u64 {
            let fp = if (i as usize) < 1000 {
                flip(&mut rng, qs[i as usize], (i % 4) as u32)
            } else {
                rng.random()
            };
            w.write_all(&i.to_le_bytes()).unwrap();
            w.write_all(&fp.to_le_bytes()).unwrap();
        }
        w.flush().unwrap();
    }
    let threads = rayon::current_num_threads();
    for design in [Design::k3_4(), Design::k3_10()] {
        let mut r = BufReader::with_capacity(1 << 22, std::fs::File::open(&path).unwrap());
        let stream = std::iter::from_fn(move || {
            let mut b = [0u8; 16];
            match r.read_exact(&mut b) {
                Ok(()) => Some(Ok((
                    u64::from_le_bytes(b[..8].try_into().unwrap()),
                    u64::from_le_bytes(b[8..].try_into().unwrap()),
                ))),
                Err(_) => None,
            }
        });
        let t = Instant::now();
        let found = batch_query(&design, &qs, stream, shard).unwrap();
        let s = t.elapsed().as_secs_f64();
        let planted = found
            .iter()
            .filter(|&&(q, id, _)| (q as u64) == id && id < 1000)
            .count();
        assert_eq!(planted, 1000, "every planted neighbour found");
        println!(
            "batch {} tables: {queries} queries vs {stored} stored: {s:.1} s, {:.2} M stored/s on {threads} threads = {:.2} M/s per core; {} matches",
            design.tables().len(),
            stored as f64 / s / 1e6,
            stored as f64 / s / 1e6 / threads as f64,
            found.len()
        );
    }
}

fn main() {
    let args: Vec<usize> = std::env::args()
        .skip(1)
        .map(|a| a.parse().expect("arguments are numbers"))
        .collect();
    let n = args.first().copied().unwrap_or(10_000_000);
    let m = args.get(1).copied().unwrap_or(100_000_000);
    let q = args.get(2).copied().unwrap_or(1_000_000);
    if n > 0 {
        online(n, Design::k3_10(), "k3-10");
        online(n, Design::k3_16(), "k3-16");
    }
    if m > 0 {
        batch(m, q);
    }
    let mut rng = ChaCha8Rng::seed_from_u64(3);
    let fps: Vec<u64> = (0..1_000_000).map(|_| rng.random()).collect();
    let t = Instant::now();
    let p = all_pairs(&Design::k3_20(), &fps).unwrap();
    println!(
        "all pairs among 1 M (k = 3, 20 tables): {:.2} s on {} threads, {} pairs",
        t.elapsed().as_secs_f64(),
        rayon::current_num_threads(),
        p.len()
    );
}
