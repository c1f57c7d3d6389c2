//! Stage one on one generated corpus: Broder supershingles vs Pugh checksums vs the
//! Charikar block index, plus the whole pipeline after sketching. Each bench asserts
//! its result inside the loop.
use criterion::{criterion_group, criterion_main, Criterion};
use neardup::candidates::{
    BucketLimits, CandidateGenerator, CandidateStats, CharikarBlocks, PughChecksums, Supershingles,
};
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
        (
            "broder-2-of-6",
            Box::new(Supershingles {
                min_shared: 2,
                limits,
            }),
        ),
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

fn config() -> Criterion {
    Criterion::default()
        .sample_size(10)
        .measurement_time(std::time::Duration::from_secs(3))
        .warm_up_time(std::time::Duration::from_secs(1))
}

criterion_group! { name = benches; config = config(); targets = stage_one }
criterion_main!(benches);
