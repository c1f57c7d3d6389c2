//! `neardup index`: the simhash index (build, add, query, stats, fingerprints).

use crate::*;
use anyhow::{bail, Context, Result};
use neardup::io::{Fields, Input, Reader};
use serde_json::json;
use std::io::Write;

pub fn read_lines(input: &str) -> Result<Vec<String>> {
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
pub fn parse_fingerprints(input: &str) -> Result<Vec<(u64, u64)>> {
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

pub fn index(cmd: IndexCommand) -> Result<()> {
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
