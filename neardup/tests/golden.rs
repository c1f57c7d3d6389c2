//! Golden vectors: fixed inputs → fixed fingerprints and sketches. A dependency upgrade
//! or a refactor that changes any stable value fails here. If a change is intended,
//! bump the sketch format version and regenerate with `GOLDEN_PRINT=1 cargo test
//! --test golden -- --nocapture`.
use neardup::sketch::hash::{combine, combine128, mix64, term_fingerprint};
use neardup::sketch::shingle::shingle_fingerprint;
use neardup::{Document, SketchConfig, Sketcher};

fn show(name: &str, v: impl std::fmt::Debug) {
    if std::env::var_os("GOLDEN_PRINT").is_some() {
        println!("{name}: {v:x?}");
    }
}

#[test]
fn xxh3_is_the_specified_function() {
    // XXH3_64bits("", seed 0) from the xxHash specification's test vectors.
    assert_eq!(xxhash_rust::xxh3::xxh3_64(b""), 0x2D06800538D394C2);
}

#[test]
fn hash_functions() {
    let v = [
        term_fingerprint(b""),
        term_fingerprint(b"hello"),
        term_fingerprint("café".as_bytes()),
    ];
    show("terms", v);
    let m = [mix64(0), mix64(1), mix64(u64::MAX)];
    show("mix", m);
    let c = [
        combine(&[], 0),
        combine(&[1, 2, 3], 7),
        shingle_fingerprint(&[1, 2, 3]),
    ];
    show("combine", c);
    let c128 = combine128(&[1, 2, 3], 7);
    show("combine128", c128);
    assert_eq!(v, GOLDEN_TERMS);
    assert_eq!(m, GOLDEN_MIX);
    assert_eq!(c, GOLDEN_COMBINE);
    assert_eq!(c128, GOLDEN_COMBINE128);
}

fn html_doc(cjk: &str) -> Document {
    Document::html(
        "g1",
        format!(
            "<html><head><title>Golden</title></head><body><p>The quick brown fox jumps over \
             the lazy dog. <b>Pack</b> my box with five dozen liquor jugs; caf&eacute; Ζεύς \
             {cjk}.</p><img src=\"/logo.png\"></body></html>"
        ),
    )
    .with_url("http://example.com/a.html")
}

fn v1_config() -> SketchConfig {
    SketchConfig::builder()
        .tokenizer(neardup::sketch::tokenize::TokenizerVersion::V1)
        .build()
        .unwrap()
}

#[test]
fn version_2_sketches_the_terms_its_rules_give() {
    // Version 2 makes 東京 two terms; everything else of this document is a term of
    // both versions. So its sketch is version 1's of the document with the two
    // characters apart, and its settings differ only in the tokenizer.
    let v2 = Sketcher::new(SketchConfig::default()).unwrap();
    let v1 = Sketcher::new(v1_config()).unwrap();
    let got = v2.sketch(&html_doc("東京"));
    assert_eq!(got.terms, 23);
    assert_eq!(got, v1.sketch(&html_doc("東 京")));
    assert_ne!(got, v1.sketch(&html_doc("東京")));
    let c = SketchConfig {
        tokenizer: neardup::sketch::tokenize::TokenizerVersion::V1,
        ..SketchConfig::default()
    };
    assert_eq!(c, v1_config());
}

#[test]
fn version_1_sketch_of_a_fixed_document() {
    let sk = Sketcher::new(v1_config()).unwrap();
    let doc = html_doc("東京");
    let s = sk.sketch(&doc);
    show("supershingles", &s.supershingles);
    show("charikar", &s.charikar);
    show("simhash", s.simhash);
    show("exact", s.exact);
    assert_eq!(s.terms, 22);
    let a = sk.analyze(&doc);
    show("min_values[..4]", &a.min_values[..4]);
    assert_eq!(s.supershingles, GOLDEN_SS);
    assert_eq!(s.charikar, GOLDEN_CHARIKAR);
    assert_eq!(s.simhash, GOLDEN_SIMHASH);
    assert_eq!(s.exact, GOLDEN_EXACT);
    assert_eq!(a.min_values[..4], GOLDEN_MINS);
}

const GOLDEN_TERMS: [u64; 3] = [0x8dd651dbb1f3805f, 0xcb00d53c696816a8, 0xa18434ea11779815];
const GOLDEN_MIX: [u64; 3] = [0x0, 0x5692161d100b05e5, 0xb4d055fcf2cbbd7b];
const GOLDEN_COMBINE: [u64; 3] = [0x2d06800538d394c2, 0x278ad251747e2e79, 0xb95a92d5718a9e77];
const GOLDEN_COMBINE128: u128 = 0x3821db1ba31e67030f711caa71b0907a;
const GOLDEN_SS: [u64; 6] = [
    0x96fdf58aa7ab9db1,
    0xca0af569d2044cbd,
    0x6732474d54156175,
    0x66c8d6977b507cfa,
    0xa90f42783329ea24,
    0xd369579b6ba730d1,
];
const GOLDEN_CHARIKAR: [u64; 6] = [
    0x8e6aa1706666f0d3,
    0x2ec9844a0c43288e,
    0x4d3c4aefb88584ed,
    0x432c12e965640308,
    0x3b4c700b321788a,
    0xcc5004004a23ad,
];
const GOLDEN_SIMHASH: u64 = 0x13d82a8a128a5561;
const GOLDEN_EXACT: u128 = 0x23d2b698d3eb45b5ee846462c7907b94;
const GOLDEN_MINS: [u64; 4] = [0x8d8afb4, 0x847b694, 0x97ffcad, 0x1e96b929];

#[test]
fn rolling_shingles_equal_their_windows() {
    // The rolling computation gives each window's own fingerprint, with and without
    // wrap-around, for documents shorter and longer than k; appending keeps what is
    // already in the output. Documents long enough for the four side-by-side chains
    // (64 windows and more), with every remainder of windows over four, are included.
    let terms: Vec<u64> = (0..1100u64)
        .map(|i| neardup::sketch::hash::mix64(i * 7 + 1))
        .collect();
    let lengths = [0usize, 1, 2, 7, 8, 9, 11, 12, 13, 14, 15, 40]
        .into_iter()
        .chain(60..=80)
        .chain([200, 1001, 1100]);
    for n in lengths {
        for k in [1usize, 2, 5, 8, 10] {
            for wrap in [false, true] {
                let t = &terms[..n];
                let mut got = vec![42];
                neardup::sketch::shingle::shingles(t, k, wrap, &mut got);
                let mut want = vec![42];
                if n > 0 && n < k {
                    want.push(neardup::sketch::shingle::shingle_fingerprint(t));
                } else if n > 0 {
                    let count = if wrap { n } else { n - k + 1 };
                    for s in 0..count {
                        let w: Vec<u64> = (0..k).map(|j| t[(s + j) % n]).collect();
                        want.push(neardup::sketch::shingle::shingle_fingerprint(&w));
                    }
                }
                assert_eq!(got, want, "n {n} k {k} wrap {wrap}");
            }
        }
    }
}

/// A short digest of a whole sketch (every stored value, in order), so that one
/// constant pins a 1024-bit projection and 84 supershingles.
fn digest(s: &neardup::Sketch) -> u64 {
    let mut v: Vec<u64> = s.supershingles.clone();
    v.extend(&s.charikar);
    v.push(s.simhash);
    v.push(s.exact as u64);
    v.push((s.exact >> 64) as u64);
    v.push(s.terms as u64);
    v.extend(&s.pugh);
    combine(&v, 0x474f_4c44)
}

fn golden_doc() -> Document {
    Document::text(
        "g2",
        "Sphinx of black quartz, judge my vow. The five boxing wizards jump quickly; \
         how vexingly quick daft zebras jump! The quick brown fox jumps over the lazy dog \
         while the lazy dog sleeps and the fox jumps again over the sleeping dog.",
    )
}

#[test]
fn xxh3_at_several_lengths_and_seeds() {
    // Lengths at every XXH3 code-path boundary (0, 1–3, 4–8, 9–16, 17–128, 129–240, > 240).
    let data: Vec<u8> = (0..1000u32).map(|i| (i * 31 + 7) as u8).collect();
    let mut got = Vec::new();
    for seed in [0u64, 1, 0x9e37_79b9_7f4a_7c15] {
        for len in [0usize, 1, 3, 4, 8, 9, 16, 17, 128, 129, 240, 241, 1000] {
            got.push(xxhash_rust::xxh3::xxh3_64_with_seed(&data[..len], seed));
        }
    }
    show("xxh3", &got);
    assert_eq!(got, GOLDEN_XXH3);
}

#[test]
fn recall_weighted_and_pugh_sketches() {
    let doc = golden_doc();
    // The recall preset: 3-term shingles, 168 min-values in 84 supershingles, 1024
    // Charikar bits over shingles.
    let mut b = neardup::Pipeline::builder();
    b.preset(neardup::Preset::Recall);
    let recall = b.build().unwrap().sketcher().sketch(&doc);
    assert_eq!(
        (recall.supershingles.len(), recall.charikar.len()),
        (84, 16)
    );
    // Weighted projection: term weights and a title weight.
    let weighted_cfg = SketchConfig {
        term_weights: vec![("fox".into(), 5), ("dog".into(), 3)],
        title_weight: 4,
        ..SketchConfig::default()
    };
    let weighted = Sketcher::new(weighted_cfg).unwrap().sketch(&doc);
    // Pugh checksums, order-insensitive (the default) and order-sensitive, 2 repeats.
    let mut pugh_cfg = SketchConfig {
        pugh: Some(neardup::sketch::pugh::PughConfig {
            repeats: 2,
            ..Default::default()
        }),
        ..SketchConfig::default()
    };
    let pugh = Sketcher::new(pugh_cfg.clone()).unwrap().sketch(&doc);
    pugh_cfg.pugh = Some(neardup::sketch::pugh::PughConfig {
        repeats: 2,
        order: neardup::sketch::pugh::Order::Sensitive,
        ..Default::default()
    });
    let pugh_ordered = Sketcher::new(pugh_cfg).unwrap().sketch(&doc);
    let got = [
        digest(&recall),
        recall.charikar[0],
        digest(&weighted),
        weighted.charikar[0],
        digest(&pugh),
        digest(&pugh_ordered),
    ];
    show("recall/weighted/pugh", got);
    show("pugh", (&pugh.pugh, &pugh_ordered.pugh));
    assert_eq!(got, GOLDEN_SKETCHES);
    assert_eq!(pugh.pugh, GOLDEN_PUGH);
    assert_eq!(pugh_ordered.pugh, GOLDEN_PUGH_ORDERED);
    assert_ne!(
        weighted.charikar,
        Sketcher::new(SketchConfig::default())
            .unwrap()
            .sketch(&doc)
            .charikar
    );
}

// XXH3-64 of the bytes `(31 i + 7) mod 256`, lengths × seeds (seed-major); the first
// value is the specification's empty-input vector.
const GOLDEN_XXH3: [u64; 39] = [
    0x2d06800538d394c2,
    0x4c5cca45d0f4811f,
    0x15f7093b173d005c,
    0xdca012f95811b6b9,
    0xdec6a9a43575982e,
    0xcbe393399f17ffbd,
    0x7e484c18d74895d0,
    0x208bde5ee2bed407,
    0xf92b70eaa21a6288,
    0xf8f76713f2bb60fa,
    0xccc7375172c41f03,
    0xb3b630948ce4a00,
    0x989765d0ea7a5ecd,
    0x4dc5b0cc826f6703,
    0xa187bf012eca100,
    0x2d2f08ad1dcf5855,
    0x147ba1078a952951,
    0x93db64e0c78addf0,
    0x9b4ac94407ef94f7,
    0x5eb10bd46ebeb101,
    0x40ee90e37ff57a2c,
    0x6673c6814e935b97,
    0x9638166292586e74,
    0x8b1fdbbe81e5919e,
    0x74435d0ed97c22f9,
    0xb301e308a3550449,
    0x602b0e2cd6662c8b,
    0x2f3acd3805f81de3,
    0x79dd5d54d89480a,
    0x1a246e2efb9c9b2e,
    0x19ef7d3919108aff,
    0x9c98d3e24dc54d34,
    0xa106510078b0a252,
    0xb2caf8bf9648eff,
    0x95425530beb89fe8,
    0x29fa850b97ed9666,
    0x2d882e7899ff64cc,
    0x422e82e8913e49e0,
    0x75b5719d9f31a6a2,
];
const GOLDEN_SKETCHES: [u64; 6] = [
    0x2409ac278791608f,
    0x8a9a06185bc9db26,
    0x250b16f664794909,
    0x2ab2fd7068722241,
    0x6cd2dc0fa5c4acbb,
    0x4b2e99e5e9cffc99,
];
const GOLDEN_PUGH: [u64; 8] = [
    0x1e242eaa0eeac031,
    0xdddb72ad5f8f5634,
    0x7a7b6c07443dcb92,
    0xc0c3b9b1d7b890ee,
    0x8a367be0ef376716,
    0x257404976d727ddf,
    0x63cca4ea6293b43d,
    0xae68b8aba97692f3,
];
const GOLDEN_PUGH_ORDERED: [u64; 8] = [
    0x59fcc7e23930ec0,
    0x991f99d1b9937246,
    0x9d332ffa53df7a46,
    0x2dd3cd3dc532c8b0,
    0xa729db84f7dd1a94,
    0x687ce1223cbe77db,
    0xd1b045972c29615d,
    0xf617753b3d013ba8,
];
