//! Criterion benches of the sketching hot paths, each with a naive baseline beside it.
//! Inputs are generated (neardup::synth), so the benches run anywhere.
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use neardup::sketch::broder::MinHasher;
use neardup::sketch::charikar::Projector;
use neardup::sketch::tokenize::{Tokenizer, Tokens};
use neardup::synth::{generate, SynthConfig};
use neardup::{Document, SketchConfig, Sketcher};
use std::hint::black_box;

fn docs() -> Vec<Document> {
    generate(&SynthConfig {
        base_documents: 200,
        words: (200, 2000),
        seed: 3,
        ..Default::default()
    })
    .documents
}

fn html_docs(docs: &[Document]) -> Vec<Document> {
    docs.iter()
        .map(|d| {
            let words: Vec<&str> = d.body.as_str().split(' ').collect();
            let mut h = String::from("<html><head><title>Page</title><style>p{color:red}</style></head><body><div class=\"nav\"><a href=\"/\">Home</a></div>");
            for chunk in words.chunks(40) {
                h.push_str("<p>");
                h.push_str(&chunk.join(" <b>"));
                h.push_str("</p>\n");
            }
            h.push_str("<img src=\"/logo.png\"><!-- footer --></body></html>");
            Document::html(d.id.clone(), h).with_url("http://example.com/x")
        })
        .collect()
}

fn bytes(d: &[Document]) -> u64 {
    d.iter().map(|x| x.body.len() as u64).sum()
}

fn tokenize(c: &mut Criterion) {
    let text = docs();
    let html = html_docs(&text);
    let tok = Tokenizer::default();
    let mut g = c.benchmark_group("tokenize");
    for (name, set) in [("text", &text), ("html", &html)] {
        g.throughput(Throughput::Bytes(bytes(set)));
        g.bench_function(BenchmarkId::new("neardup", name), |b| {
            let mut t = Tokens::default();
            b.iter(|| {
                let mut n = 0;
                for d in set.iter() {
                    t.clear();
                    tok.tokenize(&d.body, d.url.as_deref(), &mut t);
                    n += t.fps.len();
                }
                assert!(n > 0);
                n
            })
        });
    }
    // Baseline: split on ASCII non-alphanumerics, lower-case, hash (the floor).
    g.throughput(Throughput::Bytes(bytes(&text)));
    g.bench_function(BenchmarkId::new("naive-split-hash", "text"), |b| {
        b.iter(|| {
            let mut x = 0u64;
            for d in &text {
                for w in d
                    .body
                    .as_str()
                    .split(|c: char| !c.is_alphanumeric())
                    .filter(|w| !w.is_empty())
                {
                    x ^= neardup::sketch::hash::term_fingerprint(w.to_lowercase().as_bytes());
                }
            }
            black_box(x)
        })
    });
    g.finish();
}

/// The term fingerprints of each generated document.
fn term_lists() -> Vec<Vec<u64>> {
    let tok = Tokenizer::default();
    docs()
        .iter()
        .map(|d| {
            let mut t = Tokens::default();
            tok.tokenize(&d.body, None, &mut t);
            t.fps
        })
        .collect()
}

fn shingles(c: &mut Criterion) {
    let terms = term_lists();
    let n: u64 = terms.iter().map(|t| t.len() as u64).sum();
    let mut g = c.benchmark_group("shingles8");
    g.throughput(Throughput::Elements(n));
    g.bench_function("neardup", |b| {
        let mut out = Vec::new();
        b.iter(|| {
            let mut x = 0u64;
            for t in &terms {
                out.clear();
                neardup::sketch::shingle::shingles(t, 8, false, &mut out);
                x ^= out[out.len() / 2];
            }
            black_box(x)
        })
    });
    // Baseline: the one rolling chain with the finalizer in the loop (the earlier way).
    const P: u64 = neardup::sketch::shingle::SHINGLE_BASE;
    let top = (1..8).fold(1u64, |p, _| p.wrapping_mul(P));
    let tag = 8u64.wrapping_mul(neardup::sketch::shingle::LENGTH_TAG);
    g.bench_function("one-chain", |b| {
        let mut out = Vec::new();
        b.iter(|| {
            let mut x = 0u64;
            for t in &terms {
                out.clear();
                let mut h = t[..8]
                    .iter()
                    .fold(0u64, |h, &v| h.wrapping_mul(P).wrapping_add(v));
                out.push(neardup::sketch::hash::mix64(h ^ tag));
                for (&leaving, &entering) in t.iter().zip(&t[8..]) {
                    h = h
                        .wrapping_sub(leaving.wrapping_mul(top))
                        .wrapping_mul(P)
                        .wrapping_add(entering);
                    out.push(neardup::sketch::hash::mix64(h ^ tag));
                }
                x ^= out[out.len() / 2];
            }
            black_box(x)
        })
    });
    g.finish();
}

fn minhash(c: &mut Criterion) {
    let text = docs();
    let tok = Tokenizer::default();
    let shingles: Vec<Vec<u64>> = text
        .iter()
        .map(|d| {
            let mut t = Tokens::default();
            tok.tokenize(&d.body, None, &mut t);
            let mut s = Vec::new();
            neardup::sketch::shingle::shingles(&t.fps, 8, false, &mut s);
            s
        })
        .collect();
    let n: u64 = shingles.iter().map(|s| s.len() as u64).sum();
    let mh = MinHasher::new(84, 0);
    let mut g = c.benchmark_group("minhash84");
    g.throughput(Throughput::Elements(n));
    g.bench_function("neardup", |b| {
        let mut out = vec![0u64; 84];
        b.iter(|| {
            for s in &shingles {
                mh.min_values(s, &mut out);
            }
            assert_ne!(out[0], u64::MAX);
            out[0]
        })
    });
    // Baseline: one pass over the shingles per hash function, as a textbook loop.
    let (mut h0, mut h1) = (vec![0u64; 84], vec![0u64; 84]);
    mh.min_values(&[0], &mut h0);
    mh.min_values(&[1], &mut h1);
    let ab: Vec<(u32, u32)> = (0..84)
        .map(|i| ((h1[i] as u32).wrapping_sub(h0[i] as u32), h0[i] as u32))
        .collect();
    g.bench_function("naive", |b| {
        b.iter(|| {
            let mut x = 0u32;
            for s in &shingles {
                for &(a, bb) in &ab {
                    x ^= s
                        .iter()
                        .map(|&v| {
                            a.wrapping_mul(neardup::sketch::broder::fold32(v))
                                .wrapping_add(bb)
                        })
                        .min()
                        .unwrap_or(u32::MAX);
                }
            }
            black_box(x)
        })
    });
    g.finish();
}

fn charikar(c: &mut Criterion) {
    let terms = term_lists();
    let n: u64 = terms.iter().map(|s| s.len() as u64).sum();
    let p = Projector::new(384, 2, 0);
    let mut g = c.benchmark_group("charikar384");
    g.throughput(Throughput::Elements(n));
    g.bench_function("neardup", |b| {
        let mut out = [0u64; 6];
        b.iter(|| {
            for t in &terms {
                p.project(t, &[], &mut out);
            }
            out[0]
        })
    });
    // Each vector path this CPU has, forced (the same bits on every path): AVX-512
    // counts 8 words a vector, AVX2 and portable 4 words in 64-bit integers.
    use neardup::sketch::{force_simd, simd_detect, SimdLevel};
    for path in [SimdLevel::Portable, SimdLevel::Avx2, SimdLevel::Avx512] {
        if path > simd_detect() {
            continue;
        }
        g.bench_function(BenchmarkId::new("neardup", format!("{path:?}")), |b| {
            force_simd(path).unwrap();
            let mut out = [0u64; 6];
            b.iter(|| {
                for t in &terms {
                    p.project(t, &[], &mut out);
                }
                out[0]
            })
        });
    }
    force_simd(simd_detect()).unwrap();
    // Baseline: an i32 counter per bit, ±1 per term occurrence.
    g.bench_function("naive", |b| {
        b.iter(|| {
            let mut x = 0u64;
            for t in &terms {
                let mut acc = [0i32; 384];
                for &f in t {
                    for (j, chunk) in acc.chunks_mut(64).enumerate() {
                        let w = p.feature_word(f, j);
                        for (l, a) in chunk.iter_mut().enumerate() {
                            *a += if w >> l & 1 == 1 { 1 } else { -1 };
                        }
                    }
                }
                x ^= acc
                    .iter()
                    .enumerate()
                    .fold(0u64, |h, (i, &a)| h ^ (((a > 0) as u64) << (i % 64)));
            }
            black_box(x)
        })
    });
    g.finish();
}

fn full_sketch(c: &mut Criterion) {
    let text = docs();
    let html = html_docs(&text);
    let sk = Sketcher::new(SketchConfig::default()).unwrap();
    let mut g = c.benchmark_group("sketch");
    for (name, set) in [("text", &text), ("html", &html)] {
        g.throughput(Throughput::Bytes(bytes(set)));
        g.bench_function(name, |b| {
            b.iter(|| {
                let mut x = 0;
                for d in set.iter() {
                    x ^= sk.sketch(d).simhash;
                }
                x
            })
        });
    }
    g.finish();
}

/// Generated text of a script without spaces: characters drawn from `alphabet` (a
/// Zipf-like choice, common characters first), a punctuation mark every 10 to 40.
fn script_docs(alphabet: &str, punct: char, seed: u64) -> Vec<Document> {
    use rand::{RngExt, SeedableRng};
    let chars: Vec<char> = alphabet.chars().collect();
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    (0..200)
        .map(|i| {
            let n = rng.random_range(600..6000);
            let mut t = String::new();
            let mut next_punct = rng.random_range(10..40);
            for k in 0..n {
                let r: f64 = rng.random();
                t.push(chars[((r * r) * chars.len() as f64) as usize % chars.len()]);
                if k == next_punct {
                    t.push(punct);
                    next_punct += rng.random_range(10..40);
                }
            }
            Document::text(format!("d{i}"), t)
        })
        .collect()
}

/// Chinese, Japanese and Thai text: the tokenizer alone and the whole default sketch,
/// beside `unicode-segmentation`'s words hashed (what a tokenizer built on that crate
/// would cost at least).
fn scripts(c: &mut Criterion) {
    let zh = script_docs(
        "的一是不了人我在有他这中大来上个国到说们为子和你地出道也时年得就那要下以生会自着去之过家学对可她里后小么心多天而能好都然没日于起还发成事只作当想看文无开手十用主行方又如前所本见经头面公同三已老从动两长知民样现分将外但身些与高意进把法此实回二理美点月明其种声全工己话",
        '，',
        1,
    );
    let ja = script_docs(
        "のにはをたがでてとしれさあいうえおかきくけこまみむめもやゆよらりるろわんアイウエオカキクケコサシスセソタチツテトナニヌネノマミムメモラリルロンー日本語文書所有権呼行来見言思時人事",
        '、',
        2,
    );
    let th = script_docs("กขคงจฉชซญดตถทธนบปผพฟภมยรลวศษสหอฮะัาำิีึืุูเแโใไ่้๊๋็์", ' ', 3);
    let tok = Tokenizer::default();
    let sk = Sketcher::new(SketchConfig::default()).unwrap();
    let mut g = c.benchmark_group("scripts");
    for (name, set) in [("zh", &zh), ("ja", &ja), ("th", &th)] {
        g.throughput(Throughput::Bytes(bytes(set)));
        g.bench_function(BenchmarkId::new("tokenize", name), |b| {
            let mut t = Tokens::default();
            b.iter(|| {
                let mut n = 0;
                for d in set.iter() {
                    t.clear();
                    tok.tokenize(&d.body, None, &mut t);
                    n += t.fps.len();
                }
                n
            })
        });
        g.bench_function(
            BenchmarkId::new("unicode-segmentation-words-hash", name),
            |b| {
                use unicode_segmentation::UnicodeSegmentation;
                b.iter(|| {
                    let mut x = 0u64;
                    for d in set.iter() {
                        for w in d.body.as_str().unicode_words() {
                            x ^= neardup::sketch::hash::term_fingerprint(w.as_bytes());
                        }
                    }
                    black_box(x)
                })
            },
        );
        g.bench_function(BenchmarkId::new("sketch", name), |b| {
            b.iter(|| {
                let mut x = 0;
                for d in set.iter() {
                    x ^= sk.sketch(d).simhash;
                }
                x
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

criterion_group! { name = benches; config = config(); targets = tokenize, scripts, shingles, minhash, charikar, full_sketch }
criterion_main!(benches);
