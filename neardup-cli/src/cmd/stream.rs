//! `neardup stream`: the online deduper behind a pipe. JSONL records on standard input,
//! one JSON verdict line per record on standard output, in order, flushed whenever the
//! next record has not arrived yet (so each verdict is out before the command waits).

use crate::config::{FieldArgs, ParamFlags};
use anyhow::{bail, Result};
use clap::Args;
use neardup::io::Fields;
use neardup::io::{parse_json_record, JsonlLine, JsonlLines};
use neardup::online::{StateOptions, SyncPolicy};
use neardup::{Deduper, RejectReason, Verdict};
use serde::Serialize;
use std::io::Write;
use std::path::{Path, PathBuf};

#[derive(Args)]
pub struct StreamArgs {
    /// Keep the stored documents in this directory (a snapshot and a log), so that a
    /// restart, or a crash, resumes where it stopped; without it, in memory.
    #[arg(long)]
    pub state: Option<PathBuf>,
    #[command(flatten)]
    pub online: OnlineArgs,
}

/// The online deduper's flags, shared by `stream` and `serve`.
#[derive(Args)]
pub struct OnlineArgs {
    /// When the log is flushed to the disk: `always` (each record; nothing acknowledged
    /// is lost), `never` (left to the system), or `N` / `Nms` (every N records / N
    /// milliseconds).
    #[arg(long, default_value = "always")]
    pub sync: SyncPolicy,
    /// Open a state whose log is damaged before its last entry (a bad sector, a flipped
    /// bit) by keeping every entry that still checks; the damaged log is kept beside it
    /// as `log.G.damaged`, and what was lost is said on standard error. Without it, such
    /// a state is an error (a torn last entry, from a crash, is always dropped quietly).
    #[arg(long)]
    pub recover: bool,
    /// Open the state even where its filesystem has no file locks, promising that no
    /// other process opens it meanwhile.
    #[arg(long)]
    pub unlocked: bool,
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
    pub params: ParamFlags,
}

/// An opened online deduper and how records are read for it.
pub struct Online {
    /// The deduper.
    pub deduper: Deduper,
    /// The record fields it reads.
    pub fields: Fields,
    /// The record size cap (bytes): a longer record is rejected.
    pub cap: usize,
}

impl OnlineArgs {
    /// Opens the deduper on `state` (in memory without one), saying on standard error,
    /// as `who`, what a recovery lost.
    pub fn open(&mut self, state: Option<&Path>, who: &str) -> Result<Online> {
        let params = std::mem::take(&mut self.params).0.merged()?;
        let (builder, priority) = params.builder()?;
        let pipeline = builder.build()?;
        let cap = pipeline.max_record_bytes();
        let options = StateOptions::new()
            .sync(self.sync)
            .recover(self.recover)
            .unlocked(self.unlocked);
        let d = match state {
            Some(dir) => Deduper::open_with(dir, pipeline, &options)?,
            None => Deduper::new(pipeline)?,
        };
        if let Some(r) = d.recovered() {
            eprintln!("{who}: {r}");
        }
        if let Some(n) = self.reserve {
            d.reserve(n)?;
        }
        let fields = self.fields.fields(priority, params.site_field()?);
        Ok(Online {
            deduper: d,
            fields,
            cap,
        })
    }
}

/// One verdict as `stream` writes it and `serve` answers it.
#[derive(Serialize)]
pub struct VerdictLine<'a> {
    /// The record's id (absent when it could not be read).
    pub id: Option<&'a str>,
    /// `new`, `exact`, `near` or `rejected`.
    pub verdict: &'static str,
    /// The stored document it duplicates.
    pub of: Option<&'a str>,
    /// Why a record was rejected.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

impl<'a> VerdictLine<'a> {
    /// The line of `verdict` for the record `id`.
    pub fn new(id: Option<&'a str>, verdict: &'a Verdict) -> Self {
        VerdictLine {
            id,
            verdict: verdict.as_str(),
            of: verdict.of(),
            reason: match verdict {
                Verdict::Rejected { reason } => Some(reason.to_string()),
                _ => None,
            },
        }
    }
}

pub fn stream(mut args: StreamArgs) -> Result<()> {
    let Online {
        deduper: d,
        fields,
        cap,
    } = args.online.open(args.state.as_deref(), "neardup stream")?;
    // The lines as `dedup` reads a JSONL input (blank lines skipped, `\r\n` ends cut);
    // one longer than the record cap is read to its end without being held and
    // rejected, so a runaway line does not take the process's memory.
    let mut lines = JsonlLines::from_read(Box::new(std::io::stdin()), cap);
    // Answers are flushed whenever the next record is not at hand, before waiting for
    // it: a program that sends a record and waits for its verdict gets it, and a stream
    // read in one go is not written one system call per line.
    let mut out = std::io::BufWriter::with_capacity(1 << 16, std::io::stdout().lock());
    let mut changes = 0u64;
    while let Some(line) = lines.next() {
        let (id, verdict) = match line {
            JsonlLine::Record { at, bytes } => match parse_json_record(bytes, &fields, "stdin", at)
            {
                Err(rej) => (rej.id, Verdict::Rejected { reason: rej.reason }),
                Ok(doc) => {
                    let v = d.check_and_insert(&doc)?;
                    (Some(doc.id), v)
                }
            },
            JsonlLine::TooLarge { bytes, .. } => (
                None,
                Verdict::Rejected {
                    reason: RejectReason::RecordTooLarge {
                        bytes,
                        max: cap as u64,
                    },
                },
            ),
            JsonlLine::Unreadable { at, error } => {
                bail!("reading standard input, line {at}: {error}")
            }
        };
        if verdict == Verdict::New {
            changes += 1;
        }
        serde_json::to_writer(&mut out, &VerdictLine::new(id.as_deref(), &verdict))?;
        out.write_all(b"\n")?;
        let compact = args.online.compact_every > 0 && changes >= args.online.compact_every;
        if compact || !lines.line_at_hand() {
            out.flush()?;
        }
        if compact {
            d.compact()?;
            changes = 0;
        }
    }
    out.flush()?;
    d.sync()?;
    Ok(())
}
