//! Comparing algorithms on labelled pairs (seed 003's evaluation; issue "comparing
//! algorithms").
//!
//! Each labelled pair is sketched with the pipeline's settings, every measure the library
//! has is computed, and each algorithm's verdict at its configured threshold is scored
//! against the label (`label ≥ positive_min` = near-duplicate). A sweep gives, per
//! algorithm, precision and recall at every threshold and the best F1.

pub mod plot;

use crate::document::{Body, Document};
use crate::error::{Error, Result};
use crate::pipeline::Pipeline;
use crate::sketch::broder::{estimated_resemblance, shared_supershingles};
use crate::sketch::charikar::agreement;
use crate::sketch::Analysis;
use crate::verify::{Judgement, PairClass, Rule};
use rayon::prelude::*;
use serde::Serialize;
use std::io::BufRead;
use std::path::Path;

/// A pair of documents with a human label.
#[derive(Debug, Clone)]
pub struct LabelledPair {
    /// The pair's id (`id` field, or its line number).
    pub id: String,
    /// First document.
    pub a: Document,
    /// Second document.
    pub b: Document,
    /// The label; compared with [`EvalConfig::positive_min`].
    pub label: f64,
}

/// Reads labelled pairs: one JSON object per line with `text_a`/`text_b` (or
/// `html_a`/`html_b`), `label` (number), optional `url_a`/`url_b` or `url`, optional `id`.
pub fn read_pairs(path: &Path) -> Result<Vec<LabelledPair>> {
    let f = std::fs::File::open(path).map_err(|e| Error::io(path, e))?;
    let mut out = Vec::new();
    for (n, line) in std::io::BufReader::new(f).lines().enumerate() {
        let line = line.map_err(|e| Error::io(path, e))?;
        if line.trim().is_empty() {
            continue;
        }
        let v: serde_json::Value = serde_json::from_str(&line).map_err(|e| Error::BadRecord {
            source_name: path.display().to_string(),
            record: n as u64 + 1,
            id: None,
            reason: format!("malformed JSON: {e}"),
        })?;
        out.push(labelled_pair(
            &v,
            &path.display().to_string(),
            n as u64 + 1,
        )?);
    }
    Ok(out)
}

/// One labelled pair from its JSON object (the fields of [`read_pairs`]); `source` and
/// `record` (1-based) name it in errors, and `record` gives the id when it has none.
pub fn labelled_pair(v: &serde_json::Value, source: &str, record: u64) -> Result<LabelledPair> {
    let bad = |reason: String| Error::BadRecord {
        source_name: source.to_string(),
        record,
        id: None,
        reason,
    };
    let body = |side: &str| -> Result<Body> {
        match (
            v[format!("text_{side}")].as_str(),
            v[format!("html_{side}")].as_str(),
        ) {
            (Some(t), _) => Ok(Body::Text(t.to_string())),
            (None, Some(h)) => Ok(Body::Html(h.to_string())),
            _ => Err(bad(format!("missing text_{side} (or html_{side})"))),
        }
    };
    let label = v["label"]
        .as_f64()
        .ok_or_else(|| bad("missing numeric label".into()))?;
    let url = |side: &str| {
        v[format!("url_{side}")]
            .as_str()
            .or(v["url"].as_str())
            .map(str::to_owned)
    };
    let id = v["id"]
        .as_str()
        .map_or_else(|| format!("line {record}"), str::to_owned);
    Ok(LabelledPair {
        a: Document {
            id: format!("{id}/a"),
            url: url("a"),
            body: body("a")?,
            site: None,
            priority: None,
        },
        b: Document {
            id: format!("{id}/b"),
            url: url("b"),
            body: body("b")?,
            site: None,
            priority: None,
        },
        id,
        label,
    })
}

/// Thresholds of the measures that are not pipeline settings.
#[derive(Debug, Clone, Serialize)]
pub struct EvalConfig {
    /// Labels at or above this are near-duplicates. Default 1.
    pub positive_min: f64,
    /// simhash-64: near-duplicates at Hamming distance ≤ k. Default 3 (seeds 000/002).
    pub simhash_k: u32,
    /// minhash-estimate: near-duplicates at estimated resemblance ≥ this. Default 0.5.
    pub estimate_min: f64,
    /// jaccard: near-duplicates at exact shingle resemblance ≥ this. Default 0.5.
    pub jaccard_min: f64,
}

impl Default for EvalConfig {
    fn default() -> Self {
        EvalConfig {
            positive_min: 1.0,
            simhash_k: 3,
            estimate_min: 0.5,
            jaccard_min: 0.5,
        }
    }
}

/// Every measure for one pair.
#[derive(Debug, Clone, Serialize)]
pub struct PairScores {
    /// The label.
    pub label: f64,
    /// Equal exact fingerprints.
    pub exact: bool,
    /// Agreeing supershingles.
    pub shared_supershingles: usize,
    /// Agreeing Charikar bits.
    pub agreement: u32,
    /// Hamming distance of the 64-bit simhashes.
    pub simhash_distance: u32,
    /// Fraction of agreeing min-values.
    pub estimated_resemblance: f64,
    /// Exact resemblance (Jaccard) of the shingle sets.
    pub jaccard: f64,
    /// Agreeing Pugh bucket checksums (the configured ones, else 4 lists, 1 repeat).
    pub pugh_shared: usize,
    /// The pipeline's rule applied to the pair ([`Rule::judge`]): its parts and the
    /// verdict `near_duplicate`.
    pub judgement: Judgement,
}

/// Computes every measure of a pair of analysed documents with a pipeline's settings.
#[derive(Debug)]
pub struct Scorer {
    pcfg: crate::sketch::pugh::PughConfig,
    pugh: crate::sketch::pugh::Pugh,
    rule: Rule,
}

impl Scorer {
    /// A scorer for `pipeline`'s sketch settings (Pugh: the configured checksums, else
    /// 4 lists and 1 repeat).
    pub fn new(pipeline: &Pipeline) -> Self {
        let cfg = pipeline.sketcher().config();
        let pcfg = cfg.pugh.unwrap_or_default();
        Scorer {
            pcfg,
            pugh: crate::sketch::pugh::Pugh::new(pcfg, cfg.seed),
            rule: pipeline.rule().clone(),
        }
    }

    fn checksums(&self, a: &Analysis) -> Vec<u64> {
        let mut v = vec![0u64; self.pcfg.width()];
        self.pugh.checksums(
            if self.pcfg.shingles {
                &a.shingles
            } else {
                &a.terms
            },
            &mut v,
        );
        v
    }

    /// Every measure of the pair `(a, b)` of class `class`, with `label` carried along.
    pub fn score(&self, a: &Analysis, b: &Analysis, class: PairClass, label: f64) -> PairScores {
        let distinct = |v: &[u64]| {
            let mut v = v.to_vec();
            v.sort_unstable();
            v.dedup();
            v
        };
        let (sa, sb) = (distinct(&a.shingles), distinct(&b.shingles));
        let inter = count_common(&sa, &sb);
        let union = sa.len() + sb.len() - inter;
        PairScores {
            label,
            exact: a.sketch.exact == b.sketch.exact,
            shared_supershingles: shared_supershingles(
                &a.sketch.supershingles,
                &b.sketch.supershingles,
            ),
            agreement: agreement(&a.sketch.charikar, &b.sketch.charikar),
            simhash_distance: (a.sketch.simhash ^ b.sketch.simhash).count_ones(),
            estimated_resemblance: estimated_resemblance(&a.min_values, &b.min_values),
            jaccard: if union == 0 {
                0.0
            } else {
                inter as f64 / union as f64
            },
            pugh_shared: crate::sketch::pugh::Pugh::shared(&self.checksums(a), &self.checksums(b)),
            judgement: self.rule.judge(class, a.sketch.as_ref(), b.sketch.as_ref()),
        }
    }
}

/// One document of a [`Comparison`].
#[derive(Debug, Clone, Serialize)]
#[non_exhaustive]
pub struct Side {
    /// The document's id.
    pub id: String,
    /// Its terms.
    pub terms: u32,
    /// Its shingles.
    pub shingles: usize,
    /// Its site, if it has one (by the pipeline's site mode).
    pub site: Option<String>,
}

/// Two documents compared under a pipeline's configuration: every measure, and the
/// pipeline's verdict on the pair (`scores.judgement.near_duplicate`) — what `neardup
/// pair` prints.
#[derive(Debug, Clone, Serialize)]
#[non_exhaustive]
pub struct Comparison {
    /// The first document.
    pub a: Side,
    /// The second document.
    pub b: Side,
    /// Every measure, and the rule's judgement.
    pub scores: PairScores,
    /// Agreeing megashingles (pairs of supershingles).
    pub megashingles_shared: usize,
    /// Megashingles per document.
    pub megashingles: usize,
}

impl Comparison {
    /// The JSON object of `pair --json` (and of the Python package's `pair`): every
    /// measure of the comparison, and `near_duplicate`, the verdict `dedup` applies.
    pub fn to_json(&self, pipeline: &Pipeline) -> serde_json::Value {
        let c = self;
        let s = &c.scores;
        let j = s.judgement;
        let cfg = pipeline.sketcher().config();
        serde_json::json!({
            "a": c.a,
            "b": c.b,
            "class": j.class,
            "near_duplicate": j.near_duplicate,
            "rule": {
                "candidates": pipeline.rule().candidates().name(),
                "stage_two": pipeline.rule().name(),
                "exact": j.exact,
                "candidate": j.candidate,
                "accepted": j.accepted,
                "high_recall": j.high_recall,
            },
            "exact_duplicate": s.exact,
            "jaccard_shingles": s.jaccard,
            "estimated_resemblance": s.estimated_resemblance,
            "supershingles_shared": s.shared_supershingles,
            "supershingles": cfg.supershingles,
            "megashingles_shared": c.megashingles_shared,
            "megashingles": c.megashingles,
            "charikar_agreement": s.agreement,
            "charikar_bits": cfg.charikar_bits,
            "simhash64_distance": s.simhash_distance,
            "pugh_shared": s.pugh_shared,
        })
    }
}

/// Compares two documents under `pipeline`'s settings and rule (the same verdict the
/// pipeline applies in a run; boilerplate removal, which needs a corpus, is not
/// applied).
pub fn compare(pipeline: &Pipeline, a: &Document, b: &Document) -> Comparison {
    let sk = pipeline.sketcher();
    let (x, y) = (sk.analyze(a), sk.analyze(b));
    let class = pipeline.pair_class(a, b);
    let scores = Scorer::new(pipeline).score(&x, &y, class, 0.0);
    let (ma, mb) = (
        crate::sketch::broder::megashingles(&x.sketch.supershingles),
        crate::sketch::broder::megashingles(&y.sketch.supershingles),
    );
    let side = |d: &Document, z: &Analysis| Side {
        id: d.id.clone(),
        terms: z.sketch.terms,
        shingles: z.shingles.len(),
        site: pipeline.site_of(d),
    };
    Comparison {
        a: side(a, &x),
        b: side(b, &y),
        megashingles_shared: ma.iter().zip(&mb).filter(|(p, q)| p == q).count(),
        megashingles: ma.len(),
        scores,
    }
}

/// Computes every measure for every pair, in parallel.
pub fn score_pairs(pipeline: &Pipeline, pairs: &[LabelledPair]) -> Vec<PairScores> {
    let sk = pipeline.sketcher();
    let scorer = Scorer::new(pipeline);
    pairs
        .par_iter()
        .map(|p| {
            let class = pipeline.pair_class(&p.a, &p.b);
            scorer.score(&sk.analyze(&p.a), &sk.analyze(&p.b), class, p.label)
        })
        .collect()
}

fn count_common(a: &[u64], b: &[u64]) -> usize {
    let (mut i, mut j, mut n) = (0, 0, 0);
    while i < a.len() && j < b.len() {
        match a[i].cmp(&b[j]) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                n += 1;
                i += 1;
                j += 1;
            }
        }
    }
    n
}

/// Confusion counts and derived measures.
#[derive(Debug, Clone, Copy, Default, Serialize, PartialEq)]
pub struct Confusion {
    /// True positives.
    pub tp: u64,
    /// False positives.
    pub fp: u64,
    /// False negatives.
    #[serde(rename = "fn")]
    pub fn_: u64,
    /// True negatives.
    pub tn: u64,
    /// tp / (tp + fp); 0 when nothing is predicted positive.
    pub precision: f64,
    /// tp / (tp + fn); 0 when there are no positives.
    pub recall: f64,
    /// Harmonic mean of precision and recall; 0 when both are 0.
    pub f1: f64,
}

impl Confusion {
    /// Counts `(predicted, actual)` outcomes.
    pub fn of(outcomes: impl IntoIterator<Item = (bool, bool)>) -> Self {
        let mut c = Confusion::default();
        for (pred, actual) in outcomes {
            match (pred, actual) {
                (true, true) => c.tp += 1,
                (true, false) => c.fp += 1,
                (false, true) => c.fn_ += 1,
                (false, false) => c.tn += 1,
            }
        }
        let ratio = |a: u64, b: u64| if b == 0 { 0.0 } else { a as f64 / b as f64 };
        c.precision = ratio(c.tp, c.tp + c.fp);
        c.recall = ratio(c.tp, c.tp + c.fn_);
        c.f1 = if c.precision + c.recall == 0.0 {
            0.0
        } else {
            2.0 * c.precision * c.recall / (c.precision + c.recall)
        };
        c
    }
}

/// One point of a sweep: the rule "score ≥ threshold".
#[derive(Debug, Clone, Serialize)]
pub struct SweepPoint {
    /// The threshold (inclusive).
    pub threshold: f64,
    /// Precision there.
    pub precision: f64,
    /// Recall there.
    pub recall: f64,
    /// F1 there.
    pub f1: f64,
}

/// One algorithm's result.
#[derive(Debug, Clone, Serialize)]
#[non_exhaustive]
pub struct AlgorithmResult {
    /// Name.
    pub name: String,
    /// Its parameters.
    pub params: serde_json::Value,
    /// Counts and measures at the configured parameters.
    #[serde(flatten)]
    pub confusion: Confusion,
    /// Precision/recall at every threshold of its score (with `--sweep`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sweep: Option<Vec<SweepPoint>>,
    /// The sweep point of best F1.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub best: Option<SweepPoint>,
    /// Its verdict on each pair, in the order of the scores (not in the JSON report:
    /// for views of its false positives and false negatives).
    #[serde(skip)]
    pub predicted: Vec<bool>,
}

/// The whole evaluation.
#[derive(Debug, Clone, Serialize)]
#[non_exhaustive]
pub struct EvalReport {
    /// Pairs labelled near-duplicate.
    pub positives: u64,
    /// Other pairs.
    pub negatives: u64,
    /// One entry per algorithm.
    pub algorithms: Vec<AlgorithmResult>,
}

impl EvalReport {
    /// The precision–recall curve of every algorithm swept: `(name, [(recall,
    /// precision)])`, as [`plot::pr_curves`] draws them.
    pub fn curves(&self) -> Vec<(String, Vec<(f64, f64)>)> {
        self.algorithms
            .iter()
            .filter_map(|a| {
                let s = a.sweep.as_ref()?;
                Some((
                    a.name.clone(),
                    s.iter().map(|p| (p.recall, p.precision)).collect(),
                ))
            })
            .collect()
    }

    /// The curves drawn as one SVG chart.
    pub fn plot(&self) -> String {
        plot::pr_curves("Precision–recall on labelled pairs", &self.curves())
    }
}

/// Precision/recall of "score ≥ t" for every distinct score `t`, highest first.
pub fn sweep(scores: &[(f64, bool)]) -> Vec<SweepPoint> {
    let mut s: Vec<(f64, bool)> = scores.to_vec();
    s.sort_by(|a, b| b.0.total_cmp(&a.0));
    let positives = s.iter().filter(|x| x.1).count() as f64;
    let mut out = Vec::new();
    let (mut tp, mut fp) = (0.0, 0.0);
    let mut i = 0;
    while i < s.len() {
        let t = s[i].0;
        while i < s.len() && s[i].0 == t {
            if s[i].1 {
                tp += 1.0
            } else {
                fp += 1.0
            }
            i += 1;
        }
        let precision = tp / (tp + fp);
        let recall = if positives == 0.0 {
            0.0
        } else {
            tp / positives
        };
        let f1 = if precision + recall == 0.0 {
            0.0
        } else {
            2.0 * precision * recall / (precision + recall)
        };
        out.push(SweepPoint {
            threshold: t,
            precision,
            recall,
            f1,
        });
    }
    out
}

/// Scores every algorithm; `broder`, `charikar`, `combined` and
/// `combined-high-recall` use the pipeline's settings.
pub fn evaluate(
    pipeline: &Pipeline,
    scores: &[PairScores],
    cfg: &EvalConfig,
    with_sweep: bool,
) -> EvalReport {
    let min_shared = pipeline.min_shared();
    let pcfg = pipeline.sketcher().config().pugh.unwrap_or_default();
    let t = pipeline.charikar_threshold();
    let acc = pipeline.accept_shared();
    let stage2 = |s: &PairScores| s.judgement.candidate && s.judgement.accepted;
    let hr = pipeline.high_recall_threshold();
    let actual: Vec<bool> = scores.iter().map(|s| s.label >= cfg.positive_min).collect();
    let positives = actual.iter().filter(|&&a| a).count() as u64;
    // (name, params, verdict, score for the sweep: higher = more similar)
    type Rule<'a> = (
        &'a str,
        serde_json::Value,
        Box<dyn Fn(&PairScores) -> bool + 'a>,
        Option<Box<dyn Fn(&PairScores) -> f64 + 'a>>,
    );
    let rules: Vec<Rule<'_>> = vec![
        (
            "configured",
            serde_json::json!({"candidates": pipeline.rule().candidates().name(), "rule": pipeline.rule().name()}),
            Box::new(|s| s.judgement.near_duplicate),
            None,
        ),
        (
            "broder",
            serde_json::json!({"min_shared": min_shared}),
            Box::new(move |s| s.shared_supershingles >= min_shared),
            Some(Box::new(|s| s.shared_supershingles as f64)),
        ),
        (
            "charikar",
            serde_json::json!({"min_agreement": t}),
            Box::new(move |s| s.agreement >= t),
            Some(Box::new(|s| s.agreement as f64)),
        ),
        (
            "combined",
            serde_json::json!({"min_shared": min_shared, "min_agreement": t, "or_min_shared": acc}),
            Box::new(stage2),
            Some(Box::new(move |s| {
                if s.judgement.candidate {
                    s.agreement as f64
                } else {
                    -1.0
                }
            })),
        ),
        (
            "combined-high-recall",
            serde_json::json!({"min_shared": min_shared, "min_agreement": t, "or_min_shared": acc, "high_recall": hr}),
            Box::new(move |s| stage2(s) || s.judgement.high_recall),
            Some(Box::new(
                move |s| {
                    if stage2(s) {
                        1e9
                    } else {
                        s.agreement as f64
                    }
                },
            )),
        ),
        (
            "simhash64",
            serde_json::json!({"max_distance": cfg.simhash_k}),
            Box::new(|s| s.simhash_distance <= cfg.simhash_k),
            Some(Box::new(|s| -(s.simhash_distance as f64))),
        ),
        (
            "pugh",
            serde_json::json!({"lists": pcfg.lists, "repeats": pcfg.repeats, "order": pcfg.order}),
            Box::new(|s| s.pugh_shared >= 1),
            Some(Box::new(|s| s.pugh_shared as f64)),
        ),
        ("exact", serde_json::json!({}), Box::new(|s| s.exact), None),
        (
            "minhash-estimate",
            serde_json::json!({"min_resemblance": cfg.estimate_min}),
            Box::new(|s| s.estimated_resemblance >= cfg.estimate_min),
            Some(Box::new(|s| s.estimated_resemblance)),
        ),
        (
            "jaccard",
            serde_json::json!({"min_resemblance": cfg.jaccard_min}),
            Box::new(|s| s.jaccard >= cfg.jaccard_min),
            Some(Box::new(|s| s.jaccard)),
        ),
    ];
    let k = pipeline.sketcher().config().shingle_size;
    let algorithms = rules
        .into_iter()
        .map(|(name, mut params, verdict, score)| {
            if let serde_json::Value::Object(m) = &mut params {
                m.insert("shingle_size".into(), k.into());
            }
            let predicted: Vec<bool> = scores.iter().map(&verdict).collect();
            let confusion = Confusion::of(predicted.iter().copied().zip(actual.iter().copied()));
            let sw = (with_sweep)
                .then(|| {
                    score.as_ref().map(|f| {
                        sweep(
                            &scores
                                .iter()
                                .zip(&actual)
                                .map(|(s, &a)| (f(s), a))
                                .collect::<Vec<_>>(),
                        )
                    })
                })
                .flatten();
            let best = sw
                .as_ref()
                .and_then(|v| v.iter().max_by(|a, b| a.f1.total_cmp(&b.f1)).cloned());
            AlgorithmResult {
                name: name.to_string(),
                params,
                confusion,
                sweep: sw,
                best,
                predicted,
            }
        })
        .collect();
    EvalReport {
        positives,
        negatives: scores.len() as u64 - positives,
        algorithms,
    }
}

/// Reads ground truth: JSONL with `base`/`variant` (as `neardup synth` writes) or `a`/`b`
/// ids per line. Pairs are closed transitively (variants of one base are near-duplicates
/// of each other).
pub fn read_truth(path: &Path) -> Result<Vec<Planted>> {
    let text = std::fs::read_to_string(path).map_err(|e| Error::io(path, e))?;
    let mut out = Vec::new();
    for (n, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let v: serde_json::Value = serde_json::from_str(line).map_err(|e| Error::BadRecord {
            source_name: path.display().to_string(),
            record: n as u64 + 1,
            id: None,
            reason: format!("malformed JSON: {e}"),
        })?;
        let get = |a: &str, b: &str| v[a].as_str().or(v[b].as_str()).map(str::to_owned);
        match (get("base", "a"), get("variant", "b")) {
            (Some(base), Some(variant)) => out.push(Planted {
                base,
                variant,
                kind: v["kind"].as_str().unwrap_or("").to_string(),
            }),
            _ => {
                return Err(Error::BadRecord {
                    source_name: path.display().to_string(),
                    record: n as u64 + 1,
                    id: None,
                    reason: "expected base/variant or a/b ids".into(),
                })
            }
        }
    }
    Ok(out)
}

/// A planted near-duplicate pair of a truth file (`neardup synth --truth`: base,
/// variant, kind; or `a`, `b`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Planted {
    /// One record's id.
    pub base: String,
    /// The other record's id.
    pub variant: String,
    /// The kind of variant (empty when the file does not say).
    pub kind: String,
}

impl Planted {
    /// A pair without a kind.
    pub fn new(base: impl Into<String>, variant: impl Into<String>) -> Planted {
        Planted {
            base: base.into(),
            variant: variant.into(),
            kind: String::new(),
        }
    }
}

/// Pair counts of one class of pairs.
#[derive(Debug, Clone, Copy, Default, Serialize)]
pub struct PairCounts {
    /// Reported pairs that are true.
    pub tp: u64,
    /// Reported pairs.
    pub reported: u64,
    /// True pairs.
    pub truth: u64,
    /// tp / reported.
    pub precision: f64,
    /// tp / truth.
    pub recall: f64,
}

impl PairCounts {
    fn finish(mut self) -> Self {
        self.precision = if self.reported == 0 {
            0.0
        } else {
            self.tp as f64 / self.reported as f64
        };
        self.recall = if self.truth == 0 {
            0.0
        } else {
            self.tp as f64 / self.truth as f64
        };
        self
    }
}

/// One algorithm's end-to-end result on a corpus with ground truth.
#[derive(Debug, Clone, Serialize)]
#[non_exhaustive]
pub struct CorpusResult {
    /// Name.
    pub name: String,
    /// Stage one and stage two.
    pub stages: (String, String),
    /// All pairs (pairs within a reported cluster vs pairs within a truth group).
    pub all: PairCounts,
    /// Same-site pairs only.
    pub same_site: PairCounts,
    /// Cross-site pairs only.
    pub cross_site: PairCounts,
    /// F1 over all pairs.
    pub f1: f64,
    /// Wall-clock seconds of the run.
    pub seconds: f64,
    /// Peak resident memory of the process after the run (Linux), monotone over the
    /// algorithms run before it.
    pub peak_rss_bytes: Option<u64>,
    /// Per kind of planted pair: `(kind, planted pairs, pairs found in one cluster)`.
    pub recall_by_kind: Vec<(String, u64, u64)>,
    /// `[k, documents with k near-duplicates]`, k ≥ 1 (seed 003 §1.2.3.2).
    pub near_duplicates_per_document: Vec<(u64, u64)>,
    /// `[d, reported pairs whose term multisets differ in d terms]` (a sample of at most
    /// 5000 pairs), d bucketed by powers of two: 0, 1, 2, 3–4, 5–8, ….
    pub term_differences: Vec<(u64, u64)>,
}

/// Runs each `(name, pipeline)` end to end over `docs` and scores the clusters against
/// the truth pairs (closed transitively). Reported pairs are all pairs within a reported
/// cluster (exact duplicates included).
pub fn evaluate_corpus(
    docs: &[Document],
    truth: &[Planted],
    algorithms: &[(String, Pipeline)],
) -> Result<Vec<CorpusResult>> {
    let index: ahash::AHashMap<&str, u32> = docs
        .iter()
        .enumerate()
        .map(|(i, d)| (d.id.as_str(), i as u32))
        .collect();
    let mut uf = crate::cluster::UnionFind::new(docs.len());
    let mut planted: Vec<(u32, u32, &str)> = Vec::new();
    for t in truth {
        if let (Some(&x), Some(&y)) = (index.get(t.base.as_str()), index.get(t.variant.as_str())) {
            uf.union(x, y);
            planted.push((x, y, t.kind.as_str()));
        }
    }
    let mut truth_pairs: ahash::AHashSet<(u32, u32)> = ahash::AHashSet::new();
    for g in uf.groups() {
        for i in 0..g.len() {
            for j in i + 1..g.len() {
                truth_pairs.insert((g[i], g[j]));
            }
        }
    }
    let mut out = Vec::new();
    for (name, pipeline) in algorithms {
        let start = std::time::Instant::now();
        let d = pipeline.run(docs.iter().cloned())?;
        let seconds = start.elapsed().as_secs_f64();
        let class = |a: u32, b: u32| {
            crate::verify::PairClass::of(d.site_of[a as usize], d.site_of[b as usize])
        };
        let (mut all, mut same, mut cross) = (
            PairCounts::default(),
            PairCounts::default(),
            PairCounts::default(),
        );
        for &(a, b) in &truth_pairs {
            all.truth += 1;
            match class(a, b) {
                crate::verify::PairClass::SameSite => same.truth += 1,
                crate::verify::PairClass::CrossSite => cross.truth += 1,
                crate::verify::PairClass::Unknown => {}
            }
        }
        let mut reported: Vec<(u32, u32)> = Vec::new();
        let mut per_doc: std::collections::BTreeMap<u64, u64> = Default::default();
        for c in &d.clusters {
            *per_doc.entry(c.members.len() as u64 - 1).or_default() += c.members.len() as u64;
            for i in 0..c.members.len() {
                for j in i + 1..c.members.len() {
                    let p = (c.members[i], c.members[j]);
                    let t = truth_pairs.contains(&p) as u64;
                    all.reported += 1;
                    all.tp += t;
                    match class(p.0, p.1) {
                        crate::verify::PairClass::SameSite => {
                            same.reported += 1;
                            same.tp += t;
                        }
                        crate::verify::PairClass::CrossSite => {
                            cross.reported += 1;
                            cross.tp += t;
                        }
                        crate::verify::PairClass::Unknown => {}
                    }
                    if reported.len() < 5000 {
                        reported.push(p);
                    }
                }
            }
        }
        let tok = pipeline.sketcher().tokenizer();
        let mut diffs: std::collections::BTreeMap<u64, u64> = Default::default();
        for &(a, b) in &reported {
            let d = term_difference(tok, &docs[a as usize], &docs[b as usize]);
            let bucket = if d <= 2 {
                d
            } else {
                (d - 1).next_power_of_two()
            };
            *diffs.entry(bucket).or_default() += 1;
        }
        let mut cluster_of = vec![u32::MAX; docs.len()];
        for (k, c) in d.clusters.iter().enumerate() {
            for &m in &c.members {
                cluster_of[m as usize] = k as u32;
            }
        }
        let mut by_kind: std::collections::BTreeMap<&str, (u64, u64)> = Default::default();
        for &(a, b, kind) in &planted {
            let e = by_kind.entry(kind).or_default();
            e.0 += 1;
            let (ca, cb) = (cluster_of[a as usize], cluster_of[b as usize]);
            e.1 += u64::from(ca != u32::MAX && ca == cb);
        }
        let (all, same, cross) = (all.finish(), same.finish(), cross.finish());
        let f1 = if all.precision + all.recall == 0.0 {
            0.0
        } else {
            2.0 * all.precision * all.recall / (all.precision + all.recall)
        };
        out.push(CorpusResult {
            name: name.clone(),
            stages: pipeline.describe(),
            all,
            same_site: same,
            cross_site: cross,
            f1,
            seconds,
            peak_rss_bytes: crate::pipeline::peak_memory_bytes(),
            recall_by_kind: by_kind
                .into_iter()
                .map(|(k, (n, f))| (k.to_string(), n, f))
                .collect(),
            near_duplicates_per_document: per_doc.into_iter().collect(),
            term_differences: diffs.into_iter().collect(),
        });
    }
    Ok(out)
}

/// Size of the symmetric difference of the two documents' term multisets.
fn term_difference(tok: &crate::sketch::tokenize::Tokenizer, a: &Document, b: &Document) -> u64 {
    let mut ta = crate::sketch::tokenize::Tokens::default();
    let mut tb = crate::sketch::tokenize::Tokens::default();
    tok.tokenize(&a.body, a.url.as_deref(), &mut ta);
    tok.tokenize(&b.body, b.url.as_deref(), &mut tb);
    ta.fps.sort_unstable();
    tb.fps.sort_unstable();
    let common = count_common(&ta.fps, &tb.fps) as u64;
    ta.fps.len() as u64 + tb.fps.len() as u64 - 2 * common
}
