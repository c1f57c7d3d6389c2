//! Every vector path this CPU has (portable, AVX2, AVX-512), forced in turn: the
//! min-hash and Charikar kernels equal their documented definitions, and whole sketches
//! (text and HTML, both presets, weighted projections, Pugh checksums) are identical on
//! every path. One test function: the path is process-wide.
use neardup::sketch::broder::MinHasher;
use neardup::sketch::charikar::{ProjectScratch, Projector};
use neardup::sketch::{force_simd, simd_detect, SimdLevel};
use neardup::synth::{generate, SynthConfig};
use neardup::{Pipeline, Preset, SketchConfig, Sketcher};
use rand::RngExt;
use rand_chacha::rand_core::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

mod common;
use common::reference;

fn sketches_on_this_path() -> Vec<neardup::Sketch> {
    let docs = generate(&SynthConfig {
        base_documents: 60,
        words: (5, 400),
        html_share: 0.5,
        seed: 3,
        ..Default::default()
    })
    .documents;
    let mut out = Vec::new();
    let mut recall = Pipeline::builder();
    recall.preset(Preset::Recall);
    let configs = [
        SketchConfig::default(),
        recall.build().unwrap().sketcher().config().clone(),
        SketchConfig {
            term_weights: vec![("the".into(), 3)],
            title_weight: 2,
            pugh: Some(Default::default()),
            ..SketchConfig::default()
        },
    ];
    for cfg in configs {
        let sk = Sketcher::new(cfg).unwrap();
        out.extend(docs.iter().map(|d| sk.sketch(d)));
    }
    out
}

fn kernels_equal_their_definitions(path: SimdLevel) {
    let mut rng = ChaCha8Rng::seed_from_u64(4);
    for m in [1usize, 84, 96, 168, 200] {
        let mh = MinHasher::new(m, 5);
        for len in [0usize, 1, 5, 17, 1000] {
            let xs: Vec<u64> = (0..len).map(|_| rng.random()).collect();
            let mut got = vec![0; m];
            mh.min_values(&xs, &mut got);
            let mut p = reference::param_rng(1 ^ 5u64.rotate_left(8));
            for (i, &g) in got.iter().enumerate() {
                let (a, b) = (p.next_u64() as u32 | 1, p.next_u64() as u32);
                let want = xs
                    .iter()
                    .map(|&x| a.wrapping_mul((x ^ (x >> 32)) as u32).wrapping_add(b) as u64)
                    .min()
                    .unwrap_or(u64::MAX);
                assert_eq!(g, want, "{path:?}: min-hash m {m} len {len} function {i}");
            }
        }
    }
    let mut s = ProjectScratch::default();
    for bits in [64usize, 384, 1024] {
        let proj = Projector::new(bits, 2, 9);
        let mut seeds = reference::param_rng(2 ^ 9u64.rotate_left(8));
        let seeds: Vec<u64> = (0..bits / 64).map(|_| seeds.next_u64()).collect();
        for (len, weighted) in [
            (0usize, false),
            (1, false),
            (17, false),
            (3000, false),
            (70_000, false),
            (50, true),
            (3000, true),
        ] {
            let xs: Vec<u64> = (0..len).map(|_| rng.random_range(0..200u64)).collect();
            let ws: Vec<u32> = if weighted {
                (0..len).map(|_| rng.random_range(1..5u32)).collect()
            } else {
                Vec::new()
            };
            let mut got = vec![0u64; bits / 64];
            proj.project(&xs, &ws, &mut s, &mut got);
            for (j, word) in got.iter().enumerate() {
                let mut sums = [0i64; 64];
                for (i, &x) in xs.iter().enumerate() {
                    let w = ws.get(i).map_or(1, |&w| w as i64);
                    let f = reference::mix64(x ^ seeds[j]);
                    for (l, o) in sums.iter_mut().enumerate() {
                        *o += if f >> l & 1 == 1 { w } else { -w };
                    }
                }
                for (l, &sum) in sums.iter().enumerate() {
                    assert_eq!(
                        word >> l & 1 == 1,
                        sum > 0,
                        "{path:?}: {bits} bits, {len} features, word {j} bit {l}"
                    );
                }
            }
        }
    }
}

#[test]
fn every_path_this_cpu_has_gives_the_same_bits() {
    let widest = simd_detect();
    let paths: Vec<SimdLevel> = [SimdLevel::Portable, SimdLevel::Avx2, SimdLevel::Avx512]
        .into_iter()
        .filter(|&l| l <= widest)
        .collect();
    eprintln!("paths tested: {paths:?}");
    let mut first: Option<Vec<neardup::Sketch>> = None;
    for &path in &paths {
        force_simd(path).unwrap();
        assert_eq!(neardup::sketch::simd_level(), path);
        kernels_equal_their_definitions(path);
        let got = sketches_on_this_path();
        match &first {
            None => first = Some(got),
            Some(want) => assert!(
                got == *want,
                "{path:?}: sketches differ from the portable path"
            ),
        }
    }
    if widest < SimdLevel::Avx512 {
        assert!(
            force_simd(SimdLevel::Avx512).is_err(),
            "a path the CPU lacks is an error"
        );
    }
}
