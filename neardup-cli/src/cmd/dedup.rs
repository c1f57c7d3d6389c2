//! `neardup dedup`: deduplicate a corpus snapshot.

use crate::config::{FieldArgs, Params};
use crate::html::run::{prepare_run, read_by_ordinal, Prepared};
use crate::kept_ranges::Ranges;
use crate::output::Sink;
use crate::report::{
    Accounting, BoilerplateReport, ClusterLine, InputCount, PairLine, Parameters, Report, Settings,
    REPORT_FORMAT_VERSION,
};
use crate::writeback::{write_back, Targets, Written};
use crate::*;
use anyhow::{bail, Context, Result};
use clap::Args;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use neardup::io::{Fields, Format, Input, RawRecord, ReadAhead, ReadCounter, Reader};
use neardup::persist::sketches::SavedSketches;
use neardup::persist::AtomicFile;
use neardup::pipeline::{Fate, Progress};
use neardup::sketch::boilerplate::{Boilerplate, BoilerplateConfig};
use neardup::{Dedup, Pipeline};
use std::io::Write;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

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
    pub params: Params,
}

/// The saved sketches of the earlier snapshot (if any) and of the records `keep`
/// selects.
pub fn saved_sketches(
    d: &neardup::Dedup,
    config: &neardup::SketchConfig,
    keep: impl Fn(&Fate) -> bool,
) -> SavedSketches {
    let mut out = SavedSketches {
        config: config.clone(),
        ids: Vec::new(),
        sites: Vec::new(),
        sketches: neardup::Sketches::new(config),
    };
    for (i, f) in d.fates.iter().enumerate() {
        if i < d.previous || keep(f) {
            out.ids.push(d.ids[i].clone());
            out.sites.push(d.site(i).map(str::to_owned));
            out.sketches.push(&d.sketches.get(i).to_owned());
        }
    }
    out
}

/// Runs `dedup`; returns the number of sketches saved (with `--save-sketches`).
pub fn dedup(mut args: DedupArgs) -> Result<usize> {
    let params = std::mem::take(&mut args.params).merged()?;
    let (mut builder, priority) = params.builder()?;
    let fields = args.fields.fields(priority, params.site_field()?);
    // Standard input (or the demo corpus) is spooled to a temporary file, for the
    // second pass; it lives until then.
    let (inputs, spool) = open_inputs(&args.inputs, args.format)?;
    let bar = progress_bar(args.quiet, &inputs);
    let read_bytes = Arc::new(AtomicU64::new(0));
    {
        let (bar, rb) = (bar.clone(), read_bytes.clone());
        builder.on_progress(move |p: Progress| {
            bar.set_position(rb.load(Ordering::Relaxed));
            bar.set_message(format!("{} records", p.records));
        });
    }
    let mut pipeline = builder.build()?;
    let previous = args
        .sketches
        .as_deref()
        .map(SavedSketches::load)
        .transpose()?;
    let mut boilerplate = None;
    if let Some(cfg) = params.boilerplate()? {
        if previous.is_some() {
            bail!("--boilerplate cannot be combined with --sketches (the saved sketches were made without this run's boilerplate)");
        }
        bar.set_message("boilerplate pass");
        let (b, seconds) = boilerplate_pass(&pipeline, &inputs, &fields, cfg)?;
        pipeline = pipeline.with_boilerplate(b.clone());
        boilerplate = Some((b, seconds));
    }
    let first = first_pass(
        &pipeline,
        &inputs,
        &fields,
        &args,
        previous.as_ref(),
        &read_bytes,
    )?;
    bar.finish_and_clear();
    let (written, prepared) = second_pass(&args, &first, &pipeline, &inputs, &fields)?;
    drop(spool);
    let d = first.dedup;
    write_lists(&args, &d)?;
    let settings = Settings {
        format: args.format,
        fields: args.fields.clone(),
        params: params.clone(),
    };
    let accounting = accounting(&d, &inputs, &first.counter, &written);
    let boilerplate = boilerplate.as_ref().map(|(b, s)| (&**b, *s));
    let report = report_of(&d, &pipeline, &inputs, accounting, boilerplate, settings);
    if let (Some(path), Some(prepared)) = (&args.html, prepared) {
        let page = prepared.render(serde_json::to_value(&report)?, &pipeline)?;
        crate::html::write(path, &page)?;
    }
    if let Some(path) = &args.report {
        let mut f = AtomicFile::create(path)?;
        serde_json::to_writer_pretty(&mut f, &report)?;
        f.write_all(b"\n")?;
        f.commit()?;
    }
    check_accounting(&report.accounting, &d.stats, first.counter.records())?;
    if !args.quiet {
        summary(&d.stats, boilerplate);
        if args.inputs.is_empty() {
            eprintln!(
                "  (this was the bundled demo corpus; `neardup dedup FILE...` runs on yours)"
            );
        }
        if args.output.is_none() {
            eprintln!("  (no -o/--output given: kept records not written)");
        }
    }
    let mut saved = 0;
    if let Some(path) = &args.save_sketches {
        let s = saved_sketches(&d, pipeline.sketcher().config(), |f| {
            matches!(f, Fate::Kept)
        });
        saved = s.len();
        s.save(path)?;
    }
    // The result is freed on a thread of its own (millions of small allocations on a
    // big corpus): the command returns without waiting for it, and a process that
    // exits then does not free it at all.
    let _ = std::thread::Builder::new()
        .name("neardup-free".into())
        .spawn(move || drop(d));
    Ok(saved)
}

/// The clusters, pairs and mirror report, each when asked for.
fn write_lists(args: &DedupArgs, d: &Dedup) -> Result<()> {
    if let Some(path) = &args.clusters {
        write_jsonl(path, d.clusters.iter().map(|c| ClusterLine::new(d, c)))?;
    }
    if let Some(path) = &args.pairs {
        write_jsonl(path, d.pairs.iter().map(|p| PairLine::new(d, p)))?;
    }
    if let Some(path) = &args.mirrors {
        write_jsonl(path, d.mirrors().iter())?;
    }
    Ok(())
}

/// The run's report (what `--report` writes and the HTML page shows).
fn report_of<'a>(
    d: &'a Dedup,
    pipeline: &'a Pipeline,
    inputs: &'a [Input],
    accounting: Accounting<'a>,
    boilerplate: Option<(&'a Boilerplate, f64)>,
    settings: Settings,
) -> Report<'a> {
    Report {
        format_version: REPORT_FORMAT_VERSION,
        neardup_version: env!("CARGO_PKG_VERSION"),
        inputs: inputs.iter().map(|i| i.name.as_str()).collect(),
        parameters: Parameters::of(pipeline),
        accounting,
        stats: &d.stats,
        boilerplate: boilerplate.map(|(b, seconds)| boilerplate_report(b, seconds, &d.stats)),
        peak_memory_bytes: neardup::pipeline::peak_memory_bytes(),
        decisions: &d.decisions,
        settings,
    }
}

/// The inputs named on the command line (files, directories of shards, globs, `-`),
/// or the bundled demo corpus when none is; standard input and the demo corpus are
/// written to a temporary file, returned to be kept until the second pass is done.
fn open_inputs(
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

/// The boilerplate pass (`--boilerplate`): per-site shingle counts over the inputs,
/// and the seconds it took. Unreadable records are skipped here and accounted for by
/// the run.
fn boilerplate_pass(
    pipeline: &Pipeline,
    inputs: &[Input],
    fields: &Fields,
    cfg: BoilerplateConfig,
) -> Result<(Arc<Boilerplate>, f64)> {
    let start = std::time::Instant::now();
    let names: Vec<String> = inputs.iter().map(|i| i.name.clone()).collect();
    let parse = |rec: RawRecord| {
        let source = &names[rec.position.input];
        rec.into_document(fields, source)
    };
    let reader = Reader::new(inputs.to_vec(), fields.clone(), false, false)
        .defer_parsing(true)
        .max_record_bytes(pipeline.max_record_bytes());
    let b = pipeline.learn_boilerplate(reader.map_while(|r| r.ok()), parse, cfg)?;
    Ok((Arc::new(b), start.elapsed().as_secs_f64()))
}

/// What the first pass leaves: the result, where each record lies (plain JSONL), and
/// the reader's own counts.
struct FirstPass {
    dedup: Dedup,
    ranges: Ranges,
    counter: ReadCounter,
}

/// The first pass: every record read, sketched and judged (against the saved
/// sketches of an earlier snapshot, if any), stopped by the first fatal error; the
/// result reconciled with the reader's count.
fn first_pass(
    pipeline: &Pipeline,
    inputs: &[Input],
    fields: &Fields,
    args: &DedupArgs,
    previous: Option<&SavedSketches>,
    read_bytes: &AtomicU64,
) -> Result<FirstPass> {
    let names: Vec<String> = inputs.iter().map(|i| i.name.clone()).collect();
    let parse = |rec: RawRecord| {
        let source = &names[rec.position.input];
        rec.into_document(fields, source)
    };
    let reader = Reader::new(inputs.to_vec(), fields.clone(), args.strict, false)
        .defer_parsing(true)
        .max_record_bytes(pipeline.max_record_bytes());
    // What the reader produced, counted by the reader: the reference of the accounting.
    let counter = reader.counter();
    // Uncompressed JSONL files are split into lines by the pipeline's workers as they
    // take their jobs (a mapping: no disk waits, no decompressor); anything else is
    // read on a thread of its own, ahead of the pipeline, so that the workers never
    // wait for the disk or the decompressor: in chunks of up to 128 records or 1 MiB
    // of records, 8 chunks queued (about 1,000 records of a few KB), so at most 10
    // chunks of 1 MiB plus one record each are held (a count of records alone let
    // 1,024 documents of 64 MiB be read ahead).
    let read_ahead = !inputs.iter().all(Input::is_plain_jsonl);
    let mut failed = false;
    let reader = reader.map_while(move |r| {
        if failed {
            return None;
        }
        failed = r.is_err();
        Some(r)
    });
    let records: Box<dyn Iterator<Item = _> + Send> = if read_ahead {
        Box::new(ReadAhead::bounded(reader, 128, 1 << 20, 8))
    } else {
        Box::new(reader)
    };
    // Where each record lies in its file, for the second pass (plain JSONL only).
    let mut ranges = Ranges::new(inputs.len(), !read_ahead);
    let mut fatal = None;
    let records = records.map_while(|r| match r {
        Ok(rec) => {
            read_bytes.fetch_add(rec.bytes(), Ordering::Relaxed);
            ranges.note(&rec);
            Some(rec)
        }
        Err(e) => {
            fatal = Some(e);
            None
        }
    });
    let dedup = match previous {
        Some(p) => pipeline.run_against(p, records, parse)?,
        None => pipeline.run_with(records, parse)?,
    };
    if let Some(e) = fatal {
        return Err(e.into());
    }
    dedup.reconcile(counter.records())?;
    Ok(FirstPass {
        dedup,
        ranges,
        counter,
    })
}

/// The second pass: kept records, annotations and rejects written in input order;
/// meanwhile, on a thread of its own, the HTML page's sample is read back and
/// rendered (`--html`).
fn second_pass(
    args: &DedupArgs,
    first: &FirstPass,
    pipeline: &Pipeline,
    inputs: &[Input],
    fields: &Fields,
) -> Result<(Written, Option<Prepared>)> {
    let threads = pipeline.threads();
    let targets = Targets {
        output: args
            .output
            .as_ref()
            .map(|p| Sink::create(std::path::Path::new(p), threads))
            .transpose()?,
        output_dir: args.output_dir.as_deref(),
        annotate: args
            .annotate
            .as_ref()
            .map(|p| Sink::create(p, threads))
            .transpose()?,
        rejects: args.rejects.as_ref().map(AtomicFile::create).transpose()?,
    };
    let (d, ranges) = (&first.dedup, &first.ranges);
    let max_record = pipeline.max_record_bytes();
    let (written, prepared) = std::thread::scope(|scope| {
        let prepared = args.html.as_ref().map(|_| {
            scope.spawn(|| {
                prepare_run(d, pipeline, |wanted| {
                    read_by_ordinal(inputs, fields, max_record, d.previous, wanted, ranges)
                })
            })
        });
        let written = write_back(d, inputs, fields, max_record, ranges, targets, threads);
        let prepared = prepared.map(|h| h.join().expect("the HTML page's thread panicked"));
        (written, prepared)
    });
    Ok((written?, prepared.transpose()?))
}

/// The accounting: every record read kept, dropped or rejected, per input (inputs hold
/// consecutive ordinals, as many as the reader counted) and in total, checked against
/// the reader's count and what the second pass wrote.
fn accounting<'a>(
    d: &Dedup,
    inputs: &'a [Input],
    counter: &ReadCounter,
    written: &Written,
) -> Accounting<'a> {
    let mut start = d.previous;
    let per_input: Vec<InputCount> = inputs
        .iter()
        .zip(counter.per_input())
        .zip(&written.per_input_kept)
        .map(|((i, (records, bytes)), kept_written)| {
            let end = (start + records as usize).min(d.fates.len());
            let fates = &d.fates[start.min(end)..end];
            start = end;
            InputCount::tally(&i.name, records, bytes, fates, *kept_written)
        })
        .collect();
    let written = [written.kept, written.rejects, written.annotated];
    Accounting::of(d, counter.records(), per_input, written)
}

/// An error naming every count when the accounting does not hold.
fn check_accounting(a: &Accounting<'_>, st: &neardup::pipeline::Stats, read: u64) -> Result<()> {
    if a.holds {
        return Ok(());
    }
    bail!(
        "accounting broken: {read} records read; kept written {:?}, rejects written \
         {:?}, annotated {:?}, {} dropped in clusters, \
         per input {}; statistics: kept {}, \
         exact {}, near {}, rejected {}",
        a.kept_written,
        a.rejects_written,
        a.annotated_written,
        a.dropped_in_clusters,
        a.per_input.iter().all(InputCount::holds),
        st.kept,
        st.exact_duplicates,
        st.near_duplicates,
        st.rejected
    )
}

/// The report's part on the boilerplate pass.
fn boilerplate_report<'a>(
    b: &'a Boilerplate,
    seconds: f64,
    s: &neardup::pipeline::Stats,
) -> BoilerplateReport<'a> {
    BoilerplateReport {
        settings: b.config(),
        seconds,
        pages_counted: b.pages(),
        sites_with_boilerplate: b.sites_with_boilerplate(),
        boilerplate_shingles: b.shingles(),
        pages_changed: s.boilerplate_pages,
        terms_and_shingles_removed: s.boilerplate_terms,
        sites: b.report(),
    }
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
