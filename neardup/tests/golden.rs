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

#[test]
fn default_sketch_of_a_fixed_document() {
    let sk = Sketcher::new(SketchConfig::default()).unwrap();
    let doc = Document::html(
        "g1",
        "<html><head><title>Golden</title></head><body><p>The quick brown fox jumps over the \
         lazy dog. <b>Pack</b> my box with five dozen liquor jugs; caf&eacute; Ζεύς 東京.</p>\
         <img src=\"/logo.png\"></body></html>",
    )
    .with_url("http://example.com/a.html");
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
    // already in the output.
    let terms: Vec<u64> = (0..40u64)
        .map(|i| neardup::sketch::hash::mix64(i * 7 + 1))
        .collect();
    for n in [0usize, 1, 2, 7, 8, 9, 11, 12, 13, 14, 15, 40] {
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
