//! `neardup eval`: score every algorithm on labelled pairs or a corpus with ground truth.

use crate::config::ParamFlags;
use anyhow::{Context, Result};
use clap::Args;
use neardup::eval::EvalConfig;
use neardup::io::{Fields, Input, Reader};
use neardup::persist::AtomicFile;
use neardup::pipeline::Preset;
use neardup::settings::Params;
use neardup::Pipeline;
use serde_json::json;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;

#[derive(Args)]
pub struct EvalArgs {
    /// Labelled pairs, JSONL: text_a/text_b (or html_a/html_b), label, optional url.
    #[arg(long, required_unless_present = "corpus", conflicts_with = "corpus")]
    pub pairs: Option<PathBuf>,
    /// A corpus (any input format of `dedup`) to run every algorithm on end to end ...
    #[arg(long, requires = "truth")]
    pub corpus: Option<String>,
    /// ... against this ground truth: JSONL of base/variant (as `synth` writes) or a/b ids.
    #[arg(long)]
    pub truth: Option<PathBuf>,
    /// Labels at or above this count as near-duplicates.
    #[arg(long, default_value_t = EvalConfig::default().positive_min)]
    pub positive_min: f64,
    /// simhash-64 rule: Hamming distance at most this.
    #[arg(long, default_value_t = EvalConfig::default().simhash_k)]
    pub simhash_k: u32,
    /// minhash-estimate rule: estimated resemblance at least this.
    #[arg(long, default_value_t = EvalConfig::default().estimate_min)]
    pub estimate_min: f64,
    /// jaccard rule: exact shingle resemblance at least this.
    #[arg(long, default_value_t = EvalConfig::default().jaccard_min)]
    pub jaccard_min: f64,
    /// Also sweep every threshold: precision/recall curves and the best F1.
    #[arg(long)]
    pub sweep: bool,
    /// Write the numbers as JSON.
    #[arg(long)]
    pub json: Option<PathBuf>,
    /// Write every measure of every pair as JSONL (for your own analysis).
    #[arg(long)]
    pub scores: Option<PathBuf>,
    /// Draw precision–recall curves (implies --sweep) as SVG; with --corpus, the
    /// log–log distribution of near-duplicates per document.
    #[arg(long)]
    pub plot: Option<PathBuf>,
    /// Write one self-contained HTML page (labelled pairs; implies --sweep): every
    /// algorithm's precision and recall, the curves, and its false positives and false
    /// negatives side by side as word diffs.
    #[arg(long, conflicts_with = "corpus")]
    pub html: Option<PathBuf>,
    #[command(flatten)]
    pub params: ParamFlags,
}

/// A stage two that keeps nothing (only exact duplicates remain).
#[derive(Debug)]
pub struct KeepNothing;

impl neardup::verify::filter::PairFilter for KeepNothing {
    fn name(&self) -> String {
        "none kept".into()
    }
    fn accept(&self, _: neardup::SketchRef<'_>, _: neardup::SketchRef<'_>) -> bool {
        false
    }
}

/// `eval --corpus FILE --truth FILE`: every algorithm run over a corpus with planted
/// near-duplicates, scored against the truth.
pub fn eval_corpus(args: &EvalArgs, params: &Params, corpus: &str, truth: &Path) -> Result<()> {
    let input = Input::detect(corpus, corpus, None);
    let fields = Fields::default();
    let mut docs = Vec::new();
    // Every record is a document or a counted rejection, the first few named.
    let mut rejected = 0usize;
    for rec in Reader::new(vec![input], fields.clone()) {
        let rec = rec?;
        let at = rec.position.at;
        match rec.into_document(&fields, corpus) {
            Ok(d) => docs.push(d),
            Err(rej) => {
                rejected += 1;
                if rejected <= 5 {
                    eprintln!(
                        "neardup eval: {corpus} record {at} ({}) rejected: {}",
                        rej.id.as_deref().unwrap_or("no id"),
                        rej.reason
                    );
                }
            }
        }
    }
    if rejected > 5 {
        eprintln!("neardup eval: {rejected} records of {corpus} rejected in all");
    }
    let truth = neardup::eval::read_truth(truth)?;
    let results = neardup::eval::evaluate_corpus(&docs, &truth, &corpus_algorithms(params)?)?;
    print_corpus_results(&results, docs.len(), truth.len());
    if rejected > 0 {
        println!("{rejected} records rejected (not scored)");
    }
    if let Some(path) = &args.json {
        let mut f = AtomicFile::create(path)?;
        serde_json::to_writer_pretty(
            &mut f,
            &json!({"documents": docs.len(), "rejected": rejected, "algorithms": results}),
        )?;
        f.write_all(b"\n")?;
        f.commit()?;
    }
    if let Some(path) = &args.plot {
        let series: Vec<(String, Vec<(f64, f64)>)> = results
            .iter()
            .map(|r| {
                (
                    r.name.clone(),
                    r.near_duplicates_per_document
                        .iter()
                        .map(|&(k, n)| (k as f64, n as f64))
                        .collect(),
                )
            })
            .collect();
        let svg = neardup::eval::plot::loglog(
            "Near-duplicates per document",
            "near-duplicates of a document",
            "documents",
            &series,
        );
        let mut f = AtomicFile::create(path)?;
        f.write_all(svg.as_bytes())?;
        f.commit()?;
    }
    Ok(())
}

/// The algorithms `eval --corpus` compares: the configured pipeline, each stage-one
/// generator alone, exact duplicates alone, and the recall preset.
fn corpus_algorithms(params: &Params) -> Result<Vec<(String, Pipeline)>> {
    use neardup::candidates::{BucketLimits, CharikarBlocks, PughChecksums, SimhashCandidates};
    use neardup::verify::filter::AcceptAll;
    let limits = BucketLimits::default();
    let (combined, _) = params.builder()?;
    let mut pugh = Pipeline::builder();
    pugh.sketch_config_mut().pugh = Some(neardup::sketch::pugh::PughConfig::default());
    Ok(vec![
        ("combined".into(), combined.build()?),
        (
            "broder".into(),
            Pipeline::builder().filter(Arc::new(AcceptAll)).build()?,
        ),
        (
            "charikar-blocks".into(),
            Pipeline::builder()
                .candidates(Arc::new(CharikarBlocks {
                    max_distance: CharikarBlocks::DEFAULT_MAX_DISTANCE,
                    limits,
                }))
                .filter(Arc::new(AcceptAll))
                .build()?,
        ),
        (
            "simhash64".into(),
            Pipeline::builder()
                .candidates(Arc::new(SimhashCandidates {
                    design: neardup::index::Design::k3_10(),
                }))
                .filter(Arc::new(AcceptAll))
                .build()?,
        ),
        (
            "pugh".into(),
            pugh.candidates(Arc::new(PughChecksums { limits }))
                .filter(Arc::new(AcceptAll))
                .build()?,
        ),
        (
            "exact".into(),
            Pipeline::builder().filter(Arc::new(KeepNothing)).build()?,
        ),
        (
            "recall-preset".into(),
            Pipeline::builder().preset(Preset::Recall).build()?,
        ),
    ])
}

/// The table of `eval --corpus`, and the recall per kind of planted pair.
fn print_corpus_results(results: &[neardup::eval::CorpusResult], docs: usize, truth: usize) {
    println!("{docs} documents, {truth} truth pairs listed");
    println!(
        "{:<16} {:>9} {:>9} {:>7} {:>6}   {:>15} {:>15}  {:>8} {:>9}",
        "algorithm",
        "reported",
        "precision",
        "recall",
        "F1",
        "same-site P/R",
        "cross-site P/R",
        "seconds",
        "peak MB"
    );
    for r in results {
        println!(
            "{:<16} {:>9} {:>9.3} {:>7.3} {:>6.3}   {:>7.3}/{:<7.3} {:>7.3}/{:<7.3}  {:>8.2} {:>9.0}",
            r.name,
            r.all.reported,
            r.all.precision,
            r.all.recall,
            r.f1,
            r.same_site.precision,
            r.same_site.recall,
            r.cross_site.precision,
            r.cross_site.recall,
            r.seconds,
            r.peak_rss_bytes.unwrap_or(0) as f64 / 1e6
        );
    }
    // Recall per kind of planted pair.
    let kinds: Vec<&str> = results
        .first()
        .map(|r| r.recall_by_kind.iter().map(|k| k.0.as_str()).collect())
        .unwrap_or_default();
    if kinds.len() > 1 || kinds.first().is_some_and(|k| !k.is_empty()) {
        println!();
        print!("{:<16}", "recall by kind");
        for k in &kinds {
            print!(" {:>9}", if k.is_empty() { "(none)" } else { k });
        }
        println!();
        for r in results {
            print!("{:<16}", r.name);
            for (_, n, f) in &r.recall_by_kind {
                print!(" {:>9.3}", *f as f64 / (*n).max(1) as f64);
            }
            println!();
        }
    }
}

pub fn eval(mut args: EvalArgs) -> Result<()> {
    let params = std::mem::take(&mut args.params).0.merged()?;
    if let (Some(corpus), Some(truth)) = (&args.corpus, &args.truth) {
        return eval_corpus(&args, &params, corpus, truth);
    }
    let (builder, _) = params.builder()?;
    let pipeline = builder.build()?;
    let pairs_path = args
        .pairs
        .clone()
        .context("--pairs FILE or --corpus FILE --truth FILE")?;
    let pairs = neardup::eval::read_pairs(&pairs_path)?;
    let cfg = neardup::eval::EvalConfig {
        positive_min: args.positive_min,
        simhash_k: args.simhash_k,
        estimate_min: args.estimate_min,
        jaccard_min: args.jaccard_min,
    };
    let scores = neardup::eval::score_pairs(&pipeline, &pairs);
    if let Some(path) = &args.scores {
        neardup::job::write_jsonl(
            path,
            pairs
                .iter()
                .zip(&scores)
                .map(|(p, s)| json!({"id": p.id, "scores": s})),
        )?;
    }
    let sweep = args.sweep || args.plot.is_some() || args.html.is_some();
    let report = neardup::eval::evaluate(&pipeline, &scores, &cfg, sweep);
    print_pair_results(&report, pairs.len(), cfg.positive_min, sweep);
    if let Some(path) = &args.html {
        let page = neardup::report::html::eval_page(
            &pipeline,
            &report,
            &pairs,
            &scores,
            cfg.positive_min,
        )?;
        let mut f = AtomicFile::create(path)?;
        f.write_all(page.as_bytes())?;
        f.commit()?;
    }
    if let Some(path) = &args.json {
        neardup::job::write_json(path, &report)?;
    }
    if let Some(path) = &args.plot {
        let svg = report.plot();
        let mut f = AtomicFile::create(path)?;
        f.write_all(svg.as_bytes())?;
        f.commit()?;
    }
    Ok(())
}

/// The table of each algorithm's precision, recall and F1 on labelled pairs.
fn print_pair_results(
    report: &neardup::eval::EvalReport,
    n: usize,
    positive_min: f64,
    sweep: bool,
) {
    println!(
        "{} pairs: {} near-duplicates (label >= {}), {} not",
        n, report.positives, positive_min, report.negatives
    );
    println!(
        "{:<22} {:>5} {:>5} {:>5} {:>5} {:>9} {:>7} {:>6}{}",
        "algorithm",
        "TP",
        "FP",
        "FN",
        "TN",
        "precision",
        "recall",
        "F1",
        if sweep {
            "   best F1 (threshold: P, R)"
        } else {
            ""
        }
    );
    for a in &report.algorithms {
        let c = &a.confusion;
        let best = a.best.as_ref().map_or(String::new(), |b| {
            format!(
                "   {:.3} (>= {}: {:.3}, {:.3})",
                b.f1, b.threshold, b.precision, b.recall
            )
        });
        println!(
            "{:<22} {:>5} {:>5} {:>5} {:>5} {:>9.3} {:>7.3} {:>6.3}{}",
            a.name, c.tp, c.fp, c.fn_, c.tn, c.precision, c.recall, c.f1, best
        );
    }
}
