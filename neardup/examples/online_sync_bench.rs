//! The online deduper's durable state under each sync policy: `check_and_insert`
//! records per second with the log flushed before each acknowledgement
//! (`SyncPolicy::Always`) from 1, 2 and 8 threads (threads share flushes: group commit),
//! beside `Never` from 1 thread, and the flushes each run made.
//!
//! ```sh
//! cargo run --release --example online_sync_bench -- [N] [DIR]
//! ```
//!
//! N generated documents (default 20,000; 250–400 words, 30 % planted near-duplicates,
//! generated before the clock) go into a fresh state under `DIR` (default: a temporary
//! directory; give one on the disk you mean to measure: flushes cost what that disk
//! costs) for each policy and thread count, the documents dealt to the threads in
//! turn. Prints one line per run and the ratio of each to `never`.

use neardup::online::fault::{self, Op};
use neardup::online::SyncPolicy;
use neardup::synth::{generate, SynthConfig};
use neardup::{Deduper, Document, Pipeline};
use std::time::Instant;

fn main() {
    let mut args = std::env::args().skip(1);
    let n: usize = args.next().map_or(20_000, |a| a.parse().expect("N"));
    let tmp = tempfile::tempdir().expect("a temporary directory");
    let base = args
        .next()
        .map_or_else(|| tmp.path().to_path_buf(), std::path::PathBuf::from);
    let docs: Vec<Document> = generate(&SynthConfig {
        base_documents: (n as f64 / 1.6).ceil() as usize,
        words: (250, 400),
        duplicate_rate: 0.3,
        hosts: 1000,
        seed: 17,
        ..Default::default()
    })
    .documents
    .into_iter()
    .take(n)
    .collect();
    let p = Pipeline::builder().build().expect("the default pipeline");
    let mut never = 0.0;
    for (policy, name, threads) in [
        (SyncPolicy::Never, "never", 1usize),
        (SyncPolicy::Always, "always", 1),
        (SyncPolicy::Always, "always", 2),
        (SyncPolicy::Always, "always", 8),
    ] {
        let dir = base.join(format!("sync-bench-{name}-{threads}"));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("the state directory");
        fault::watch(&dir);
        let d = Deduper::open(&dir, p.clone(), policy).expect("open");
        let start = Instant::now();
        std::thread::scope(|s| {
            for t in 0..threads {
                let (d, docs) = (&d, &docs);
                s.spawn(move || {
                    for x in docs.iter().skip(t).step_by(threads) {
                        d.check_and_insert(x).expect("check_and_insert");
                    }
                });
            }
        });
        let secs = start.elapsed().as_secs_f64();
        let syncs = fault::count(&dir, Op::Sync);
        let stored = d.len();
        drop(d);
        fault::clear(&dir);
        let _ = std::fs::remove_dir_all(&dir);
        let rate = n as f64 / secs;
        if name == "never" {
            never = rate;
        }
        println!(
            "{name:>6} {threads} thread(s): {n} records in {secs:.2} s, {rate:.0} records/s \
             ({:.3} of never), {syncs} flushes ({:.2} per stored record), {stored} stored",
            rate / never,
            syncs as f64 / stored.max(1) as f64
        );
    }
}
