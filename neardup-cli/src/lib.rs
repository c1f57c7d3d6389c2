//! The `neardup` command line: argument parsing, validation into the library's
//! configuration, and presentation. One module per subcommand in [`cmd`]; the flags
//! shared by the commands in [`config`]. The work itself is the library's: a run over
//! files is a [`neardup::job::Job`], its report and HTML page [`neardup::report`].
//!
//! Exit codes: 0 success, 1 error (input, output, configuration, accounting), 2 usage.

pub mod cmd;
pub mod config;

use clap::{Parser, Subcommand};
pub use cmd::dedup::DedupArgs;
pub use cmd::eval::EvalArgs;
pub use cmd::pair::PairArgs;
pub use cmd::sketch::SketchArgs;
pub use cmd::synth::SynthArgs;
use std::path::PathBuf;

#[derive(Parser)]
#[command(
    name = "neardup",
    version,
    about = "Find near-duplicate documents: Broder supershingles + Charikar projections (Henzinger's two-stage filter)"
)]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
pub enum Command {
    /// Deduplicate a corpus snapshot: kept records, clusters, pairs, rejects, report.
    #[command(after_help = "Examples:
  neardup dedup                                  # the bundled demo corpus
  neardup dedup crawl.jsonl.zst -o kept.jsonl --clusters clusters.jsonl --report report.json
  neardup dedup pages/ --format dir --preset recall --pairs pairs.jsonl
  neardup dedup crawl.jsonl.zst --html report.html   # look before you delete
  cat corpus.jsonl | neardup dedup - -o - > kept.jsonl")]
    Dedup(Box<DedupArgs>),
    /// Make `dedup --html`'s page again from a finished run's saved outputs and its
    /// inputs (the report must be of this version, with its settings).
    #[command(after_help = "Example:
  neardup dedup crawl.jsonl.zst -o kept.jsonl --report r.json --clusters c.jsonl --pairs p.jsonl --rejects x.jsonl --mirrors m.jsonl
  neardup report crawl.jsonl.zst --report r.json --clusters c.jsonl --pairs p.jsonl --rejects x.jsonl --mirrors m.jsonl --html report.html")]
    Report(cmd::report::ReportArgs),
    /// Every measure the library has for two documents, and each rule's verdict.
    #[command(after_help = "Example:
  neardup pair a.html b.html")]
    Pair(PairArgs),
    /// What a preset (or the settings given) means: the probability that a pair becomes
    /// a candidate as a function of its resemblance, and stage two's thresholds as a
    /// resemblance and a cosine.
    #[command(after_help = "Examples:
  neardup presets --preset recall
  neardup presets --preset recall --band 3 --min-shared 30 --json")]
    Presets(cmd::presets::PresetsArgs),
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
    /// The online deduper behind a pipe: JSONL records on stdin, one verdict line per
    /// record on stdout (`id`, `verdict`: new / exact / near / rejected, `of`), flushed
    /// per line; with `--state DIR` it survives restarts and crashes.
    #[command(after_help = "Example (an indexing job's filter):
  producer | neardup stream --state seen/ | consumer
  echo '{\"id\": \"a\", \"text\": \"hello world\"}' | neardup stream")]
    Stream(cmd::stream::StreamArgs),
    /// The online deduper as an HTTP service many clients share: batches of records in,
    /// `stream`'s verdict line for each out; durable under `--sync`, loopback only
    /// unless given `--token-file`.
    #[command(after_help = "Example (a crawler fleet's filter):
  neardup serve --state seen/ --listen 127.0.0.1:7878 &
  curl -s localhost:7878/v1/check-and-insert -H 'Content-Type: application/x-ndjson' \\
       --data-binary @pages.jsonl")]
    Serve(Box<cmd::serve::ServeArgs>),
    /// Generate a corpus with planted near-duplicates and its ground truth.
    #[command(after_help = "Example (the bundled demo corpus):
  neardup synth --base 150 --min-words 60 --max-words 300 --seed 7 -o fixtures/demo.jsonl --truth fixtures/demo-truth.jsonl")]
    Synth(SynthArgs),
}

#[derive(Subcommand)]
pub enum IndexCommand {
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
        #[arg(long, default_value = neardup::index::Design::DEFAULT_NAME)]
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

/// `--format`: the library's [`Format`](neardup::io::Format), by its name.
pub fn parse_format(s: &str) -> std::result::Result<neardup::io::Format, String> {
    s.parse().map_err(|e: neardup::Error| e.to_string())
}

/// Parses the command line and runs the command; returns the process's exit code.
pub fn run() -> i32 {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Dedup(a) => cmd::dedup::dedup(*a),
        Command::Pair(a) => cmd::pair::pair(a),
        Command::Presets(a) => cmd::presets::presets(a),
        Command::Report(a) => cmd::report::report(a),
        Command::Synth(a) => cmd::synth::synth(a),
        Command::Stream(a) => cmd::stream::stream(a),
        Command::Serve(a) => cmd::serve::serve(*a),
        Command::Eval(a) => cmd::eval::eval(a),
        Command::Sketch(a) => cmd::sketch::sketch(a),
        Command::Index(c) => cmd::index::index(c),
    };
    match result {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("neardup: error: {}", error_text(&e));
            1
        }
    }
}

/// An error with its causes, each said once: a cause whose text the message so far
/// already ends with (an error that prints its source itself, as the library's I/O
/// errors do) is not repeated.
fn error_text(e: &anyhow::Error) -> String {
    let mut out = String::new();
    for cause in e.chain() {
        let t = cause.to_string();
        if out.is_empty() {
            out = t;
        } else if !out.ends_with(&t) {
            out.push_str(": ");
            out.push_str(&t);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::error_text;
    use anyhow::Context;

    /// The library's I/O error prints its source itself: the source is not said twice;
    /// a context above it and a cause that adds words are kept.
    #[test]
    fn error_text_says_each_cause_once() {
        let io = std::io::Error::new(std::io::ErrorKind::NotFound, "no such file or directory");
        let e: anyhow::Error = neardup::Error::io("/x/corpus.jsonl", io).into();
        assert_eq!(error_text(&e), "/x/corpus.jsonl: no such file or directory");
        let e = Err::<(), _>(e).context("reading the inputs").unwrap_err();
        assert_eq!(
            error_text(&e),
            "reading the inputs: /x/corpus.jsonl: no such file or directory"
        );
        let e = Err::<(), _>(std::io::Error::other("disk full"))
            .context("writing kept.jsonl")
            .unwrap_err();
        assert_eq!(error_text(&e), "writing kept.jsonl: disk full");
    }
}
