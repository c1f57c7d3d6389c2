//! `neardup index`: the simhash index (build, add, query, stats, fingerprints).

use crate::IndexCommand;
use anyhow::{bail, Context, Result};
use neardup::io::{Fields, Input, Reader};
use serde_json::json;
use std::io::{BufRead, Read, Write};
use std::path::Path;

/// The longest line of a fingerprint list (an id and a fingerprint take under 50 bytes;
/// `index fingerprint` adds the document's id, which may be long).
const MAX_LINE: u64 = 1 << 20;

/// Calls `each(id, fingerprint)` for the `ID FINGERPRINT-HEX` or `FINGERPRINT-HEX` lines
/// of `input` (`-`: standard input) as they are read, one line at a time (the line
/// number, from 0, is the id when absent; blank lines are skipped; more columns after
/// the fingerprint are ignored). `before_wait` is called whenever the next line is not
/// wholly read yet, before waiting for it (so that answers can be flushed to a program that
/// waits for them before it sends more).
pub fn each_fingerprint(
    input: &str,
    mut each: impl FnMut(u64, u64) -> Result<()>,
    mut before_wait: impl FnMut() -> Result<()>,
) -> Result<()> {
    let source: Box<dyn Read> = if input == "-" {
        Box::new(std::io::stdin())
    } else {
        Box::new(std::fs::File::open(input).with_context(|| format!("reading {input}"))?)
    };
    let mut r = std::io::BufReader::with_capacity(1 << 20, source);
    let mut line = Vec::new();
    // Lines read so far; the current one's number, from 1.
    let mut n = 0u64;
    loop {
        if !r.buffer().contains(&b'\n') {
            // No whole line buffered: the next read may wait.
            before_wait()?;
        }
        line.clear();
        let got = (&mut r)
            .take(MAX_LINE)
            .read_until(b'\n', &mut line)
            .with_context(|| format!("reading {input}"))?;
        if got == 0 {
            return Ok(());
        }
        n += 1;
        if got as u64 == MAX_LINE && line.last() != Some(&b'\n') {
            bail!("{input}: line {n}: longer than {MAX_LINE} bytes");
        }
        let bad = || {
            anyhow::anyhow!("{input}: line {n}: expected `ID FINGERPRINT-HEX` or `FINGERPRINT-HEX`")
        };
        let text = std::str::from_utf8(&line).map_err(|_| bad())?;
        let mut parts = text.split_whitespace();
        let (id, fp) = match (parts.next(), parts.next()) {
            (None, _) => continue,
            (Some(fp), None) => (n - 1, fp),
            (Some(id), Some(fp)) => (id.parse::<u64>().map_err(|_| bad())?, fp),
        };
        let fp = u64::from_str_radix(fp.trim_start_matches("0x"), 16).map_err(|_| bad())?;
        each(id, fp)?;
    }
}

/// Every `(id, fingerprint)` of `input` (see [`each_fingerprint`]).
pub fn parse_fingerprints(input: &str) -> Result<Vec<(u64, u64)>> {
    let mut out = Vec::new();
    each_fingerprint(
        input,
        |id, fp| {
            out.push((id, fp));
            Ok(())
        },
        || Ok(()),
    )?;
    Ok(out)
}

/// `--design`: a named design, `K:R1[,R2…]`, or `auto:K:LOG2N:LOG2SCAN`.
fn parse_design(design: &str) -> Result<neardup::index::Design> {
    use neardup::index::Design;
    Ok(match design.strip_prefix("auto:") {
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
        None => Design::named(design)?,
    })
}

/// `index query`: each fingerprint line answered with its matches (and inserted
/// when it has none, with `--insert`, the index saved after).
fn query(index: &Path, input: &str, insert: bool) -> Result<()> {
    let idx = neardup::index::SimhashIndex::load(index)?;
    // Answered line by line as the queries are read; the answers so far are flushed
    // whenever the next query has not arrived yet (a crawler that sends one and waits
    // for its answer gets it).
    let out = std::cell::RefCell::new(std::io::BufWriter::new(std::io::stdout().lock()));
    each_fingerprint(
        input,
        |id, fp| {
            let m = if insert {
                idx.query_or_insert(id, fp)
            } else {
                idx.query(fp)
            };
            let mut out = out.borrow_mut();
            serde_json::to_writer(
                &mut *out,
                &json!({"id": id, "fingerprint": format!("{fp:016x}"), "matches": m}),
            )?;
            out.write_all(b"\n")?;
            Ok(())
        },
        || Ok(out.borrow_mut().flush()?),
    )?;
    out.borrow_mut().flush()?;
    if insert {
        idx.save(index)?;
    }
    Ok(())
}

/// Runs an `index` subcommand.
pub fn index(cmd: IndexCommand) -> Result<()> {
    use neardup::index::SimhashIndex;
    match cmd {
        IndexCommand::Fingerprint { inputs } => {
            let inputs: Vec<Input> = inputs
                .iter()
                .map(|n| Input::detect(n, n.clone(), None))
                .collect();
            let sk = neardup::Sketcher::new(neardup::SketchConfig::default())?;
            let mut out = std::io::BufWriter::new(std::io::stdout().lock());
            for (i, rec) in Reader::new(inputs, Fields::default()).enumerate() {
                let rec = rec?;
                if let Some(Ok(doc)) = rec.into_doc() {
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
            let design = parse_design(&design)?;
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
            query(&index, &input, insert)?;
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
