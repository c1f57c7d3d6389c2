//! The online deduper's hot paths, on generated documents of 250–400 words
//! (`neardup::synth`, 30 % planted near-duplicates), one thread, state in memory:
//!
//! * `check_and_insert` of 20,000 documents into an empty deduper, growing its tables
//!   as they come, and with [`Deduper::reserve`] first (the tables sized once);
//! * `check` of one document against 100,000 stored;
//! * the reference the throughput target is measured against: a batch run's per-record
//!   work on the same documents, [`Pipeline::sketch_record`] (sketch and site).
//!
//! Criterion reports documents per second; the ratio of `check_and_insert` to the
//! sketching alone is the figure `examples/online_bench.rs` reports at scale (there at
//! up to 10 M stored, where the tables are far out of cache).
use criterion::{criterion_group, criterion_main, BatchSize, Criterion, Throughput};
use neardup::synth::{Generator, SynthConfig};
use neardup::{Deduper, Document, Pipeline, Verdict};

fn docs(n: usize, seed: u64) -> Vec<Document> {
    Generator::new(SynthConfig {
        base_documents: (n as f64 / 1.6).ceil() as usize,
        words: (250, 400),
        duplicate_rate: 0.3,
        hosts: 100,
        seed,
        ..Default::default()
    })
    .expect("valid settings")
    .take(n)
    .map(|(d, _)| d)
    .collect()
}

fn online(c: &mut Criterion) {
    let pipeline = Pipeline::builder().build().unwrap();
    let stream = docs(20_000, 1);
    let mut g = c.benchmark_group("online");
    g.sample_size(10);
    g.measurement_time(std::time::Duration::from_secs(8));
    g.throughput(Throughput::Elements(stream.len() as u64));
    let run = |d: Deduper| {
        let mut new = 0usize;
        for doc in &stream {
            if d.check_and_insert(doc).unwrap() == Verdict::New {
                new += 1;
            }
        }
        // The generator plants duplicates: some documents are not new.
        assert!(new > 0 && new < stream.len());
        d
    };
    g.bench_function("check_and_insert 20k, growing from empty", |b| {
        b.iter_batched(
            || Deduper::new(pipeline.clone()).unwrap(),
            run,
            BatchSize::PerIteration,
        )
    });
    g.bench_function("check_and_insert 20k, reserved", |b| {
        b.iter_batched(
            || {
                let d = Deduper::new(pipeline.clone()).unwrap();
                d.reserve(stream.len()).unwrap();
                d
            },
            run,
            BatchSize::PerIteration,
        )
    });
    g.bench_function("sketch_record 20k (the batch reference)", |b| {
        b.iter(|| {
            let mut x = 0u64;
            for doc in &stream {
                x ^= pipeline.sketch_record(doc).map_or(0, |s| s.0.simhash);
            }
            x
        })
    });
    g.finish();

    let stored = Deduper::new(pipeline.clone()).unwrap();
    for doc in docs(100_000, 3) {
        stored.check_and_insert(&doc).unwrap();
    }
    let probes = docs(1_000, 4);
    let mut g = c.benchmark_group("online-check");
    g.throughput(Throughput::Elements(1));
    let mut i = 0;
    g.bench_function("check against 100k stored", |b| {
        b.iter(|| {
            i = (i + 1) % probes.len();
            stored.check(&probes[i]).unwrap()
        })
    });
    g.finish();
}

/// Lookups of absent keys in one of the deduper's tables, 3 M entries (out of the
/// cache, as in a big state), scanned eight cells at a time against one cell at a time
/// (the baseline). Both give the same sum (checked).
fn table(c: &mut Criterion) {
    use neardup::online::bench_support::LookupTable;
    let t = LookupTable::new(3_000_000);
    let probes: Vec<u64> = (0..100_000u64)
        .map(|i| neardup::sketch::hash::mix64(i ^ 0xdead_beef))
        .collect();
    let simd: u64 = probes.iter().map(|&h| t.lookup(h)).sum();
    let scalar: u64 = probes.iter().map(|&h| t.lookup_scalar(h)).sum();
    assert_eq!(simd, scalar);
    let mut g = c.benchmark_group("online-table");
    g.throughput(Throughput::Elements(probes.len() as u64));
    g.bench_function("lookup 100k in 3M, eight cells at a time", |b| {
        b.iter(|| probes.iter().map(|&h| t.lookup(h)).sum::<u64>())
    });
    g.bench_function("lookup 100k in 3M, one cell at a time (baseline)", |b| {
        b.iter(|| probes.iter().map(|&h| t.lookup_scalar(h)).sum::<u64>())
    });
    g.finish();
    // Growing a table from empty: the inserts and every rebuild on the way (the keys
    // are hashed from the slot, not read from stored sketches).
    let mut g = c.benchmark_group("online-table-grow");
    g.sample_size(10);
    g.throughput(Throughput::Elements(2_000_000));
    g.bench_function("insert 2M from empty", |b| {
        b.iter(|| LookupTable::new(2_000_000))
    });
    g.finish();
}

criterion_group!(benches, online, table);
criterion_main!(benches);
