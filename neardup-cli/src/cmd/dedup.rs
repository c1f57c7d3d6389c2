//! `neardup dedup`: deduplicate a corpus snapshot. The flags become a
//! [`neardup::job::Job`], which runs it; this module opens the inputs (standard input
//! and the bundled demo corpus spooled to a file), draws the progress bar and says the
//! summary.

use crate::config::{FieldArgs, ParamFlags};
use anyhow::{Context, Result};
use clap::Args;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use neardup::io::{Format, Input};
use neardup::job::{Job, Outputs};
use neardup::persist::sketches::SavedSketches;
use neardup::pipeline::Progress;
use neardup::settings::RunSettings;
use neardup::sketch::boilerplate::Boilerplate;
use std::io::Write;
use std::path::PathBuf;
use std::sync::atomic::Ordering;

/// The demo corpus (`fixtures/demo.jsonl` of the repository), embedded in the binary so
/// that an installed `neardup dedup` without input works anywhere.
const DEMO: &[u8] = include_bytes!("../../../fixtures/demo.jsonl");

#[derive(Args)]
pub struct DedupArgs {
    /// Input files, directories or globs (`'data/**/*.jsonl.zst'`); `-` is standard
    /// input. A directory of shards (JSONL, Parquet, WARC files, compressed or not) and a
    /// glob stand for their files in sorted path order; any other directory is a
    /// directory of documents. Without any, the bundled demo corpus.
    pub inputs: Vec<String>,
    /// Input format (jsonl, warc, dir or parquet), instead of detecting it from the
    /// name and content.
    #[arg(long, value_parser = crate::parse_format)]
    pub format: Option<Format>,
    /// Write the kept records here (`-` for standard output), in input order, in the
    /// input's format: JSONL lines unchanged, Parquet rows with the input's schema (a
    /// name ending in `.parquet`); compressed as the name says (`.gz`, `.zst`, `.bz2`,
    /// `.xz`).
    #[arg(short, long)]
    pub output: Option<String>,
    /// Write the kept records of each input to a file of its own in this directory,
    /// named as the input is within its directory or glob (else by its file name).
    #[arg(long)]
    pub output_dir: Option<PathBuf>,
    /// Write every record here with its fate added instead of dropping any: the fields
    /// (or Parquet columns) `neardup_fate` (kept, exact, near, rejected), `neardup_of`
    /// (the id of the kept record it was dropped for: its exact group's
    /// representative, or its cluster's), `neardup_cluster` (its cluster's
    /// representative) and `neardup_reason` (why it was rejected).
    #[arg(long)]
    pub annotate: Option<PathBuf>,
    /// Write clusters as JSONL: representative, members, size.
    #[arg(long)]
    pub clusters: Option<PathBuf>,
    /// Write verified pairs as JSONL.
    #[arg(long)]
    pub pairs: Option<PathBuf>,
    /// Write rejected records as JSONL: code, reason, input, position (line, byte
    /// offset or file number), file (in a directory input), id (when it could be read)
    /// and record (its ordinal in the run).
    #[arg(long)]
    pub rejects: Option<PathBuf>,
    /// Write the mirror report as JSONL: site pairs ranked by duplicate pairs between
    /// them, with the share of each site's pages involved.
    #[arg(long)]
    pub mirrors: Option<PathBuf>,
    /// Write the report as JSON: parameters, counts, timings, accounting.
    #[arg(long)]
    pub report: Option<PathBuf>,
    /// Write the report as one self-contained HTML page to open in a browser before
    /// deleting anything: the accounting, the rejects, cluster sizes, how close stage
    /// two's decisions were, sites, and a sample of clusters with word diffs (their
    /// texts read back from the inputs).
    #[arg(long)]
    pub html: Option<PathBuf>,
    /// Stop at the first bad record with an error naming it, instead of rejecting it.
    #[arg(long)]
    pub strict: bool,
    /// Saved sketches of an earlier snapshot (`neardup sketch`): new records that are
    /// duplicates of old ones are dropped; old records are not re-read.
    #[arg(long)]
    pub sketches: Option<PathBuf>,
    /// Save the sketches of the earlier snapshot (if any) plus the kept records, for
    /// the next incremental run.
    #[arg(long)]
    pub save_sketches: Option<PathBuf>,
    /// No progress bar and no summary.
    #[arg(short, long)]
    pub quiet: bool,
    #[command(flatten)]
    pub fields: FieldArgs,
    #[command(flatten)]
    pub params: ParamFlags,
}

/// Runs `dedup`.
pub fn dedup(mut args: DedupArgs) -> Result<()> {
    let params = std::mem::take(&mut args.params).0.merged()?;
    let settings = RunSettings {
        format: args.format,
        fields: args.fields.record_fields(),
        params,
    };
    let (mut builder, priority) = settings.params.builder()?;
    let fields = settings
        .fields
        .fields(priority, settings.params.site_field()?);
    // Standard input (or the demo corpus) is spooled to a temporary file, for the
    // second pass; it lives until then.
    let (inputs, spool) = open_inputs(&args.inputs, args.format)?;
    let bar = progress_bar(args.quiet, &inputs);
    let read_bytes = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(0));
    {
        let (bar, rb) = (bar.clone(), read_bytes.clone());
        builder.on_progress(move |p: Progress| {
            bar.set_position(rb.load(Ordering::Relaxed));
            bar.set_message(format!("{} records", p.records));
        });
    }
    let mut job = Job::new(builder.build()?, fields, inputs, settings)
        .strict(args.strict)
        .outputs(outputs(&args))
        .count_bytes(read_bytes);
    if let Some(path) = &args.sketches {
        job = job.against(SavedSketches::load(path)?);
    }
    let done = job.run();
    bar.finish_and_clear();
    drop(spool);
    let done = done?;
    if !args.quiet {
        let boilerplate = done.boilerplate.as_ref().map(|(b, s)| (&**b, *s));
        summary(&done.dedup.stats, boilerplate);
        if args.inputs.is_empty() {
            eprintln!(
                "  (this was the bundled demo corpus; `neardup dedup FILE...` runs on yours)"
            );
        }
        if args.output.is_none() {
            eprintln!("  (no -o/--output given: kept records not written)");
        }
    }
    // The result is freed on a thread of its own (millions of small allocations on a
    // big corpus): the command returns without waiting for it, and a process that
    // exits then does not free it at all.
    let _ = std::thread::Builder::new()
        .name("neardup-free".into())
        .spawn(move || drop(done));
    Ok(())
}

/// The outputs the flags name.
fn outputs(args: &DedupArgs) -> Outputs {
    Outputs {
        kept: args.output.as_ref().map(PathBuf::from),
        output_dir: args.output_dir.clone(),
        annotate: args.annotate.clone(),
        clusters: args.clusters.clone(),
        pairs: args.pairs.clone(),
        rejects: args.rejects.clone(),
        mirrors: args.mirrors.clone(),
        report: args.report.clone(),
        html: args.html.clone(),
        save_sketches: args.save_sketches.clone(),
    }
}

/// The inputs named on the command line (files, directories of shards, globs, `-`),
/// or the bundled demo corpus when none is; standard input and the demo corpus are
/// written to a temporary file, returned to be kept until the second pass is done.
pub fn open_inputs(
    names: &[String],
    format: Option<Format>,
) -> Result<(Vec<Input>, Option<tempfile::NamedTempFile>)> {
    if names.is_empty() {
        let mut tmp = tempfile::NamedTempFile::new().context("writing the demo corpus")?;
        tmp.write_all(DEMO).context("writing the demo corpus")?;
        let input = Input::detect(tmp.path(), "demo.jsonl (bundled)", Some(Format::Jsonl));
        return Ok((vec![input], Some(tmp)));
    }
    let mut spool = None;
    let mut v = Vec::new();
    for name in names {
        if name == "-" {
            let mut tmp = tempfile::NamedTempFile::new().context("spooling standard input")?;
            std::io::copy(&mut std::io::stdin().lock(), &mut tmp)
                .context("spooling standard input")?;
            // Compression and Parquet are found by content; anything else is JSONL.
            v.push(Input::detect(tmp.path(), "-", format));
            spool = Some(tmp);
        } else {
            v.extend(neardup::io::shards::expand(name, format)?);
        }
    }
    Ok((v, spool))
}

/// The progress bar of the first pass, over the inputs' bytes (hidden with `--quiet`).
fn progress_bar(quiet: bool, inputs: &[Input]) -> ProgressBar {
    let total_bytes: u64 = inputs
        .iter()
        .filter_map(|i| std::fs::metadata(&i.path).ok())
        .filter(|m| m.is_file())
        .map(|m| m.len())
        .sum();
    let bar = if quiet {
        ProgressBar::hidden()
    } else {
        ProgressBar::with_draw_target(Some(total_bytes), ProgressDrawTarget::stderr())
    };
    bar.set_style(
        ProgressStyle::with_template("{spinner} sketching {msg} [{elapsed_precise}] {wide_bar} {bytes}/{total_bytes} ({bytes_per_sec}, ETA {eta})")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    bar
}

/// The human summary on standard error.
fn summary(s: &neardup::pipeline::Stats, boilerplate: Option<(&Boilerplate, f64)>) {
    let mb = s.bytes as f64 / 1e6;
    eprintln!(
        "neardup: {} records read: {} kept, {} exact duplicates, {} near duplicates, {} rejected",
        s.read, s.kept, s.exact_duplicates, s.near_duplicates, s.rejected
    );
    eprintln!(
        "  {} clusters (largest {}), {} candidate pairs, {} verified{}",
        s.clusters.clusters,
        s.clusters.max_size,
        s.candidates.candidates,
        s.verified,
        if s.high_recall_added > 0 {
            format!(", {} more by high recall", s.high_recall_added)
        } else {
            String::new()
        }
    );
    eprintln!(
        "  {:.1} MB in {:.2} s ({:.1} MB/s); stages: sketch {:.2} s, candidates {:.2} s, filter {:.2} s, clusters {:.2} s; peak memory {:.0} MB",
        mb,
        s.seconds.total,
        mb / s.seconds.total.max(1e-9),
        s.seconds.sketch,
        s.seconds.candidates,
        s.seconds.filter,
        s.seconds.cluster,
        neardup::pipeline::peak_memory_bytes().unwrap_or(0) as f64 / 1e6
    );
    if let Some((b, seconds)) = boilerplate {
        eprintln!(
            "  boilerplate: {} shingles on {} sites, removed from {} pages ({} terms and shingles) in a first pass of {:.2} s",
            b.shingles(),
            b.sites_with_boilerplate(),
            s.boilerplate_pages,
            s.boilerplate_terms,
            seconds
        );
    }
}
