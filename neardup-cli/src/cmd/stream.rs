//! `neardup stream`: the online deduper behind a pipe. JSONL records on standard input,
//! one JSON verdict line per record on standard output, in order, flushed whenever the
//! next record has not arrived yet (so each verdict is out before the command waits).

use crate::config::{FieldArgs, Params};
use anyhow::{bail, Result};
use clap::Args;
use neardup::io::{parse_json_record, JsonlLine, JsonlLines};
use neardup::online::SyncPolicy;
use neardup::{Deduper, RejectReason, Verdict};
use serde::Serialize;
use std::io::Write;
use std::path::PathBuf;

#[derive(Args)]
pub struct StreamArgs {
    /// Keep the stored documents in this directory (a snapshot and a log), so that a
    /// restart, or a crash, resumes where it stopped; without it, in memory.
    #[arg(long)]
    pub state: Option<PathBuf>,
    /// When the log is flushed to the disk: `always` (each record; nothing acknowledged
    /// is lost), `never` (left to the system), or `N` / `Nms` (every N records / N
    /// milliseconds).
    #[arg(long, default_value = "always")]
    pub sync: String,
    /// Compact the state (a new snapshot, an empty log) after this many stored
    /// documents; 0: never.
    #[arg(long, default_value_t = 1_000_000)]
    pub compact_every: u64,
    /// Make room at once for this many more stored documents (the deduper's tables are
    /// sized now instead of growing step by step); the verdicts are the same.
    #[arg(long)]
    pub reserve: Option<usize>,
    #[command(flatten)]
    pub fields: FieldArgs,
    #[command(flatten)]
    pub params: Params,
}

/// One output line.
#[derive(Serialize)]
struct VerdictLine<'a> {
    /// The record's id (absent when it could not be read).
    id: Option<&'a str>,
    /// `new`, `exact`, `near` or `rejected`.
    verdict: &'static str,
    /// The stored document it duplicates.
    of: Option<&'a str>,
    /// Why a record was rejected.
    #[serde(skip_serializing_if = "Option::is_none")]
    reason: Option<String>,
}

fn parse_sync(s: &str) -> Result<SyncPolicy> {
    Ok(match s {
        "always" => SyncPolicy::Always,
        "never" => SyncPolicy::Never,
        _ => {
            if let Some(ms) = s.strip_suffix("ms") {
                SyncPolicy::Every {
                    entries: u32::MAX,
                    millis: ms.parse()?,
                }
            } else {
                match s.parse::<u32>() {
                    Ok(n) if n > 0 => SyncPolicy::Every {
                        entries: n,
                        millis: u64::MAX,
                    },
                    _ => bail!("--sync: always, never, N (records) or Nms, not {s:?}"),
                }
            }
        }
    })
}

pub fn stream(args: StreamArgs) -> Result<()> {
    let params = args.params.merged()?;
    let (builder, priority) = params.builder()?;
    let pipeline = builder.build()?;
    let cap = pipeline.max_record_bytes();
    let sync = parse_sync(&args.sync)?;
    let d = match &args.state {
        Some(dir) => Deduper::open(dir, pipeline, sync)?,
        None => Deduper::new(pipeline)?,
    };
    if let Some(n) = args.reserve {
        d.reserve(n);
    }
    let fields = args.fields.fields(
        priority,
        params
            .site
            .as_deref()
            .and_then(|s| s.strip_prefix("field:"))
            .map(str::to_owned),
    );
    // The lines as `dedup` reads a JSONL input (blank lines skipped, `\r\n` ends cut);
    // one longer than the record cap is read to its end without being held and
    // rejected, so a runaway line does not take the process's memory.
    let mut lines = JsonlLines::from_read(Box::new(std::io::stdin()), cap);
    // Answers are flushed whenever the next record is not at hand, before waiting for
    // it: a program that sends a record and waits for its verdict gets it, and a stream
    // read in one go is not written one system call per line.
    let mut out = std::io::BufWriter::with_capacity(1 << 16, std::io::stdout().lock());
    let mut changes = 0u64;
    // The records at hand are answered together: sketched on the pipeline's threads,
    // then checked and stored one after the other in their order
    // (`Deduper::check_and_insert_many`: the verdicts one call per record would give).
    // A batch ends at the first record not at hand, so no answer waits for input.
    let mut batch: Vec<Item> = Vec::new();
    let mut docs: Vec<neardup::Document> = Vec::new();
    while let Some(line) = lines.next() {
        batch.push(match line {
            JsonlLine::Record { at, bytes } => {
                match parse_json_record(bytes, &fields, "stdin", at) {
                    Err(rej) => Item::Answered(rej.id, Verdict::Rejected { reason: rej.reason }),
                    Ok(doc) => {
                        docs.push(doc);
                        Item::Checked
                    }
                }
            }
            JsonlLine::TooLarge { bytes, .. } => Item::Answered(
                None,
                Verdict::Rejected {
                    reason: RejectReason::RecordTooLarge {
                        bytes,
                        max: cap as u64,
                    },
                },
            ),
            JsonlLine::Unreadable { at, error } => {
                answer(&d, &mut batch, &mut docs, &mut out)?;
                out.flush()?;
                bail!("reading standard input, line {at}: {error}")
            }
        });
        let full = batch.len() >= STREAM_BATCH;
        if full || !lines.line_at_hand() {
            changes += answer(&d, &mut batch, &mut docs, &mut out)?;
            let compact = args.compact_every > 0 && changes >= args.compact_every;
            if compact || !lines.line_at_hand() {
                out.flush()?;
            }
            if compact {
                d.compact()?;
                changes = 0;
            }
        }
    }
    answer(&d, &mut batch, &mut docs, &mut out)?;
    out.flush()?;
    d.sync()?;
    Ok(())
}

/// Records answered together at most (the records at hand, up to this many).
const STREAM_BATCH: usize = 256;

/// A record of a batch: answered on reading (rejected), or one of the batch's
/// documents, checked with the others.
enum Item {
    Answered(Option<String>, Verdict),
    Checked,
}

/// Checks and stores `docs` (the `Checked` items of `batch`, in order), writes a verdict
/// line per item in order, and empties both; returns the documents stored. A failure to
/// log a change is returned after the lines of the records before it.
fn answer(
    d: &Deduper,
    batch: &mut Vec<Item>,
    docs: &mut Vec<neardup::Document>,
    out: &mut impl Write,
) -> Result<u64> {
    let mut verdicts = d.check_and_insert_many(docs).into_iter();
    let mut docs_in_order = docs.drain(..);
    let mut stored = 0;
    for item in batch.drain(..) {
        let (id, verdict) = match item {
            Item::Answered(id, v) => (id, v),
            Item::Checked => {
                let doc = docs_in_order.next().expect("a document per checked item");
                match verdicts
                    .next()
                    .expect("a verdict per document up to an error")
                {
                    Ok(v) => (Some(doc.id), v),
                    Err(e) => return Err(e.into()),
                }
            }
        };
        if verdict == Verdict::New {
            stored += 1;
        }
        let reason = match &verdict {
            Verdict::Rejected { reason } => Some(reason.to_string()),
            _ => None,
        };
        serde_json::to_writer(
            &mut *out,
            &VerdictLine {
                id: id.as_deref(),
                verdict: verdict.as_str(),
                of: verdict.of(),
                reason,
            },
        )?;
        out.write_all(b"\n")?;
    }
    Ok(stored)
}
