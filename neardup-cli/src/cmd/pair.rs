//! `neardup pair`: every measure of two documents and the verdict `dedup` applies.

use crate::config::ParamFlags;
use anyhow::{Context, Result};
use clap::Args;
use neardup::Document;
use std::path::{Path, PathBuf};

#[derive(Args)]
pub struct PairArgs {
    /// First document (text, or HTML when the name ends in .html/.htm).
    pub a: PathBuf,
    /// Second document.
    pub b: PathBuf,
    /// URL of the first document (its site decides the pair's class under a site
    /// strategy).
    #[arg(long)]
    pub url_a: Option<String>,
    /// URL of the second document.
    #[arg(long)]
    pub url_b: Option<String>,
    /// Print one JSON object instead of a table; its field `near_duplicate` is the
    /// verdict `dedup` applies to the pair.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub params: ParamFlags,
}

pub fn read_doc(path: &Path) -> Result<Document> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    let name = path.to_string_lossy().to_string();
    let lower = name.to_ascii_lowercase();
    Ok(if lower.ends_with(".html") || lower.ends_with(".htm") {
        Document::html(name, text)
    } else {
        Document::text(name, text)
    })
}

/// Runs `pair`.
pub fn pair(args: PairArgs) -> Result<()> {
    let params = args.params.0.merged()?;
    let (builder, _) = params.builder()?;
    let pipeline = builder.build()?;
    let (mut da, mut db) = (read_doc(&args.a)?, read_doc(&args.b)?);
    da.url = args.url_a.clone();
    db.url = args.url_b.clone();
    let c = neardup::eval::compare(&pipeline, &da, &db);
    let s = &c.scores;
    let j = s.judgement;
    let cfg = pipeline.sketcher().config();
    if args.json {
        let v = c.to_json(&pipeline);
        println!("{}", serde_json::to_string_pretty(&v)?);
        return Ok(());
    }
    let yn = |b: bool| if b { "yes" } else { "no" };
    println!(
        "{} ({} terms) vs {} ({} terms), {} pair",
        c.a.id,
        c.a.terms,
        c.b.id,
        c.b.terms,
        match j.class {
            neardup::verify::PairClass::SameSite => "same-site",
            neardup::verify::PairClass::CrossSite => "cross-site",
            _ => "unknown-site",
        }
    );
    println!("  exact duplicate          {}", yn(s.exact));
    println!(
        "  Jaccard of {}-shingles    {:.3}",
        cfg.shingle_size, s.jaccard
    );
    println!(
        "  estimated resemblance    {:.3}  ({} of {} min-values agree)",
        s.estimated_resemblance,
        (s.estimated_resemblance * cfg.minhashes as f64).round(),
        cfg.minhashes
    );
    println!(
        "  supershingles shared     {} of {}",
        s.shared_supershingles, cfg.supershingles
    );
    println!(
        "  megashingles shared      {} of {}",
        c.megashingles_shared, c.megashingles
    );
    println!(
        "  Charikar agreement       {} of {} bits",
        s.agreement, cfg.charikar_bits
    );
    println!("  simhash-64 distance      {} bits", s.simhash_distance);
    println!(
        "  stage one                {} → candidate: {}",
        pipeline.rule().candidates().name(),
        yn(j.candidate)
    );
    println!(
        "  stage two                {} → {}",
        pipeline.rule().name(),
        yn(j.accepted)
    );
    if pipeline.high_recall_threshold().is_some() {
        println!("  high-recall union        {}", yn(j.high_recall));
    }
    println!(
        "  near-duplicate (dedup's verdict): {}",
        yn(j.near_duplicate)
    );
    Ok(())
}
