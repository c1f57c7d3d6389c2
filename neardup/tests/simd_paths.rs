//! Every vector path this CPU has (portable, AVX2, AVX-512), forced in turn: the
//! min-hash and Charikar kernels equal their documented definitions, and whole sketches
//! (text and HTML, both presets, weighted projections, Pugh checksums, Charikar over
//! shingles) are identical on every path, and with the simhash left out they are the
//! same but for it. One test function: the path is process-wide.
use neardup::sketch::charikar::Projector;
use neardup::sketch::{force_simd, simd_detect, SimdLevel};
use neardup::synth::{generate, SynthConfig};
use neardup::{Pipeline, Preset, SketchConfig, Sketcher};

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
        SketchConfig {
            charikar_features: neardup::Features::Shingles,
            ..SketchConfig::default()
        },
    ];
    for cfg in configs {
        let sk = Sketcher::new(cfg.clone()).unwrap();
        // Without the simhash (one projection of the Charikar bits alone, not 448 bits
        // in one pass): every other part the same, the simhash 0.
        let without = Sketcher::new(SketchConfig {
            simhash: false,
            ..cfg
        })
        .unwrap();
        for d in &docs {
            let s = sk.sketch(d);
            let mut want = s.clone();
            want.simhash = 0;
            assert_eq!(without.sketch(d), want, "{}", d.id);
            out.push(s);
        }
    }
    out
}

fn kernels_equal_their_definitions(path: SimdLevel) {
    let what = format!("{path:?}");
    for m in [1usize, 84, 96, 168, 200] {
        reference::check_min_values(m, &what);
    }
    for bits in [64usize, 192, 384, 1024] {
        for weighted in [false, true] {
            reference::check_projection(&Projector::new(bits, 2, 9), weighted, &what);
        }
    }
    for bits in [384usize, 1024] {
        let p = Projector::new(bits, 2, 9).concat(&Projector::new(64, 3, 9));
        reference::check_projection(&p, false, &what);
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
