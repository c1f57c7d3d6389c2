//! `neardup stream`: the online deduper behind a pipe. JSONL records on standard input,
//! one JSON verdict line per record on standard output, in order, flushed per line.

use crate::config::{FieldArgs, Params};
use anyhow::{bail, Result};
use clap::Args;
use neardup::io::parse_json_record;
use neardup::online::SyncPolicy;
use neardup::{Deduper, Verdict};
use serde::Serialize;
use std::io::{BufRead, Write};
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
    let stdin = std::io::stdin();
    let mut input = stdin.lock();
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    let mut line = Vec::new();
    let mut at = 0u64;
    let mut changes = 0u64;
    loop {
        line.clear();
        if input.read_until(b'\n', &mut line)? == 0 {
            break;
        }
        at += 1;
        while line.last().is_some_and(|&c| c == b'\n' || c == b'\r') {
            line.pop();
        }
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        let (id, verdict) = match parse_json_record(&line, &fields, "stdin", at) {
            Err(rej) => (rej.id, Verdict::Rejected { reason: rej.reason }),
            Ok(doc) => {
                let v = d.check_and_insert(&doc)?;
                (Some(doc.id), v)
            }
        };
        if verdict == Verdict::New {
            changes += 1;
        }
        let reason = match &verdict {
            Verdict::Rejected { reason } => Some(reason.to_string()),
            _ => None,
        };
        serde_json::to_writer(
            &mut out,
            &VerdictLine {
                id: id.as_deref(),
                verdict: verdict.as_str(),
                of: verdict.of(),
                reason,
            },
        )?;
        out.write_all(b"\n")?;
        out.flush()?;
        if args.compact_every > 0 && changes >= args.compact_every {
            d.compact()?;
            changes = 0;
        }
    }
    d.sync()?;
    Ok(())
}
