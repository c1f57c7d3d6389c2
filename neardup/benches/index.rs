//! The simhash index: online query latency and all pairs on random fingerprints, with
//! a brute-force scan beside them. Results are asserted inside the loops.
use criterion::{criterion_group, criterion_main, Criterion};
use neardup::index::{all_pairs, batch_query, CompressedIndex, Design, SimhashIndex};
use rand::RngExt;
use rand_chacha::rand_core::SeedableRng;
use rand_chacha::ChaCha8Rng;

fn index(c: &mut Criterion) {
    let n = 1_000_000;
    let mut rng = ChaCha8Rng::seed_from_u64(1);
    let fps: Vec<u64> = (0..n).map(|_| rng.random()).collect();
    let idx = SimhashIndex::new(Design::k3_10()).unwrap();
    idx.extend(fps.iter().enumerate().map(|(i, &f)| (i as u64, f)));
    let mut g = c.benchmark_group("simhash-index-1M");
    let mut i = 0usize;
    g.bench_function("query-k3-10-tables", |b| {
        b.iter(|| {
            i = (i + 7919) % n;
            let q = fps[i] ^ 0b1001;
            let m = idx.query(q);
            assert!(m.iter().any(|m| m.id == i as u64 && m.distance == 2));
            m.len()
        })
    });
    let compressed = CompressedIndex::from_index(&idx);
    g.bench_function("query-k3-10-compressed-tables", |b| {
        b.iter(|| {
            i = (i + 7919) % n;
            let q = fps[i] ^ 0b1001;
            let m = compressed.query(q);
            assert!(m.iter().any(|m| m.id == i as u64 && m.distance == 2));
            m.len()
        })
    });
    g.bench_function("query-brute-force-scan", |b| {
        b.iter(|| {
            i = (i + 7919) % n;
            let q = fps[i] ^ 0b1001;
            let m = fps.iter().filter(|&&f| (f ^ q).count_ones() <= 3).count();
            assert!(m >= 1);
            m
        })
    });
    g.sample_size(10);
    // Batch: 100 k queries (the first 100 planted at distance 2 of stored ones) against
    // the 1 M stored fingerprints streamed past.
    let queries: Vec<u64> = (0..100_000)
        .map(|j| {
            if j < 100 {
                fps[j * 9973] ^ 0b11
            } else {
                rng.random()
            }
        })
        .collect();
    g.bench_function("batch-100k-queries-vs-1M-stored-k3-4", |b| {
        b.iter(|| {
            let stream = fps.iter().enumerate().map(|(i, &f)| Ok((i as u64, f)));
            let found = batch_query(&Design::k3_4(), &queries, stream, 1 << 18).unwrap();
            assert!(found.len() >= 100);
            found.len()
        })
    });
    g.bench_function("all-pairs-k3-20-tables", |b| {
        b.iter(|| {
            let p = all_pairs(&Design::k3_20(), &fps).unwrap();
            assert!(p.len() < 100, "random fingerprints are far apart");
            p.len()
        })
    });
    // On one core (the figure): every design that finds all pairs at k = 3.
    let one = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .unwrap();
    for (name, design) in [
        ("k3-20", Design::k3_20()),
        ("k3-10", Design::k3_10()),
        ("k3-4", Design::k3_4()),
    ] {
        g.bench_function(format!("all-pairs-{name}-one-core"), |b| {
            b.iter(|| {
                let p = one.install(|| all_pairs(&design, &fps).unwrap());
                assert!(p.len() < 100, "random fingerprints are far apart");
                p.len()
            })
        });
    }
    g.finish();
}

fn config() -> Criterion {
    Criterion::default()
        .sample_size(20)
        .measurement_time(std::time::Duration::from_secs(4))
        .warm_up_time(std::time::Duration::from_secs(1))
}

criterion_group! { name = benches; config = config(); targets = index }
criterion_main!(benches);
