//! Stage one on one generated corpus: Broder supershingles vs Pugh checksums vs the
//! Charikar block index; one bucketing pass's keys sorted whole against the keys that
//! may repeat set aside first (`repeated_first`); and the clusters' groups
//! out of a union-find of the size of the Rust documentation corpus, against the
//! vector-per-record way they were taken before. Each bench asserts its result inside
//! the loop.
use criterion::{criterion_group, criterion_main, Criterion};
use neardup::candidates::{
    BucketLimits, CandidateGenerator, CandidateStats, CharikarBlocks, PughChecksums, Supershingles,
};
use neardup::cluster::UnionFind;
use neardup::sketch::pugh::PughConfig;
use neardup::synth::{generate, SynthConfig};
use neardup::{Pipeline, SketchConfig};

fn stage_one(c: &mut Criterion) {
    let corpus = generate(&SynthConfig {
        base_documents: 20_000,
        words: (100, 300),
        duplicate_rate: 0.3,
        seed: 2,
        ..Default::default()
    });
    let cfg = SketchConfig::builder()
        .pugh(Some(PughConfig::default()))
        .build()
        .unwrap();
    let d = Pipeline::builder()
        .sketch_config(cfg)
        .build()
        .unwrap()
        .run(corpus.documents)
        .unwrap();
    let active: Vec<u32> = (0..d.sketches.len() as u32).collect();
    let limits = BucketLimits::default();
    let mut g = c.benchmark_group(format!("candidates/{}-docs", active.len()));
    let gens: Vec<(&str, Box<dyn CandidateGenerator>)> = vec![
        ("broder-2-of-6", Box::new(Supershingles::new(2, limits))),
        ("pugh-4-lists", Box::new(PughChecksums { limits })),
        (
            "charikar-blocks-12",
            Box::new(CharikarBlocks {
                max_distance: 12,
                limits,
            }),
        ),
    ];
    for (name, gen) in &gens {
        g.bench_function(*name, |b| {
            b.iter(|| {
                let pairs = gen
                    .candidates(&d.sketches, &active, &mut CandidateStats::default())
                    .expect("valid generator");
                assert!(!pairs.is_empty());
                pairs.len()
            })
        });
    }
    g.finish();
}

/// The union-find's sets of two or more, each sorted, in order of their smallest member,
/// taken the way `UnionFind::groups` once did: a vector per record, the
/// singletons dropped after.
fn groups_vector_per_record(uf: &mut UnionFind, n: usize) -> Vec<Vec<u32>> {
    let mut by_root: Vec<Vec<u32>> = vec![Vec::new(); n];
    for x in 0..n as u32 {
        by_root[uf.find(x) as usize].push(x);
    }
    let mut groups: Vec<Vec<u32>> = by_root.into_iter().filter(|g| g.len() > 1).collect();
    groups.sort_unstable_by_key(|g| g[0]);
    groups
}

fn clusters(c: &mut Criterion) {
    // 108,817 records and 21,417 pairs, as in the Rust docs corpus's run: pairs of
    // records close in input order, most clusters of two.
    let n = 108_817usize;
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let pairs: Vec<(u32, u32)> = (0..21_417)
        .map(|_| {
            let a = (next() % n as u64) as u32;
            let b = (a as u64 + 1 + next() % 50).min(n as u64 - 1) as u32;
            (a, b)
        })
        .collect();
    let build = || {
        let mut uf = UnionFind::new(n);
        for &(a, b) in &pairs {
            uf.union(a, b);
        }
        uf
    };
    let want = groups_vector_per_record(&mut build(), n);
    let mut g = c.benchmark_group(format!("clusters/{n}-records"));
    g.bench_function("groups", |b| {
        b.iter_batched(
            build,
            |mut uf| {
                let got = uf.groups();
                assert_eq!(got.len(), want.len());
                got
            },
            criterion::BatchSize::LargeInput,
        )
    });
    g.bench_function("groups-vector-per-record", |b| {
        b.iter_batched(
            build,
            |mut uf| {
                let got = groups_vector_per_record(&mut uf, n);
                assert_eq!(got.len(), want.len());
                got
            },
            criterion::BatchSize::LargeInput,
        )
    });
    g.finish();
    assert_eq!(build().groups(), want, "the same groups either way");
}

/// One stage-one pass over keys like the Rust documentation corpus's (88,000 keys,
/// about 2 % of them in buckets of two or three): the buckets of two or more, found by
/// sorting every key (`sort_hashed` alone, the earlier way) or by sorting only the
/// keys `repeated_first` keeps.
fn bucket_keys(c: &mut Criterion) {
    use neardup::candidates::{repeated_first, sort_hashed};
    use neardup::sketch::hash::mix64;
    let n = 88_000u64;
    let keys: Vec<(u64, u32)> = (0..n)
        .map(|i| {
            // Every 50th key shares its value with the one before: buckets of two.
            let v = if i % 50 == 1 { i - 1 } else { i };
            (mix64(v), i as u32)
        })
        .collect();
    let buckets = |k: &[(u64, u32)]| -> Vec<Vec<u32>> {
        k.chunk_by(|a, b| a.0 == b.0)
            .filter(|r| r.len() > 1)
            .map(|r| r.iter().map(|x| x.1).collect())
            .collect()
    };
    let mut want = keys.clone();
    want.sort_unstable();
    let want = buckets(&want);
    let mut g = c.benchmark_group(format!("bucket-keys/{n}"));
    g.bench_function("sort-all", |b| {
        b.iter_batched(
            || keys.clone(),
            |mut k| {
                sort_hashed(&mut k, |x| x.0);
                assert_eq!(buckets(&k), want);
            },
            criterion::BatchSize::LargeInput,
        )
    });
    g.bench_function("repeated-first", |b| {
        b.iter_batched(
            || keys.clone(),
            |mut k| {
                let m = repeated_first(&mut k, |x| x.0);
                sort_hashed(&mut k[..m], |x| x.0);
                assert_eq!(buckets(&k[..m]), want);
            },
            criterion::BatchSize::LargeInput,
        )
    });
    g.finish();
}

fn config() -> Criterion {
    Criterion::default()
        .sample_size(10)
        .measurement_time(std::time::Duration::from_secs(3))
        .warm_up_time(std::time::Duration::from_secs(1))
}

criterion_group! { name = benches; config = config(); targets = stage_one, bucket_keys, clusters }
criterion_main!(benches);
