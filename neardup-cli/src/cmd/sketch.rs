//! `neardup sketch`: save the sketches of a snapshot for incremental runs.

use crate::cmd::dedup::dedup;
use crate::config::{FieldArgs, Params};
use crate::*;
use anyhow::{bail, Result};
use clap::Args;
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
    pub params: Params,
}

pub fn sketch(args: SketchArgs) -> Result<()> {
    if args.params.boilerplate == Some(true) {
        bail!("sketch does not save boilerplate-stripped sketches: --boilerplate needs the whole corpus in one run");
    }
    let d = dedup(DedupArgs {
        annotate: None,
        output_dir: None,
        inputs: args.inputs,
        format: args.format,
        output: None,
        clusters: None,
        pairs: None,
        rejects: None,
        mirrors: None,
        report: None,
        html: None,
        strict: false,
        sketches: None,
        save_sketches: Some(args.output.clone()),
        quiet: true,
        fields: args.fields,
        params: args.params,
    })?;
    if !args.quiet {
        eprintln!(
            "neardup: {} sketches written to {}",
            d,
            args.output.display()
        );
    }
    Ok(())
}
