//! All pairs among N random fingerprints at k = 3, per design, on one thread and on
//! all: `cargo run --release --example all_pairs_timing -- [N]` (default 1,000,000).
//! Prints the best of 5 runs of each.
use neardup::index::{all_pairs, Design};
use rand::{RngExt, SeedableRng};
use std::time::Instant;

fn main() {
    let n: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(1_000_000);
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(1);
    let fps: Vec<u64> = (0..n).map(|_| rng.random()).collect();
    let one = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .unwrap();
    let auto = Design::for_all_pairs(n, 3);
    println!("Design::for_all_pairs({n}, 3): {:?}", auto.levels);
    for (name, design) in [
        ("k3-20", Design::k3_20()),
        ("k3-10", Design::k3_10()),
        ("k3-4", Design::k3_4()),
        ("auto", auto.clone()),
    ] {
        for (threads, pool) in [("one thread", Some(&one)), ("all threads", None)] {
            let mut best = f64::INFINITY;
            let mut found = 0;
            for _ in 0..5 {
                let t = Instant::now();
                let p = match pool {
                    Some(p) => p.install(|| all_pairs(&design, &fps).unwrap()),
                    None => all_pairs(&design, &fps).unwrap(),
                };
                best = best.min(t.elapsed().as_secs_f64());
                found = p.len();
            }
            println!("{name:6} {threads:11}: {best:.3} s ({found} pairs)");
        }
    }
}
