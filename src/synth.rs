//! Generated corpora with known ground truth (for tests, benches and the demo).
//!
//! Base documents are drawn from a Zipfian vocabulary of pronounceable synthetic words
//! (ChaCha8 with the caller's seed, so the output is the same on every machine). Each
//! base document may get near-duplicate variants of the kinds seeds 000/003 name as the
//! sources of near-duplicates on the web:
//!
//! | variant | change |
//! |---|---|
//! | `exact` | a byte-identical copy (another id) |
//! | `mirror` | the same text on another host |
//! | `edit` | a few words replaced by random words |
//! | `timestamp` | a date line appended |
//! | `header` | a breadcrumb/title line prepended |
//! | `rebrand` | one frequent word replaced everywhere by another |
//!
//! Every variant is listed in the truth with its base document.

use crate::document::Document;
use rand::RngExt;
use rand_chacha::rand_core::SeedableRng;
use rand_chacha::ChaCha8Rng;
use serde::Serialize;

/// Settings of [`generate`].
#[derive(Debug, Clone)]
pub struct SynthConfig {
    /// Number of base documents. Default 1000.
    pub base_documents: usize,
    /// Words per base document (uniform in this range). Default 150..=600.
    pub words: (usize, usize),
    /// Vocabulary size. Default 20000.
    pub vocabulary: usize,
    /// Zipf exponent of word frequencies. Default 1.0.
    pub zipf: f64,
    /// Probability that a base document gets variants. Default 0.3.
    pub duplicate_rate: f64,
    /// Variants per duplicated base document (uniform in 1..=max). Default 3.
    pub max_variants: usize,
    /// Words replaced by an `edit` variant. Default 1..=3.
    pub edit_words: (usize, usize),
    /// Number of hosts. Default 10.
    pub hosts: usize,
    /// Seed. Default 1.
    pub seed: u64,
}

impl Default for SynthConfig {
    fn default() -> Self {
        SynthConfig {
            base_documents: 1000,
            words: (150, 600),
            vocabulary: 20000,
            zipf: 1.0,
            duplicate_rate: 0.3,
            max_variants: 3,
            edit_words: (1, 3),
            hosts: 10,
            seed: 1,
        }
    }
}

/// A planted near-duplicate: `variant` was made from `base`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TruthPair {
    /// Id of the base document.
    pub base: String,
    /// Id of the variant.
    pub variant: String,
    /// Kind of variant.
    pub kind: &'static str,
}

/// A generated corpus.
#[derive(Debug, Clone)]
pub struct Corpus {
    /// Documents in output order (variants follow later, shuffled in).
    pub documents: Vec<Document>,
    /// The planted pairs.
    pub truth: Vec<TruthPair>,
}

fn word(rank: usize) -> String {
    const C: &[u8] = b"bcdfghjklmnprstvz";
    const V: &[u8] = b"aeiou";
    let mut r = rank + 1;
    let mut s = String::new();
    while r > 0 {
        s.push(C[r % C.len()] as char);
        r /= C.len();
        s.push(V[r % V.len()] as char);
        r /= V.len();
    }
    s
}

/// Generates a corpus.
pub fn generate(cfg: &SynthConfig) -> Corpus {
    let mut rng = ChaCha8Rng::seed_from_u64(cfg.seed);
    let vocab: Vec<String> = (0..cfg.vocabulary.max(2)).map(word).collect();
    // Zipf sampling by inverse CDF over cumulative weights.
    let mut cdf = Vec::with_capacity(vocab.len());
    let mut acc = 0.0;
    for r in 0..vocab.len() {
        acc += 1.0 / ((r + 1) as f64).powf(cfg.zipf);
        cdf.push(acc);
    }
    let draw = |rng: &mut ChaCha8Rng| -> usize {
        let x = rng.random::<f64>() * acc;
        cdf.partition_point(|&c| c < x).min(vocab.len() - 1)
    };
    let host = |h: usize| format!("site{h}.example");
    let mut docs: Vec<Document> = Vec::new();
    let mut truth = Vec::new();
    let mut variants: Vec<(usize, Document)> = Vec::new();
    for i in 0..cfg.base_documents {
        let n = rng.random_range(cfg.words.0..=cfg.words.1.max(cfg.words.0));
        let words: Vec<usize> = (0..n).map(|_| draw(&mut rng)).collect();
        let h = rng.random_range(0..cfg.hosts.max(1));
        let id = format!("doc{i:06}");
        let text = join(&vocab, &words);
        let url = format!("http://{}/page/{i}.html", host(h));
        if rng.random::<f64>() < cfg.duplicate_rate {
            let k = rng.random_range(1..=cfg.max_variants.max(1));
            for v in 0..k {
                let kind = ["exact", "mirror", "edit", "timestamp", "header", "rebrand"]
                    [rng.random_range(0..6)];
                let vid = format!("{id}-v{v}");
                let (vtext, vurl) = match kind {
                    "exact" => (text.clone(), url.clone()),
                    "mirror" => (
                        text.clone(),
                        format!(
                            "http://mirror{}.example/page/{i}.html",
                            rng.random_range(0..3)
                        ),
                    ),
                    "edit" => {
                        let mut w = words.clone();
                        let e = rng.random_range(
                            cfg.edit_words.0..=cfg.edit_words.1.max(cfg.edit_words.0),
                        );
                        for _ in 0..e {
                            let p = rng.random_range(0..w.len());
                            w[p] = draw(&mut rng);
                        }
                        (join(&vocab, &w), url.clone())
                    }
                    "timestamp" => (
                        format!(
                            "{text} Updated 2024-{:02}-{:02}",
                            rng.random_range(1..13),
                            rng.random_range(1..29)
                        ),
                        url.clone(),
                    ),
                    "header" => (
                        format!(
                            "Home > {} > Page {i}. {text}",
                            vocab[rng.random_range(0..50)]
                        ),
                        url.clone(),
                    ),
                    _ => {
                        // Rebrand: the document's most frequent word replaced everywhere.
                        let mut counts = std::collections::BTreeMap::new();
                        for &w in &words {
                            *counts.entry(w).or_insert(0usize) += 1;
                        }
                        let top = counts
                            .iter()
                            .max_by_key(|(w, c)| (**c, std::cmp::Reverse(**w)))
                            .map_or(0, |(w, _)| *w);
                        let w: Vec<usize> = words
                            .iter()
                            .map(|&x| if x == top { vocab.len() - 1 } else { x })
                            .collect();
                        (join(&vocab, &w), url.clone())
                    }
                };
                truth.push(TruthPair {
                    base: id.clone(),
                    variant: vid.clone(),
                    kind,
                });
                variants.push((i, Document::text(vid, vtext).with_url(vurl)));
            }
        }
        docs.push(Document::text(id, text).with_url(url));
    }
    // Mix variants into the corpus, each somewhere after its base.
    let mut out = Vec::with_capacity(docs.len() + variants.len());
    let mut vi = variants.into_iter().peekable();
    for (i, d) in docs.into_iter().enumerate() {
        out.push(d);
        while vi.peek().is_some_and(|(b, _)| *b < i) && rng.random::<f64>() < 0.5 {
            if let Some((_, v)) = vi.next() {
                out.push(v);
            }
        }
    }
    out.extend(vi.map(|(_, v)| v));
    Corpus {
        documents: out,
        truth,
    }
}

fn join(vocab: &[String], words: &[usize]) -> String {
    let mut s = String::new();
    for (k, &w) in words.iter().enumerate() {
        if k > 0 {
            s.push(if k % 17 == 0 { '.' } else { ' ' });
            if k % 17 == 0 {
                s.push(' ');
            }
        }
        s.push_str(&vocab[w]);
    }
    s
}
