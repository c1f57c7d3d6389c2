//! The online deduper at scale: `check_and_insert` throughput from text, `check` latency
//! against N stored documents, memory per stored document, and the time to open the
//! state directory.
//!
//! ```sh
//! cargo run --release --example online_bench -- 1000000 [STATE_DIR]
//! cargo run --release --example online_bench -- open STATE_DIR   # open alone, timed
//! ```
//!
//! N generated documents of 250–400 words (about 1.4 KB; `neardup::synth`, 30 % planted
//! near-duplicates) go through `check_and_insert` on one thread, generated 50,000 at a
//! time outside the clock (the generator is slower than the deduper), so that 10 M
//! documents fit in memory; each chunk is also sketched alone as a batch run sketches
//! a record (`Pipeline::sketch_record`: the sketch and the site), the reference of the
//! throughput, and as the deduper sketches it (its settings leave out the simhash,
//! which its rule does not read): how much the deduper adds to its own sketching. The
//! calls are timed in stretches of 64 as well: the longest stretch shows the longest
//! wait behind a rebuild. Memory is the growth of the anonymous resident set. Then
//! 10,000 other generated documents of 420–520 words (about 2 KB, the size the latency
//! target names) are checked one by one, each timed. With STATE_DIR the deduper logs to
//! it (sync never, so that the disk does not dominate), is compacted, dropped and
//! reopened, timed (`SYNC=always`, or any `--sync` policy of `neardup stream`, sets the
//! log's policy; `online_sync_bench` compares the policies).
//! With the environment variable `RESERVE=K`, `Deduper::reserve(K)` is called first
//! (outside the clock): the tables are sized for K stored documents at once. With
//! `BATCH=K`, the documents go through `check_and_insert_many` K at a time (the
//! stretches are then the batches), sketched on `THREADS=T` threads (1 unless given;
//! the reference stays one thread). With `DOCS=FILE`, the N documents are read from FILE
//! (a plain dump of id, url and body), written there by the generator first when FILE
//! does not exist: an A/B of several builds at 10 M then pays the generator once
//! (it takes about 120 µs per document, 20 minutes for 10 M).

use neardup::online::SyncPolicy;
use neardup::synth::{Generator, SynthConfig};
use neardup::{Deduper, Pipeline};
use std::time::Instant;

fn rss_bytes() -> u64 {
    // The current anonymous resident set (not the peak): RssAnon of /proc/self/status.
    // File pages are left out: the log's mapped window (8 MiB whatever the state's
    // size) is the system's page cache.
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("RssAnon:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|kb| kb.parse::<u64>().ok())
        })
        .map_or(0, |kb| kb * 1024)
}

fn docs(n: usize, seed: u64) -> Generator {
    docs_of(n, seed, (250, 400))
}

fn docs_of(n: usize, seed: u64, words: (usize, usize)) -> Generator {
    Generator::new(SynthConfig {
        base_documents: (n as f64 / 1.6).ceil() as usize,
        words,
        duplicate_rate: 0.3,
        hosts: 1000,
        seed,
        ..Default::default()
    })
    .expect("valid settings")
}

/// One document of a `DOCS` dump: `u32` lengths (little-endian) of the id, the url
/// (`u32::MAX`: none) and the body, a byte (1: HTML), then the bytes.
fn dump(w: &mut impl std::io::Write, d: &neardup::Document) -> std::io::Result<()> {
    let url = d.url.as_deref();
    let (html, body) = match &d.body {
        neardup::Body::Text(s) => (0u8, s),
        neardup::Body::Html(s) => (1u8, s),
    };
    w.write_all(&(d.id.len() as u32).to_le_bytes())?;
    w.write_all(&url.map_or(u32::MAX, |u| u.len() as u32).to_le_bytes())?;
    w.write_all(&(body.len() as u32).to_le_bytes())?;
    w.write_all(&[html])?;
    w.write_all(d.id.as_bytes())?;
    w.write_all(url.unwrap_or("").as_bytes())?;
    w.write_all(body.as_bytes())
}

/// The next document of a `DOCS` dump ([`dump`]), `None` at its end.
fn undump(r: &mut impl std::io::Read) -> Option<neardup::Document> {
    let mut head = [0u8; 13];
    r.read_exact(&mut head).ok()?;
    let len = |i: usize| u32::from_le_bytes(head[i..i + 4].try_into().unwrap());
    let mut s = |n: usize| {
        let mut b = vec![0u8; n];
        r.read_exact(&mut b).expect("a whole document");
        String::from_utf8(b).expect("UTF-8")
    };
    let id = s(len(0) as usize);
    let url = (len(4) != u32::MAX).then(|| s(len(4) as usize));
    let text = s(len(8) as usize);
    let mut d = neardup::Document::text(id, String::new());
    d.body = match head[12] {
        1 => neardup::Body::Html(text),
        _ => neardup::Body::Text(text),
    };
    d.url = url;
    Some(d)
}

/// The N documents of the run: generated, or read from the `DOCS` dump (made first
/// when missing).
fn documents(n: usize) -> Box<dyn Iterator<Item = neardup::Document>> {
    let Ok(path) = std::env::var("DOCS") else {
        return Box::new(docs(n, 1).take(n).map(|(d, _)| d));
    };
    if !std::path::Path::new(&path).exists() {
        let tmp = format!("{path}.tmp");
        let mut w = std::io::BufWriter::new(std::fs::File::create(&tmp).expect("DOCS"));
        for (d, _) in docs(n, 1).take(n) {
            dump(&mut w, &d).expect("write DOCS");
        }
        std::io::Write::flush(&mut w).expect("write DOCS");
        std::fs::rename(&tmp, &path).expect("DOCS");
        eprintln!("{n} documents written to {path}");
    }
    let mut r =
        std::io::BufReader::with_capacity(1 << 20, std::fs::File::open(&path).expect("DOCS"));
    Box::new(std::iter::from_fn(move || undump(&mut r)).take(n))
}

fn main() {
    let mut args = std::env::args().skip(1);
    let first = args.next();
    if first.as_deref() == Some("open") {
        // `online_bench open STATE_DIR`: the time to open a state made before.
        let dir = args.next().expect("STATE_DIR");
        let pipeline = Pipeline::builder().build().unwrap();
        let t = Instant::now();
        let d = Deduper::open(dir.as_ref(), pipeline, SyncPolicy::Never).unwrap();
        println!(
            "open {:.1} s ({} documents)",
            t.elapsed().as_secs_f64(),
            d.len()
        );
        return;
    }
    let n: usize = first.map_or(100_000, |a| a.parse().expect("N"));
    let state = args.next();
    let env = |k: &str| std::env::var(k).ok().and_then(|v| v.parse::<usize>().ok());
    let batch = env("BATCH").unwrap_or(0);
    let pipeline = Pipeline::builder()
        .threads(Some(env("THREADS").unwrap_or(1)))
        .build()
        .unwrap();
    // The latency probes: about 2 KB each.
    let probes: Vec<neardup::Document> = docs_of(10_000, 2, (420, 520))
        .take(10_000)
        .map(|(d, _)| d)
        .collect();
    let probe_bytes = probes.iter().map(|d| d.body.len()).sum::<usize>() / probes.len();
    // The log's sync policy (`SYNC=always|never|N|Nms`, never by default: the disk
    // would dominate; `online_sync_bench` measures the policies side by side).
    let sync: SyncPolicy = std::env::var("SYNC")
        .map_or(Ok(SyncPolicy::Never), |s| s.parse())
        .expect("SYNC: always, never, N or Nms");
    if state.is_some() {
        println!("log sync policy: {sync:?}");
    }
    let d = match &state {
        Some(dir) => {
            let _ = std::fs::remove_dir_all(dir);
            Deduper::open(dir.as_ref(), pipeline.clone(), sync).unwrap()
        }
        None => Deduper::new(pipeline.clone()).unwrap(),
    };
    if let Some(k) = std::env::var("RESERVE").ok().and_then(|k| k.parse().ok()) {
        d.reserve(k).unwrap();
        println!("reserved room for {k} documents");
    }
    let (mut bytes, mut count, mut new) = (0u64, 0usize, 0usize);
    let (mut sketch_s, mut own_s, mut insert_s) = (0f64, 0f64, 0f64);
    let own = d.pipeline().clone();
    // The time of each stretch of 64 `check_and_insert` calls: a rebuild shows as a
    // long one (a caller of `check` waits for it).
    // Made (and its pages touched) before the resident set is first read.
    let stretch = if batch > 0 { batch } else { 64 };
    let mut stretches: Vec<f64> = vec![0.0; n / stretch + 1];
    let mut timed = 0;
    let mut gen = documents(n);
    let mut next = || -> Vec<neardup::Document> { gen.by_ref().take(50_000).collect() };
    // The first chunk is made before the resident set is read: later chunks reuse its
    // memory, so what grows is the deduper.
    let mut chunk = next();
    let before = rss_bytes();
    while !chunk.is_empty() {
        // A batch run's per-record work on the same text (sketch and site), one thread.
        let t = Instant::now();
        let mut x = 0u64;
        for doc in &chunk {
            x ^= pipeline.sketch_record(doc).map_or(0, |s| s.0.simhash);
        }
        std::hint::black_box(x);
        sketch_s += t.elapsed().as_secs_f64();
        // The same with the deduper's own settings (without the simhash, which its rule
        // does not read): the deduper's work beside its sketching.
        let t = Instant::now();
        let mut x = 0u64;
        for doc in &chunk {
            x ^= own.sketch_record(doc).map_or(0, |s| s.0.exact as u64);
        }
        std::hint::black_box(x);
        own_s += t.elapsed().as_secs_f64();
        let t = Instant::now();
        for group in chunk.chunks(stretch) {
            let g = Instant::now();
            if batch > 0 {
                for v in d.check_and_insert_many(group) {
                    if v.unwrap() == neardup::Verdict::New {
                        new += 1;
                    }
                }
            } else {
                for doc in group {
                    if d.check_and_insert(doc).unwrap() == neardup::Verdict::New {
                        new += 1;
                    }
                }
            }
            if group.len() == stretch {
                stretches[timed] = g.elapsed().as_secs_f64();
                timed += 1;
            }
        }
        insert_s += t.elapsed().as_secs_f64();
        bytes += chunk.iter().map(|d| d.body.len() as u64).sum::<u64>();
        count += chunk.len();
        if count % 1_000_000 < 50_000 {
            eprintln!("{count} documents, {new} stored");
        }
        drop(chunk);
        chunk = next();
    }
    let stored_bytes = rss_bytes().saturating_sub(before);
    let text_mb = bytes as f64 / 1e6;
    println!(
        "sketching alone (the batch pipeline's per-core work): {:.1} MB/s; check_and_insert: {:.1} % of it",
        text_mb / sketch_s,
        100.0 * sketch_s / insert_s
    );
    println!(
        "sketching as the deduper does (its settings: simhash {}): {:.1} MB/s; check_and_insert: {:.1} % of it",
        if own.sketcher().config().simhash { "on" } else { "off" },
        text_mb / own_s,
        100.0 * own_s / insert_s
    );
    println!(
        "check_and_insert: {count} documents ({text_mb:.0} MB of text) in {insert_s:.1} s: {:.1} MB/s, {:.1} µs per document; {new} stored",
        text_mb / insert_s,
        insert_s * 1e6 / count as f64
    );
    stretches.truncate(timed);
    stretches.sort_by(f64::total_cmp);
    println!(
        "stretches of {} documents: median {:.2} ms, longest {:.1} ms \
         (a rebuild: a check waits for it)",
        stretch,
        1e3 * stretches.get(stretches.len() / 2).copied().unwrap_or(0.0),
        1e3 * stretches.last().copied().unwrap_or(0.0)
    );
    println!(
        "memory: {:.0} MB resident for {new} stored documents: {:.0} bytes per stored document \
         ({:.0} bytes as the deduper counts its allocations)",
        stored_bytes as f64 / 1e6,
        stored_bytes as f64 / new as f64,
        d.memory_bytes() as f64 / new as f64
    );
    // Latency of `check` for documents the deduper has not seen (a different seed),
    // sketching included.
    let mut lat: Vec<f64> = Vec::with_capacity(10_000);
    let mut sketch_only: Vec<f64> = Vec::with_capacity(10_000);
    for doc in &probes {
        let t = Instant::now();
        let v = d.check(doc).expect("check");
        lat.push(t.elapsed().as_secs_f64() * 1e6);
        std::hint::black_box(v);
        let t = Instant::now();
        std::hint::black_box(pipeline.sketch_record(doc).ok());
        sketch_only.push(t.elapsed().as_secs_f64() * 1e6);
    }
    let pct = |v: &mut Vec<f64>, p: f64| {
        v.sort_by(f64::total_cmp);
        v[((v.len() - 1) as f64 * p) as usize]
    };
    println!(
        "check latency, documents of {probe_bytes} bytes on average, against {new} stored: median {:.1} µs, p99 {:.1} µs (sketching alone: median {:.1} µs, p99 {:.1} µs)",
        pct(&mut lat, 0.5),
        pct(&mut lat, 0.99),
        pct(&mut sketch_only, 0.5),
        pct(&mut sketch_only, 0.99)
    );
    if let Some(dir) = &state {
        let t = Instant::now();
        d.compact().unwrap();
        let compact_s = t.elapsed().as_secs_f64();
        drop(d);
        let t = Instant::now();
        let d = Deduper::open(dir.as_ref(), pipeline, SyncPolicy::Never).unwrap();
        println!(
            "state: compact {compact_s:.1} s, open {:.1} s ({} documents)",
            t.elapsed().as_secs_f64(),
            d.len()
        );
    }
}
