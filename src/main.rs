//! The `neardup` command line: argument parsing and presentation only.
//!
//! Exit codes: 0 success, 1 error (input, output, configuration, accounting), 2 usage.

use anyhow::{bail, Context, Result};
use clap::{Args, Parser, Subcommand, ValueEnum};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use neardup::config::Params;
use neardup::io::{AtomicFile, Fields, Format, Input, ReadAhead, Reader};
use neardup::pipeline::{Fate, PairKind, Preset, Progress};
use neardup::store::SavedSketches;
use neardup::{Body, Document, Pipeline};
use serde::Deserialize;
use serde_json::json;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The demo corpus bundled with the repository, used when `dedup` gets no input.
const DEMO: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/demo.jsonl");

#[derive(Parser)]
#[command(
    name = "neardup",
    version,
    about = "Find near-duplicate documents: Broder supershingles + Charikar projections (Henzinger's two-stage filter)"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Deduplicate a corpus snapshot: kept records, clusters, pairs, rejects, report.
    #[command(after_help = "Examples:
  neardup dedup                                  # the bundled demo corpus
  neardup dedup crawl.jsonl.zst -o kept.jsonl --clusters clusters.jsonl --report report.json
  neardup dedup pages/ --format dir --preset recall --pairs pairs.jsonl
  cat corpus.jsonl | neardup dedup - -o - > kept.jsonl")]
    Dedup(DedupArgs),
    /// Every measure the library has for two documents, and each rule's verdict.
    #[command(after_help = "Example:
  neardup pair a.html b.html")]
    Pair(PairArgs),
    /// Write the sketches of a snapshot's distinct records (those `dedup` keeps), to
    /// dedup later snapshots against it (`dedup --sketches FILE`).
    #[command(after_help = "Example (incremental dedup):
  neardup sketch march.jsonl.zst -o march.sketches
  neardup dedup april.jsonl.zst --sketches march.sketches -o april-new.jsonl")]
    Sketch(SketchArgs),
    /// The simhash index (permuted sorted tables): build, add, query, stats.
    #[command(
        subcommand,
        after_help = "Example (a crawler's loop from a shell):
  neardup index fingerprint pages.jsonl > fps.txt
  neardup index build fps.txt -o seen.idx --design k3-10
  neardup index query seen.idx new-fps.txt --insert"
    )]
    Index(IndexCommand),
    /// Compare every algorithm on labelled pairs: precision, recall, F1.
    #[command(after_help = "Example:
  neardup eval --pairs judged.jsonl --sweep --json eval.json --plot pr.svg")]
    Eval(EvalArgs),
    /// Generate a corpus with planted near-duplicates and its ground truth.
    #[command(after_help = "Example (the bundled demo corpus):
  neardup synth --base 150 --min-words 60 --max-words 300 --seed 7 -o fixtures/demo.jsonl --truth fixtures/demo-truth.jsonl")]
    Synth(SynthArgs),
}

#[derive(Subcommand)]
enum IndexCommand {
    /// Print `ORDINAL SIMHASH-HEX ID` for every record of the inputs (64-bit simhash of
    /// the sketch core).
    Fingerprint {
        /// Input files or directories, as for `dedup`.
        inputs: Vec<String>,
    },
    /// Build an index from lines `ID FINGERPRINT-HEX` (`-` for stdin).
    Build {
        /// The fingerprint lines.
        input: String,
        /// The index file to write.
        #[arg(short, long)]
        output: PathBuf,
        /// Table design: k3-20, k3-16, k3-10, k3-4, K:R1[,R2…], or auto:K:LOG2N:LOG2SCAN.
        #[arg(long, default_value = "k3-10")]
        design: String,
    },
    /// Add fingerprint lines to an index (rewritten atomically).
    Add {
        /// The index file.
        index: PathBuf,
        /// The fingerprint lines.
        input: String,
    },
    /// Print, as JSONL, the matches (distance ≤ k) of each fingerprint line.
    Query {
        /// The index file.
        index: PathBuf,
        /// Lines `ID FINGERPRINT-HEX` or just `FINGERPRINT-HEX` (`-` for stdin).
        input: String,
        /// Store every query that has no match (the crawler loop) and save the index.
        #[arg(long)]
        insert: bool,
    },
    /// Design, tables, prefixes and size of an index.
    Stats {
        /// The index file.
        index: PathBuf,
    },
}

#[derive(Args)]
struct SketchArgs {
    /// Input files or directories, as for `dedup`.
    inputs: Vec<String>,
    /// The sketch file to write.
    #[arg(short, long)]
    output: PathBuf,
    /// Input format, instead of detecting it from the name.
    #[arg(long, value_enum)]
    format: Option<FormatArg>,
    /// No progress bar and no summary.
    #[arg(short, long)]
    quiet: bool,
    #[command(flatten)]
    params: Params,
}

#[derive(Args)]
struct EvalArgs {
    /// Labelled pairs, JSONL: text_a/text_b (or html_a/html_b), label, optional url.
    #[arg(long, required_unless_present = "corpus", conflicts_with = "corpus")]
    pairs: Option<PathBuf>,
    /// A corpus (any input format of `dedup`) to run every algorithm on end to end ...
    #[arg(long, requires = "truth")]
    corpus: Option<String>,
    /// ... against this ground truth: JSONL of base/variant (as `synth` writes) or a/b ids.
    #[arg(long)]
    truth: Option<PathBuf>,
    /// Labels at or above this count as near-duplicates.
    #[arg(long, default_value_t = 1.0)]
    positive_min: f64,
    /// simhash-64 rule: Hamming distance at most this.
    #[arg(long, default_value_t = 3)]
    simhash_k: u32,
    /// minhash-estimate rule: estimated resemblance at least this.
    #[arg(long, default_value_t = 0.5)]
    estimate_min: f64,
    /// jaccard rule: exact shingle resemblance at least this.
    #[arg(long, default_value_t = 0.5)]
    jaccard_min: f64,
    /// Also sweep every threshold: precision/recall curves and the best F1.
    #[arg(long)]
    sweep: bool,
    /// Write the numbers as JSON.
    #[arg(long)]
    json: Option<PathBuf>,
    /// Write every measure of every pair as JSONL (for your own analysis).
    #[arg(long)]
    scores: Option<PathBuf>,
    /// Draw precision–recall curves (implies --sweep) as SVG; with --corpus, the
    /// log–log distribution of near-duplicates per document.
    #[arg(long)]
    plot: Option<PathBuf>,
    #[command(flatten)]
    params: Params,
}

#[derive(Args)]
struct SynthArgs {
    /// Base documents (at most the number of --seeds records when given).
    #[arg(long, default_value_t = 1000)]
    base: usize,
    /// Fewest words per base document.
    #[arg(long, default_value_t = 150)]
    min_words: usize,
    /// Most words per base document.
    #[arg(long, default_value_t = 600)]
    max_words: usize,
    /// Share of base documents that get variants.
    #[arg(long, default_value_t = 0.3)]
    duplicate_rate: f64,
    /// Most variants per duplicated base document (1..=N each).
    #[arg(long, default_value_t = 3)]
    max_variants: usize,
    /// Variant kinds and their relative weights, e.g. `exact=1,edit=2,format=1`. Kinds:
    /// exact, mirror, edit, timestamp, header, rebrand, format, embed, dynamic.
    /// Default: every kind, weight 1.
    #[arg(long)]
    variants: Option<String>,
    /// Number of hosts (site0.example …).
    #[arg(long, default_value_t = 10)]
    hosts: usize,
    /// The first N hosts give every page a shared site template (hard negatives:
    /// distinct pages of those sites are not near-duplicates).
    #[arg(long, default_value_t = 0)]
    template_sites: usize,
    /// Words of a site template (header and footer together).
    #[arg(long, default_value_t = 150)]
    template_words: usize,
    /// Share of base documents written as HTML.
    #[arg(long, default_value_t = 0.0)]
    html_share: f64,
    /// Vocabulary size of generated text.
    #[arg(long, default_value_t = 20000)]
    vocabulary: usize,
    /// Real documents (JSONL, text records) to use as base documents instead of
    /// generated text.
    #[arg(long)]
    seeds: Option<PathBuf>,
    /// Seed.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Output JSONL (`-` for standard output; `.zst` or `.gz` compresses).
    #[arg(short, long, default_value = "-")]
    output: String,
    /// Write the planted pairs here as JSONL: base, variant, kind.
    #[arg(long)]
    truth: Option<PathBuf>,
}

#[derive(Clone, Copy, ValueEnum, Deserialize)]
#[serde(rename_all = "lowercase")]
enum FormatArg {
    Jsonl,
    Warc,
    Dir,
}

#[derive(Args)]
struct DedupArgs {
    /// Input files or directories; `-` is standard input. Without any, the bundled demo
    /// corpus.
    inputs: Vec<String>,
    /// Input format, instead of detecting it from the name.
    #[arg(long, value_enum)]
    format: Option<FormatArg>,
    /// Write the kept records here (`-` for standard output), in input order.
    #[arg(short, long)]
    output: Option<String>,
    /// Write clusters as JSONL: representative, members, size.
    #[arg(long)]
    clusters: Option<PathBuf>,
    /// Write verified pairs as JSONL.
    #[arg(long)]
    pairs: Option<PathBuf>,
    /// Write rejected records as JSONL: position, id, reason.
    #[arg(long)]
    rejects: Option<PathBuf>,
    /// Write the mirror report as JSONL: site pairs ranked by duplicate pairs between
    /// them, with the share of each site's pages involved.
    #[arg(long)]
    mirrors: Option<PathBuf>,
    /// Write the report as JSON: parameters, counts, timings, accounting.
    #[arg(long)]
    report: Option<PathBuf>,
    /// Stop at the first bad record with an error naming it, instead of rejecting it.
    #[arg(long)]
    strict: bool,
    /// Saved sketches of an earlier snapshot (`neardup sketch`): new records that are
    /// duplicates of old ones are dropped; old records are not re-read.
    #[arg(long)]
    sketches: Option<PathBuf>,
    /// Save the sketches of the earlier snapshot (if any) plus the kept records, for
    /// the next incremental run.
    #[arg(long)]
    save_sketches: Option<PathBuf>,
    /// No progress bar and no summary.
    #[arg(short, long)]
    quiet: bool,
    /// JSONL field holding the id.
    #[arg(long, default_value = "id")]
    id_field: String,
    /// JSONL field holding plain text.
    #[arg(long, default_value = "text")]
    text_field: String,
    /// JSONL field holding HTML (used when the text field is absent).
    #[arg(long, default_value = "html")]
    html_field: String,
    /// JSONL field holding the URL.
    #[arg(long, default_value = "url")]
    url_field: String,
    #[command(flatten)]
    params: Params,
}

#[derive(Args)]
struct PairArgs {
    /// First document (text, or HTML when the name ends in .html/.htm).
    a: PathBuf,
    /// Second document.
    b: PathBuf,
    /// Print JSON instead of a table.
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    params: Params,
}

fn main() {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Dedup(a) => dedup(a).map(|_| ()),
        Command::Pair(a) => pair(a),
        Command::Synth(a) => synth(a),
        Command::Eval(a) => eval(a),
        Command::Sketch(a) => sketch(a),
        Command::Index(c) => index(c),
    };
    if let Err(e) = result {
        eprintln!("neardup: error: {e:#}");
        std::process::exit(1);
    }
}

/// The kept-records output: standard output, or a file committed atomically.
enum Output {
    Stdout(std::io::BufWriter<std::io::StdoutLock<'static>>),
    File(AtomicFile),
}

impl Output {
    fn open(path: &str) -> Result<Output> {
        Ok(if path == "-" {
            Output::Stdout(std::io::BufWriter::new(std::io::stdout().lock()))
        } else {
            Output::File(AtomicFile::create(path)?)
        })
    }

    fn finish(self) -> Result<()> {
        match self {
            Output::Stdout(mut w) => w.flush()?,
            Output::File(f) => f.commit()?,
        }
        Ok(())
    }
}

impl Write for Output {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        match self {
            Output::Stdout(w) => w.write(buf),
            Output::File(f) => f.write(buf),
        }
    }
    fn flush(&mut self) -> std::io::Result<()> {
        match self {
            Output::Stdout(w) => w.flush(),
            Output::File(f) => f.flush(),
        }
    }
}

fn write_jsonl<T: serde::Serialize>(path: &Path, rows: impl Iterator<Item = T>) -> Result<()> {
    let mut f = AtomicFile::create(path)?;
    for r in rows {
        serde_json::to_writer(&mut f, &r)?;
        f.write_all(b"\n")?;
    }
    f.commit()?;
    Ok(())
}

fn sketch(args: SketchArgs) -> Result<()> {
    if args.params.boilerplate == Some(true) {
        bail!("sketch does not save boilerplate-stripped sketches: --boilerplate needs the whole corpus in one run");
    }
    let d = dedup(DedupArgs {
        inputs: args.inputs,
        format: args.format,
        output: None,
        clusters: None,
        pairs: None,
        rejects: None,
        mirrors: None,
        report: None,
        strict: false,
        sketches: None,
        save_sketches: Some(args.output.clone()),
        quiet: true,
        id_field: "id".into(),
        text_field: "text".into(),
        html_field: "html".into(),
        url_field: "url".into(),
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

/// The saved sketches of the earlier snapshot (if any) and of the records `keep`
/// selects.
fn saved_sketches(
    d: &neardup::Dedup,
    config: &neardup::SketchConfig,
    keep: impl Fn(&Fate) -> bool,
) -> SavedSketches {
    let mut out = SavedSketches {
        config: config.clone(),
        ids: Vec::new(),
        sketches: neardup::Sketches::new(config),
    };
    for (i, f) in d.fates.iter().enumerate() {
        if i < d.previous || keep(f) {
            out.ids.push(d.ids[i].clone());
            out.sketches.push(&d.sketches.get(i).to_owned());
        }
    }
    out
}

/// Runs `dedup`; returns the number of sketches saved (with `--save-sketches`).
fn dedup(args: DedupArgs) -> Result<usize> {
    let params = args.params.merged()?;
    let (mut builder, priority) = params.builder()?;
    let site_field = params
        .site
        .as_deref()
        .and_then(|s| s.strip_prefix("field:"))
        .map(str::to_owned);
    let format = args.format.map(|f| match f {
        FormatArg::Jsonl => Format::Jsonl,
        FormatArg::Warc => Format::Warc,
        FormatArg::Dir => Format::Dir,
    });
    // Inputs; standard input is spooled to a temporary file for the second pass.
    let mut spool = None;
    let inputs: Vec<Input> = if args.inputs.is_empty() {
        vec![Input::detect(DEMO, "fixtures/demo.jsonl", format)]
    } else {
        let mut v = Vec::new();
        for name in &args.inputs {
            if name == "-" {
                let mut tmp = tempfile::NamedTempFile::new().context("spooling standard input")?;
                std::io::copy(&mut std::io::stdin().lock(), &mut tmp)
                    .context("spooling standard input")?;
                v.push(Input::detect(
                    tmp.path(),
                    "-",
                    Some(format.unwrap_or(Format::Jsonl)),
                ));
                spool = Some(tmp);
            } else {
                let p = PathBuf::from(name);
                if !p.exists() {
                    bail!("{name}: no such file or directory");
                }
                v.push(Input::detect(p, name.clone(), format));
            }
        }
        v
    };
    let fields = Fields {
        id: args.id_field.clone(),
        text: args.text_field.clone(),
        html: args.html_field.clone(),
        url: args.url_field.clone(),
        priority,
        site: site_field,
    };
    let total_bytes: u64 = inputs
        .iter()
        .filter_map(|i| std::fs::metadata(&i.path).ok())
        .filter(|m| m.is_file())
        .map(|m| m.len())
        .sum();
    let bar = if args.quiet {
        ProgressBar::hidden()
    } else {
        ProgressBar::with_draw_target(Some(total_bytes), ProgressDrawTarget::stderr())
    };
    bar.set_style(
        ProgressStyle::with_template("{spinner} sketching {msg} [{elapsed_precise}] {wide_bar} {bytes}/{total_bytes} ({bytes_per_sec}, ETA {eta})")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    let read_bytes = Arc::new(std::sync::atomic::AtomicU64::new(0));
    {
        let bar = bar.clone();
        let rb = read_bytes.clone();
        builder.on_progress(move |p: Progress| {
            bar.set_position(rb.load(std::sync::atomic::Ordering::Relaxed));
            bar.set_message(format!("{} records", p.records));
        });
    }
    let mut pipeline = builder.build()?;
    let previous = match &args.sketches {
        Some(p) => Some(SavedSketches::load(p)?),
        None => None,
    };
    let names: Vec<String> = inputs.iter().map(|i| i.name.clone()).collect();
    let parse = |rec: neardup::io::RawRecord| {
        let source = &names[rec.position.input];
        rec.into_document(&fields, source)
    };
    let mut boilerplate = None;
    if let Some(cfg) = params.boilerplate()? {
        if previous.is_some() {
            bail!("--boilerplate cannot be combined with --sketches (the saved sketches were made without this run's boilerplate)");
        }
        // First pass: per-site shingle counts. Unreadable records are skipped here and
        // accounted for by the second pass.
        bar.set_message("boilerplate pass");
        let start = std::time::Instant::now();
        let reader = Reader::new(inputs.clone(), fields.clone(), false, false)
            .defer_parsing(true)
            .max_record_bytes(
                params
                    .max_document_bytes
                    .unwrap_or(64 << 20)
                    .saturating_mul(2)
                    .saturating_add(1 << 20),
            );
        let b = pipeline.learn_boilerplate(reader.map_while(|r| r.ok()), parse, cfg)?;
        let seconds = start.elapsed().as_secs_f64();
        let b = Arc::new(b);
        pipeline = pipeline.with_boilerplate(b.clone());
        boilerplate = Some((b, seconds));
    }
    let mut fatal = None;
    // JSON escapes can double a body's size; the pipeline checks the decoded body.
    let max_record = params
        .max_document_bytes
        .unwrap_or(64 << 20)
        .saturating_mul(2)
        .saturating_add(1 << 20);
    let reader = Reader::new(inputs.clone(), fields.clone(), args.strict, false)
        .defer_parsing(true)
        .max_record_bytes(max_record);
    // Read on a thread of its own, stopping after the first fatal error as before. It
    // reads up to 1024 records ahead of the pipeline, so that the workers never wait
    // for the disk or the decompressor.
    let mut failed = false;
    let reader = reader.map_while(move |r| {
        if failed {
            return None;
        }
        failed = r.is_err();
        Some(r)
    });
    let records = ReadAhead::new(reader, 128, 8).map_while(|r| match r {
        Ok(rec) => {
            let n = rec.raw.as_ref().map_or(0, |r| r.len() as u64)
                + rec
                    .doc
                    .as_ref()
                    .map_or(0, |d| d.as_ref().map_or(0, |d| d.body.len() as u64));
            read_bytes.fetch_add(n, std::sync::atomic::Ordering::Relaxed);
            Some(rec)
        }
        Err(e) => {
            fatal = Some(e);
            None
        }
    });
    let d = match &previous {
        Some(p) => pipeline.run_against(p, records, parse)?,
        None => pipeline.run_with(records, parse)?,
    };
    bar.finish_and_clear();
    if let Some(e) = fatal {
        return Err(e.into());
    }

    // Second pass: kept records and rejects, in input order.
    if args.output.is_some() || args.rejects.is_some() {
        let mut out = match &args.output {
            Some(p) => Some(Output::open(p)?),
            None => None,
        };
        let mut rejects = match &args.rejects {
            Some(p) => Some(AtomicFile::create(p)?),
            None => None,
        };
        let reader =
            Reader::new(inputs.clone(), fields.clone(), false, true).max_record_bytes(max_record);
        let mut ordinal = d.previous;
        for rec in reader {
            let rec = rec?;
            let Some(fate) = d.fates.get(ordinal) else {
                bail!("input changed between the two passes")
            };
            match fate {
                Fate::Kept => {
                    if let Some(o) = out.as_mut() {
                        match (&rec.raw, &rec.doc) {
                            (Some(raw), _) => o.write_all(raw)?,
                            (None, Some(Ok(doc))) => {
                                serde_json::to_writer(&mut *o, &doc_json(doc))?
                            }
                            (None, _) => {}
                        }
                        o.write_all(b"\n")?;
                    }
                }
                Fate::Rejected { reason } => {
                    if let Some(r) = rejects.as_mut() {
                        let id = d.ids.get(ordinal).filter(|i| !i.is_empty()).cloned();
                        let input = &inputs[rec.position.input].name;
                        serde_json::to_writer(
                            &mut *r,
                            &json!({"record": ordinal - d.previous, "input": input, "position": rec.position.at, "file": rec.position.file, "id": id, "reason": reason}),
                        )?;
                        r.write_all(b"\n")?;
                    }
                }
                _ => {}
            }
            ordinal += 1;
        }
        if ordinal != d.fates.len() {
            bail!(
                "input changed between the two passes ({ordinal} records, then {})",
                d.fates.len()
            );
        }
        if let Some(o) = out {
            o.finish()?;
        }
        if let Some(r) = rejects {
            r.commit()?;
        }
    }
    drop(spool);
    if let Some(path) = &args.clusters {
        write_jsonl(
            path,
            d.clusters.iter().map(|c| {
                json!({
                    "representative": d.ids[c.representative as usize],
                    "members": c.members.iter().map(|&m| &d.ids[m as usize]).collect::<Vec<_>>(),
                    "size": c.members.len(),
                })
            }),
        )?;
    }
    if let Some(path) = &args.pairs {
        write_jsonl(
            path,
            d.pairs.iter().map(|p| {
                json!({
                    "a": d.ids[p.a as usize], "b": d.ids[p.b as usize],
                    "kind": match p.kind { PairKind::Exact => "exact", PairKind::Near => "near", PairKind::HighRecall => "high_recall" },
                    "site": p.class.as_str(),
                    "shared_supershingles": p.shared_supershingles,
                    "charikar_agreement": p.agreement,
                })
            }),
        )?;
    }
    if let Some(path) = &args.mirrors {
        write_jsonl(path, d.mirrors().iter())?;
    }
    let (stage1, stage2) = pipeline.describe();
    let s = &d.stats;
    let report = json!({
        "format_version": 1,
        "neardup_version": env!("CARGO_PKG_VERSION"),
        "inputs": inputs.iter().map(|i| &i.name).collect::<Vec<_>>(),
        "parameters": {
            "sketch": pipeline.sketcher().config(),
            "stage_one": stage1,
            "stage_two": stage2,
            "charikar_threshold": pipeline.charikar_threshold(),
            "high_recall": pipeline.high_recall_threshold(),
        },
        "accounting": {
            "read": s.read, "previous_snapshot": s.previous, "kept": s.kept, "exact_duplicates": s.exact_duplicates,
            "near_duplicates": s.near_duplicates, "rejected": s.rejected,
            "holds": s.read == s.kept + s.exact_duplicates + s.near_duplicates + s.rejected,
        },
        "stats": s,
        "boilerplate": boilerplate.as_ref().map(|(b, seconds)| json!({
            "settings": b.config(),
            "seconds": seconds,
            "pages_counted": b.pages(),
            "sites_with_boilerplate": b.sites_with_boilerplate(),
            "boilerplate_shingles": b.shingles(),
            "pages_changed": s.boilerplate_pages,
            "terms_and_shingles_removed": s.boilerplate_terms,
            "sites": b.report(),
        })),
        "peak_memory_bytes": neardup::pipeline::peak_memory_bytes(),
    });
    if let Some(path) = &args.report {
        let mut f = AtomicFile::create(path)?;
        serde_json::to_writer_pretty(&mut f, &report)?;
        f.write_all(b"\n")?;
        f.commit()?;
    }
    if !args.quiet {
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
        if let Some((b, seconds)) = &boilerplate {
            eprintln!(
                "  boilerplate: {} shingles on {} sites, removed from {} pages ({} terms and shingles) in a first pass of {:.2} s",
                b.shingles(),
                b.sites_with_boilerplate(),
                s.boilerplate_pages,
                s.boilerplate_terms,
                seconds
            );
        }
        if args.inputs.is_empty() {
            eprintln!("  (this was the bundled demo corpus, fixtures/demo.jsonl; `neardup dedup FILE...` runs on yours)");
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
    Ok(saved)
}

fn doc_json(doc: &Document) -> serde_json::Value {
    match &doc.body {
        Body::Text(t) => json!({"id": doc.id, "url": doc.url, "text": t}),
        Body::Html(h) => json!({"id": doc.id, "url": doc.url, "html": h}),
    }
}

fn read_doc(path: &Path) -> Result<Document> {
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

fn pair(args: PairArgs) -> Result<()> {
    let params = args.params.merged()?;
    let (builder, _) = params.builder()?;
    let pipeline = builder.build()?;
    let sk = pipeline.sketcher();
    let (da, db) = (read_doc(&args.a)?, read_doc(&args.b)?);
    let (a, b) = (sk.analyze(&da), sk.analyze(&db));
    let scores = neardup::eval::Scorer::new(&pipeline).score(&a, &b, 0.0);
    let cfg = sk.config();
    let (jaccard, resemblance, shared, agree) = (
        scores.jaccard,
        scores.estimated_resemblance,
        scores.shared_supershingles,
        scores.agreement,
    );
    let (simhash_distance, exact) = (scores.simhash_distance, scores.exact);
    let (ma, mb) = (
        neardup::broder::megashingles(&a.sketch.supershingles),
        neardup::broder::megashingles(&b.sketch.supershingles),
    );
    let mega = ma.iter().zip(&mb).filter(|(x, y)| x == y).count();
    // The pipeline's own rules (presets included).
    let min_shared = pipeline.min_shared();
    let broder_ok = shared >= min_shared;
    let charikar_ok = agree >= pipeline.charikar_threshold()
        || pipeline.accept_shared().is_some_and(|r| shared >= r);
    let high_recall_ok = pipeline.high_recall_threshold().is_some_and(|h| agree >= h);
    let v = json!({
        "a": {"id": da.id, "terms": a.sketch.terms, "shingles": a.shingles.len()},
        "b": {"id": db.id, "terms": b.sketch.terms, "shingles": b.shingles.len()},
        "exact_duplicate": exact,
        "jaccard_shingles": jaccard,
        "estimated_resemblance": resemblance,
        "supershingles_shared": shared,
        "supershingles": cfg.supershingles,
        "megashingles_shared": mega,
        "charikar_agreement": agree,
        "charikar_bits": cfg.charikar_bits,
        "simhash64_distance": simhash_distance,
        "verdicts": {
            "broder": broder_ok,
            "charikar": charikar_ok,
            "combined": broder_ok && charikar_ok,
            "combined_high_recall": (broder_ok && charikar_ok) || high_recall_ok,
            "simhash64_k3": simhash_distance <= 3,
            "exact": exact,
        }
    });
    if args.json {
        println!("{}", serde_json::to_string_pretty(&v)?);
        return Ok(());
    }
    let yn = |b: bool| if b { "yes" } else { "no" };
    println!(
        "{} ({} terms) vs {} ({} terms)",
        da.id, a.sketch.terms, db.id, b.sketch.terms
    );
    println!("  exact duplicate          {}", yn(exact));
    println!(
        "  Jaccard of {}-shingles    {:.3}",
        cfg.shingle_size, jaccard
    );
    println!(
        "  estimated resemblance    {:.3}  ({} of {} min-values agree)",
        resemblance,
        (resemblance * cfg.minhashes as f64).round(),
        cfg.minhashes
    );
    println!(
        "  supershingles shared     {} of {}   (broder: ≥ {min_shared} → {})",
        shared,
        cfg.supershingles,
        yn(broder_ok)
    );
    println!("  megashingles shared      {} of {}", mega, ma.len());
    println!(
        "  Charikar agreement       {} of {} bits (≥ {} → {})",
        agree,
        cfg.charikar_bits,
        pipeline.charikar_threshold(),
        yn(charikar_ok)
    );
    println!(
        "  simhash-64 distance      {} bits (≤ 3 → {})",
        simhash_distance,
        yn(simhash_distance <= 3)
    );
    println!(
        "  combined (two-stage)     {}",
        yn(broder_ok && charikar_ok)
    );
    if let Some(h) = pipeline.high_recall_threshold() {
        println!(
            "  high-recall union        {} (agreement ≥ {h} → {})",
            yn((broder_ok && charikar_ok) || high_recall_ok),
            yn(high_recall_ok)
        );
    }
    Ok(())
}

fn synth(args: SynthArgs) -> Result<()> {
    use neardup::synth::{parse_proportions, Generator, Kind, SynthConfig};
    let seeds = match &args.seeds {
        Some(p) => {
            let name = p.to_string_lossy().to_string();
            let mut docs = Vec::new();
            let reader = Reader::new(
                vec![Input::detect(p, name, None)],
                Fields::default(),
                true,
                false,
            );
            for rec in reader {
                match rec?.doc {
                    Some(Ok(d)) => docs.push(d),
                    Some(Err(r)) => bail!(
                        "seed record {}: {}",
                        r.id.unwrap_or_else(|| "?".into()),
                        r.reason
                    ),
                    None => {}
                }
            }
            Some(Arc::new(docs))
        }
        None => None,
    };
    let cfg = SynthConfig {
        base_documents: args.base,
        words: (args.min_words, args.max_words),
        duplicate_rate: args.duplicate_rate,
        max_variants: args.max_variants,
        variants: match &args.variants {
            Some(v) => parse_proportions(v)?,
            None => Kind::ALL.iter().map(|&k| (k, 1.0)).collect(),
        },
        hosts: args.hosts,
        template_sites: args.template_sites,
        template_words: args.template_words,
        html_share: args.html_share,
        vocabulary: args.vocabulary,
        seeds,
        seed: args.seed,
        ..Default::default()
    };
    let generator = Generator::new(cfg)?;
    let mut out = SynthOutput::open(&args.output)?;
    let mut truth = match &args.truth {
        Some(t) => Some(AtomicFile::create(t)?),
        None => None,
    };
    for (doc, pair) in generator {
        serde_json::to_writer(&mut out, &doc_json(&doc))?;
        out.write_all(b"\n")?;
        if let (Some(t), Some(p)) = (truth.as_mut(), pair) {
            serde_json::to_writer(&mut *t, &p)?;
            t.write_all(b"\n")?;
        }
    }
    out.finish()?;
    if let Some(t) = truth {
        t.commit()?;
    }
    Ok(())
}

/// Output of `synth`: plain, zstd or gzip by the file name's extension.
enum SynthOutput {
    Plain(Output),
    Zstd(zstd::Encoder<'static, AtomicFile>),
    Gzip(flate2::write::GzEncoder<AtomicFile>),
}

impl SynthOutput {
    fn open(path: &str) -> Result<SynthOutput> {
        Ok(if path.ends_with(".zst") {
            SynthOutput::Zstd(zstd::Encoder::new(AtomicFile::create(path)?, 3)?)
        } else if path.ends_with(".gz") {
            SynthOutput::Gzip(flate2::write::GzEncoder::new(
                AtomicFile::create(path)?,
                flate2::Compression::fast(),
            ))
        } else {
            SynthOutput::Plain(Output::open(path)?)
        })
    }

    fn finish(self) -> Result<()> {
        match self {
            SynthOutput::Plain(o) => o.finish(),
            SynthOutput::Zstd(z) => Ok(z.finish()?.commit()?),
            SynthOutput::Gzip(g) => Ok(g.finish()?.commit()?),
        }
    }
}

impl Write for SynthOutput {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        match self {
            SynthOutput::Plain(w) => w.write(buf),
            SynthOutput::Zstd(w) => w.write(buf),
            SynthOutput::Gzip(w) => w.write(buf),
        }
    }
    fn flush(&mut self) -> std::io::Result<()> {
        match self {
            SynthOutput::Plain(w) => w.flush(),
            SynthOutput::Zstd(w) => w.flush(),
            SynthOutput::Gzip(w) => w.flush(),
        }
    }
}

/// A stage two that keeps nothing (only exact duplicates remain).
#[derive(Debug)]
struct KeepNothing;

impl neardup::filter::PairFilter for KeepNothing {
    fn name(&self) -> String {
        "none kept".into()
    }
    fn accept(&self, _: neardup::SketchRef<'_>, _: neardup::SketchRef<'_>) -> bool {
        false
    }
}

fn eval_corpus(args: &EvalArgs, params: &Params, corpus: &str, truth: &Path) -> Result<()> {
    use neardup::candidates::{BucketLimits, CharikarBlocks, PughChecksums, SimhashCandidates};
    use neardup::filter::AcceptAll;
    let input = Input::detect(corpus, corpus, None);
    let mut docs = Vec::new();
    for rec in Reader::new(vec![input], Fields::default(), false, false) {
        if let Some(Ok(d)) = rec?.doc {
            docs.push(d);
        }
    }
    let truth = neardup::eval::read_truth(truth)?;
    let limits = BucketLimits::default();
    let (combined, _) = params.builder()?;
    let mut algos: Vec<(String, Pipeline)> = vec![("combined".into(), combined.build()?)];
    algos.push((
        "broder".into(),
        Pipeline::builder().filter(Arc::new(AcceptAll)).build()?,
    ));
    algos.push((
        "charikar-blocks".into(),
        Pipeline::builder()
            .candidates(Arc::new(CharikarBlocks {
                max_distance: 12,
                limits,
            }))
            .filter(Arc::new(AcceptAll))
            .build()?,
    ));
    algos.push((
        "simhash64".into(),
        Pipeline::builder()
            .candidates(Arc::new(SimhashCandidates {
                design: neardup::index::Design::k3_10(),
            }))
            .filter(Arc::new(AcceptAll))
            .build()?,
    ));
    let mut pugh = Pipeline::builder();
    pugh.sketch_config_mut().pugh = Some(neardup::pugh::PughConfig::default());
    algos.push((
        "pugh".into(),
        pugh.candidates(Arc::new(PughChecksums { limits }))
            .filter(Arc::new(AcceptAll))
            .build()?,
    ));
    algos.push((
        "exact".into(),
        Pipeline::builder().filter(Arc::new(KeepNothing)).build()?,
    ));
    algos.push((
        "recall-preset".into(),
        Pipeline::builder().preset(Preset::Recall).build()?,
    ));
    let results = neardup::eval::evaluate_corpus(&docs, &truth, &algos)?;
    println!(
        "{} documents, {} truth pairs listed",
        docs.len(),
        truth.len()
    );
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
    for r in &results {
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
        for r in &results {
            print!("{:<16}", r.name);
            for (_, n, f) in &r.recall_by_kind {
                print!(" {:>9.3}", *f as f64 / (*n).max(1) as f64);
            }
            println!();
        }
    }
    if let Some(path) = &args.json {
        let mut f = AtomicFile::create(path)?;
        serde_json::to_writer_pretty(
            &mut f,
            &json!({"documents": docs.len(), "algorithms": results}),
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
        let svg = neardup::plot::loglog(
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

fn eval(mut args: EvalArgs) -> Result<()> {
    let params = std::mem::take(&mut args.params).merged()?;
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
        write_jsonl(
            path,
            pairs
                .iter()
                .zip(&scores)
                .map(|(p, s)| json!({"id": p.id, "scores": s})),
        )?;
    }
    let sweep = args.sweep || args.plot.is_some();
    let report = neardup::eval::evaluate(&pipeline, &scores, &cfg, sweep);
    println!(
        "{} pairs: {} near-duplicates (label >= {}), {} not",
        pairs.len(),
        report.positives,
        cfg.positive_min,
        report.negatives
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
    if let Some(path) = &args.json {
        let mut f = AtomicFile::create(path)?;
        serde_json::to_writer_pretty(&mut f, &report)?;
        f.write_all(b"\n")?;
        f.commit()?;
    }
    if let Some(path) = &args.plot {
        let curves: Vec<(String, Vec<(f64, f64)>)> = report
            .algorithms
            .iter()
            .filter_map(|a| {
                a.sweep.as_ref().map(|s| {
                    (
                        a.name.clone(),
                        s.iter().map(|p| (p.recall, p.precision)).collect(),
                    )
                })
            })
            .collect();
        let svg = neardup::plot::pr_curves("Precision–recall on labelled pairs", &curves);
        let mut f = AtomicFile::create(path)?;
        f.write_all(svg.as_bytes())?;
        f.commit()?;
    }
    Ok(())
}

fn read_lines(input: &str) -> Result<Vec<String>> {
    let text = if input == "-" {
        let mut s = String::new();
        std::io::Read::read_to_string(&mut std::io::stdin().lock(), &mut s)?;
        s
    } else {
        std::fs::read_to_string(input).with_context(|| format!("reading {input}"))?
    };
    Ok(text.lines().map(str::to_owned).collect())
}

/// Parses `ID FP` or `FP` lines; the line number is the id when absent.
fn parse_fingerprints(input: &str) -> Result<Vec<(u64, u64)>> {
    let mut out = Vec::new();
    for (n, line) in read_lines(input)?.iter().enumerate() {
        let parts: Vec<&str> = line.split_whitespace().collect();
        let bad = || {
            anyhow::anyhow!(
                "{input}: line {}: expected `ID FINGERPRINT-HEX` or `FINGERPRINT-HEX`",
                n + 1
            )
        };
        let (id, fp) = match parts.as_slice() {
            [] => continue,
            [fp] => (n as u64, *fp),
            [id, fp, ..] => (id.parse::<u64>().map_err(|_| bad())?, *fp),
        };
        let fp = u64::from_str_radix(fp.trim_start_matches("0x"), 16).map_err(|_| bad())?;
        out.push((id, fp));
    }
    Ok(out)
}

fn index(cmd: IndexCommand) -> Result<()> {
    use neardup::index::{Design, SimhashIndex};
    match cmd {
        IndexCommand::Fingerprint { inputs } => {
            let inputs: Vec<Input> = inputs
                .iter()
                .map(|n| Input::detect(n, n.clone(), None))
                .collect();
            let sk = neardup::Sketcher::new(neardup::SketchConfig::default())?;
            let mut out = std::io::BufWriter::new(std::io::stdout().lock());
            for (i, rec) in Reader::new(inputs, Fields::default(), false, false).enumerate() {
                let rec = rec?;
                if let Some(Ok(doc)) = rec.doc {
                    writeln!(out, "{i} {:016x} {}", sk.sketch(&doc).simhash, doc.id)?;
                }
            }
            out.flush()?;
        }
        IndexCommand::Build {
            input,
            output,
            design,
        } => {
            let design = match design.strip_prefix("auto:") {
                Some(rest) => {
                    let v: Vec<u32> = rest
                        .split(':')
                        .map(str::parse)
                        .collect::<Result<_, _>>()
                        .context("auto:K:LOG2N:LOG2SCAN")?;
                    match v.as_slice() {
                        [k, d, t] => Design::auto(*k, *d, *t)?,
                        _ => bail!("auto:K:LOG2N:LOG2SCAN"),
                    }
                }
                None => Design::named(&design)?,
            };
            let idx = SimhashIndex::new(design)?;
            idx.extend(parse_fingerprints(&input)?);
            idx.save(&output)?;
            eprintln!(
                "neardup: {} fingerprints in {} tables written to {}",
                idx.len(),
                idx.table_count(),
                output.display()
            );
        }
        IndexCommand::Add { index, input } => {
            let idx = SimhashIndex::load(&index)?;
            idx.extend(parse_fingerprints(&input)?);
            idx.save(&index)?;
        }
        IndexCommand::Query {
            index,
            input,
            insert,
        } => {
            let idx = SimhashIndex::load(&index)?;
            let mut out = std::io::BufWriter::new(std::io::stdout().lock());
            for (id, fp) in parse_fingerprints(&input)? {
                let m = if insert {
                    idx.query_or_insert(id, fp)
                } else {
                    idx.query(fp)
                };
                serde_json::to_writer(
                    &mut out,
                    &json!({"id": id, "fingerprint": format!("{fp:016x}"), "matches": m}),
                )?;
                out.write_all(b"\n")?;
            }
            out.flush()?;
            if insert {
                idx.save(&index)?;
            }
        }
        IndexCommand::Stats { index } => {
            let idx = SimhashIndex::load(&index)?;
            let tables = idx.design().tables();
            let prefixes: Vec<u8> = tables.iter().map(|t| t.prefix).collect();
            println!(
                "{}",
                serde_json::to_string_pretty(&json!({
                    "design": idx.design(), "tables": tables.len(),
                    "prefix_bits": {"min": prefixes.iter().min(), "max": prefixes.iter().max()},
                    "fingerprints": idx.len(),
                    "file_bytes": std::fs::metadata(&index)?.len(),
                }))?
            );
        }
    }
    Ok(())
}
