//! `neardup presets`: what a preset (or the settings given) means — stage one's
//! probability of making a pair a candidate as a function of its resemblance, and
//! stage two's thresholds as a resemblance and a cosine.

use crate::config::ParamFlags;
use anyhow::{bail, Result};
use clap::Args;

#[derive(Args)]
pub struct PresetsArgs {
    /// Print one JSON object instead of a table.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub params: ParamFlags,
}

/// The resemblances the table has a row for.
const RESEMBLANCES: [f64; 15] = [
    0.1, 0.2, 0.3, 0.4, 0.5, 0.55, 0.6, 0.65, 0.7, 0.75, 0.8, 0.85, 0.9, 0.95, 1.0,
];

/// Runs `presets`.
pub fn presets(args: PresetsArgs) -> Result<()> {
    let params = args.params.0.merged()?;
    let (builder, _) = params.builder()?;
    let pipeline = builder.build()?;
    let cfg = pipeline.sketcher().config();
    let Some(stage_one) = pipeline.rule().candidates().as_supershingles() else {
        bail!("presets describes Broder's supershingles as stage one (--candidates broder)");
    };
    let (width, slots) = (cfg.supershingle_width(), cfg.supershingles);
    let curve: Vec<(f64, f64)> = RESEMBLANCES
        .iter()
        .map(|&j| (j, stage_one.candidate_probability(j, width, slots)))
        .collect();
    let bits = cfg.charikar_bits as f64;
    let t = pipeline.charikar_threshold() as f64;
    // `a` of `b` bits agreeing estimate an angle of π(1 − a/b).
    let cosine = (std::f64::consts::PI * (1.0 - t / bits)).cos();
    let accept = pipeline
        .accept_shared()
        .map(|a| (a, (a as f64 / slots as f64).powf(1.0 / width as f64)));
    let passes = stage_one.passes(slots);
    if args.json {
        let v = serde_json::json!({
            "stage_one": pipeline.describe().0,
            "shingle": cfg.shingle_size,
            "minhashes": cfg.minhashes,
            "supershingles": slots,
            "supershingle_width": width,
            "min_shared": stage_one.min_shared,
            "band": stage_one.band,
            "bucket_keys_per_document": passes,
            "candidate_probability": curve.iter().map(|&(j, p)| serde_json::json!({"resemblance": j, "probability": p})).collect::<Vec<_>>(),
            "charikar_bits": cfg.charikar_bits,
            "charikar_threshold": t,
            "charikar_cosine": cosine,
            "accept_shared": accept.map(|a| a.0),
            "accept_shared_resemblance": accept.map(|a| a.1),
            "cluster_mode": format!("{:?}", pipeline.cluster_mode()).to_lowercase(),
        });
        println!("{}", serde_json::to_string_pretty(&v)?);
        return Ok(());
    }
    println!(
        "{}-term shingles, {} min-values in {} supershingles of {}",
        cfg.shingle_size, cfg.minhashes, slots, width
    );
    match stage_one.band {
        Some(w) => println!(
            "stage one: {} LSH bands of {w} supershingles ({} min-values each), one bucket key per band; \
             a candidate agrees on a whole band and shares >= {} supershingles",
            passes,
            w * width,
            stage_one.min_shared
        ),
        None => println!(
            "stage one: pairs sharing >= {} of {} supershingles ({} bucket keys per document)",
            stage_one.min_shared, slots, passes
        ),
    }
    println!("\n  resemblance  P[candidate]");
    for (j, p) in &curve {
        println!("  {j:>11.2}  {p:>12.4}");
    }
    println!(
        "\nstage two: >= {} of {} Charikar bits over {} agree (a cosine of {cosine:.3} between \
         the feature vectors)",
        t,
        cfg.charikar_bits,
        match cfg.charikar_features {
            neardup::Features::Shingles => "shingles",
            _ => "terms",
        }
    );
    if let Some((a, r)) = accept {
        println!("           or >= {a} supershingles agree (a resemblance of {r:.3})");
    }
    println!(
        "clusters: {}",
        match pipeline.cluster_mode() {
            neardup::cluster::ClusterMode::Verified =>
                "around centres: every member a verified near-duplicate of the member kept",
            _ => "connected components of the verified pairs (transitive)",
        }
    );
    Ok(())
}
