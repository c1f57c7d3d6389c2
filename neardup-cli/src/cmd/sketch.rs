//! `neardup sketch`: save the sketches of a snapshot for incremental runs.

use crate::cmd::dedup::open_inputs;
use crate::config::{FieldArgs, ParamFlags};
use anyhow::{bail, Result};
use clap::Args;
use neardup::job::{Job, Outputs};
use neardup::settings::RunSettings;
use std::path::PathBuf;

#[derive(Args)]
pub struct SketchArgs {
    /// Input files or directories, as for `dedup`.
    pub inputs: Vec<String>,
    /// The sketch file to write.
    #[arg(short, long)]
    pub output: PathBuf,
    /// Input format (jsonl, warc, dir or parquet), instead of detecting it from the
    /// name and content.
    #[arg(long, value_parser = crate::parse_format)]
    pub format: Option<neardup::io::Format>,
    /// No progress bar and no summary.
    #[arg(short, long)]
    pub quiet: bool,
    #[command(flatten)]
    pub fields: FieldArgs,
    #[command(flatten)]
    pub params: ParamFlags,
}

/// Runs `sketch`: the job of `dedup` with no output but the saved sketches.
pub fn sketch(args: SketchArgs) -> Result<()> {
    let settings = RunSettings {
        format: args.format,
        fields: args.fields.record_fields(),
        params: args.params.0.merged()?,
    };
    if settings.params.boilerplate == Some(true) {
        bail!("sketch does not save boilerplate-stripped sketches: --boilerplate needs the whole corpus in one run");
    }
    let (pipeline, fields) = settings.pipeline()?;
    let (inputs, spool) = open_inputs(&args.inputs, args.format)?;
    let done = Job::new(pipeline, fields, inputs, settings)
        .outputs(Outputs {
            save_sketches: Some(args.output.clone()),
            ..Outputs::default()
        })
        .run()?;
    drop(spool);
    if !args.quiet {
        eprintln!(
            "neardup: {} sketches written to {}",
            done.saved_sketches.unwrap_or(0),
            args.output.display()
        );
    }
    Ok(())
}
