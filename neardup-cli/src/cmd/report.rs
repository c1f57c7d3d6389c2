//! `neardup report`: the page of `dedup --html` made again from a finished run's saved
//! outputs and its inputs, without running it again.

use anyhow::{bail, Context, Result};
use clap::Args;
use neardup::io::Input;
use neardup::report::html::run::{page_of_files, Facts};
use neardup::report::Settings;
use std::path::PathBuf;

#[derive(Args)]
pub struct ReportArgs {
    /// The run's inputs, as they were given to `dedup` (the sample's texts are read
    /// back from them); without any, the report's input names, read as paths.
    pub inputs: Vec<String>,
    /// The run's report (`dedup --report`).
    #[arg(long)]
    pub report: PathBuf,
    /// The run's clusters (`dedup --clusters`).
    #[arg(long)]
    pub clusters: PathBuf,
    /// The run's pairs (`dedup --pairs`): which rule merged each member, and the
    /// clusters closest to the threshold.
    #[arg(long)]
    pub pairs: Option<PathBuf>,
    /// The run's rejects (`dedup --rejects`): the rejects by code with examples.
    #[arg(long)]
    pub rejects: Option<PathBuf>,
    /// The run's mirror report (`dedup --mirrors`): the top site pairs.
    #[arg(long)]
    pub mirrors: Option<PathBuf>,
    /// Write the page here.
    #[arg(long)]
    pub html: PathBuf,
}

/// Runs `report`.
pub fn report(args: ReportArgs) -> Result<()> {
    let text = std::fs::read_to_string(&args.report)
        .with_context(|| format!("{}", args.report.display()))?;
    let report: serde_json::Value = serde_json::from_str(&text)
        .with_context(|| format!("{}: not a JSON report", args.report.display()))?;
    if report["format_version"].as_u64() != Some(u64::from(neardup::report::REPORT_FORMAT_VERSION))
    {
        bail!(
            "{}: report format version {}, this neardup reads {}",
            args.report.display(),
            report["format_version"],
            neardup::report::REPORT_FORMAT_VERSION
        );
    }
    let facts = Facts::of_files(
        report,
        &args.clusters,
        args.pairs.as_deref(),
        args.rejects.as_deref(),
        args.mirrors.as_deref(),
    )?;
    let Some(settings) = facts.settings() else {
        bail!(
            "{}: the report does not say the run's settings (a report of neardup 0.x before \
             reports carried them, or of the Spark job): run `neardup dedup --html` instead",
            args.report.display()
        );
    };
    let settings: Settings = serde_json::from_value(settings.clone())
        .with_context(|| format!("{}: settings", args.report.display()))?;
    let (builder, priority) = settings.params.builder()?;
    let pipeline = builder.build()?;
    let fields = settings
        .fields
        .fields(priority, settings.params.site_field()?);
    let format = settings.format;
    let names: Vec<String> = if args.inputs.is_empty() {
        facts.report["inputs"]
            .as_array()
            .map(|a| {
                a.iter()
                    .filter_map(|x| x.as_str().map(str::to_owned))
                    .collect()
            })
            .unwrap_or_default()
    } else {
        args.inputs.clone()
    };
    let mut inputs: Vec<Input> = Vec::new();
    for name in &names {
        if name == "-" || name.ends_with("(bundled)") {
            bail!("the run read {name:?}, which cannot be read again: give its inputs as files");
        }
        inputs.extend(neardup::io::shards::expand(name, format)?);
    }
    let page = page_of_files(&facts, &pipeline, &inputs, &fields)?;
    neardup::report::html::write(&args.html, &page)?;
    Ok(())
}
