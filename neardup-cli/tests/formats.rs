//! The corpus formats users have: one corpus written as JSONL, JSONL compressed four
//! ways, Parquet and seven shards gives the same kept ids, clusters and pairs; Parquet
//! outputs keep the input's schema; `--annotate` marks every record; damaged Parquet
//! costs records (rejected with file and row), never the run.
//!
//! The fixtures are written here with the `parquet`, `flate2`, `zstd`, `bzip2` and
//! `liblzma` crates directly, not with neardup's writers.

use arrow::array::{ArrayRef, Int64Array, LargeStringArray, RecordBatch, StringArray, StructArray};
use arrow::datatypes::{DataType, Field, Fields, Schema};
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use parquet::arrow::ArrowWriter;
use parquet::file::properties::WriterProperties;
use serde_json::Value;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Output;

mod common;
use common::bin;
use std::sync::Arc;

fn neardup(args: &[&str]) -> Output {
    let out = bin().args(args).output().unwrap();
    assert_ne!(
        out.status.code(),
        Some(101),
        "panicked: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

fn ok(args: &[&str]) -> Output {
    let out = neardup(args);
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

fn read_jsonl(p: &Path) -> Vec<Value> {
    std::fs::read_to_string(p)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// A generated corpus with planted near-duplicates (some HTML records).
fn corpus(dir: &Path) -> (PathBuf, Vec<Value>) {
    let path = dir.join("corpus.jsonl");
    ok(&[
        "synth",
        "--base",
        "250",
        "--min-words",
        "60",
        "--max-words",
        "250",
        "--duplicate-rate",
        "0.6",
        "--hosts",
        "5",
        "--html-share",
        "0.2",
        "--seed",
        "21",
        "-o",
        s(&path),
    ]);
    let rows = read_jsonl(&path);
    (path, rows)
}

/// The rows as a Parquet file (small row groups): `id`, `text` as a large string, `html`,
/// `url` inside a struct column `meta` (with a number beside it), and an extra column.
fn write_parquet(path: &Path, rows: &[Value], row_group: usize) -> Arc<Schema> {
    let str_of = |k: &str| -> Vec<Option<String>> {
        rows.iter()
            .map(|r| r.get(k).and_then(Value::as_str).map(str::to_owned))
            .collect()
    };
    let meta_fields = Fields::from(vec![
        Field::new("url", DataType::Utf8, true),
        Field::new("words", DataType::Int64, true),
    ]);
    let words: Int64Array = rows
        .iter()
        .map(|r| {
            Some(
                r.get("text")
                    .or(r.get("html"))
                    .and_then(Value::as_str)
                    .map_or(0, |t| t.split(' ').count() as i64),
            )
        })
        .collect();
    let meta = StructArray::new(
        meta_fields.clone(),
        vec![
            Arc::new(StringArray::from(str_of("url"))) as ArrayRef,
            Arc::new(words) as ArrayRef,
        ],
        None,
    );
    let extra: Int64Array = (0..rows.len() as i64).map(|i| Some(i * 7)).collect();
    let schema = Arc::new(Schema::new(vec![
        Field::new("id", DataType::Utf8, true),
        Field::new("text", DataType::LargeUtf8, true),
        Field::new("html", DataType::Utf8, true),
        Field::new("meta", DataType::Struct(meta_fields), true),
        Field::new("extra", DataType::Int64, true),
    ]));
    let batch = RecordBatch::try_new(
        schema.clone(),
        vec![
            Arc::new(StringArray::from(str_of("id"))),
            Arc::new(LargeStringArray::from(str_of("text"))),
            Arc::new(StringArray::from(str_of("html"))),
            Arc::new(meta),
            Arc::new(extra),
        ],
    )
    .unwrap();
    let props = WriterProperties::builder()
        .set_compression(parquet::basic::Compression::SNAPPY)
        .set_max_row_group_row_count(Some(row_group))
        .build();
    let mut w = ArrowWriter::try_new(
        std::fs::File::create(path).unwrap(),
        schema.clone(),
        Some(props),
    )
    .unwrap();
    w.write(&batch).unwrap();
    w.close().unwrap();
    schema
}

fn read_parquet(path: &Path) -> (Arc<Schema>, Vec<RecordBatch>) {
    let b = ParquetRecordBatchReaderBuilder::try_new(std::fs::File::open(path).unwrap()).unwrap();
    let schema = b.schema().clone();
    let batches = b.build().unwrap().map(Result::unwrap).collect();
    (schema, batches)
}

fn parquet_strings(batches: &[RecordBatch], col: &str) -> Vec<Option<String>> {
    let mut out = Vec::new();
    for b in batches {
        let c = arrow::compute::cast(b.column_by_name(col).unwrap(), &DataType::Utf8).unwrap();
        let c = c.as_any().downcast_ref::<StringArray>().unwrap();
        out.extend((0..c.len()).map(|i| c.is_valid(i).then(|| c.value(i).to_owned())));
    }
    out
}

use arrow::array::Array;

/// Kept ids, clusters and pairs of `neardup dedup INPUTS` (kept records as JSON lines).
fn answer(
    dir: &Path,
    tag: &str,
    inputs: &[&str],
    url_field: &str,
) -> (Vec<String>, Vec<Value>, Vec<Value>) {
    let (kept, clusters, pairs) = (
        dir.join(format!("{tag}.kept.jsonl")),
        dir.join(format!("{tag}.clusters")),
        dir.join(format!("{tag}.pairs")),
    );
    let mut args = vec![
        "dedup",
        "-q",
        "-o",
        s(&kept),
        "--clusters",
        s(&clusters),
        "--pairs",
        s(&pairs),
        "--url-field",
        url_field,
    ];
    args.extend_from_slice(inputs);
    ok(&args);
    let ids = read_jsonl(&kept)
        .iter()
        .map(|r| r["id"].as_str().unwrap().to_owned())
        .collect();
    (ids, read_jsonl(&clusters), read_jsonl(&pairs))
}

fn compress(src: &Path, dst: &Path, how: &str) {
    let data = std::fs::read(src).unwrap();
    let f = std::fs::File::create(dst).unwrap();
    match how {
        "gz" => {
            let mut e = flate2::write::GzEncoder::new(f, flate2::Compression::fast());
            e.write_all(&data).unwrap();
            e.finish().unwrap();
        }
        "zst" => zstd::stream::copy_encode(&data[..], f, 3).unwrap(),
        "bz2" => {
            let mut e = bzip2::write::BzEncoder::new(f, bzip2::Compression::fast());
            e.write_all(&data).unwrap();
            e.finish().unwrap();
        }
        "xz" => {
            let mut e = liblzma::write::XzEncoder::new(f, 1);
            e.write_all(&data).unwrap();
            e.finish().unwrap();
        }
        _ => unreachable!(),
    }
}

#[test]
fn every_format_gives_the_same_answer() {
    let t = tempfile::tempdir().unwrap();
    let dir = t.path();
    let (plain, rows) = corpus(dir);
    // The same records, read from JSONL (URL field `url`) and from Parquet (the URL
    // inside the struct column `meta`).
    let top = answer(dir, "top", &[s(&plain)], "url");
    assert!(
        top.1.len() > 20 && top.0.len() < rows.len(),
        "the corpus has duplicates"
    );
    for how in ["gz", "zst", "bz2", "xz"] {
        let c = dir.join(format!("corpus.jsonl.{how}"));
        compress(&plain, &c, how);
        assert_eq!(answer(dir, how, &[s(&c)], "url"), top, "{how}");
        // Compression is found by content: a misnamed file reads the same.
        let misnamed = dir.join(format!("misnamed-{how}.jsonl"));
        std::fs::copy(&c, &misnamed).unwrap();
        assert_eq!(
            answer(dir, &format!("m{how}"), &[s(&misnamed)], "url"),
            top,
            "misnamed {how}"
        );
    }
    let pq = dir.join("corpus.parquet");
    write_parquet(&pq, &rows, 97);
    let from_parquet = answer(dir, "parquet", &[s(&pq)], "meta.url");
    assert_eq!(from_parquet, top, "parquet (url in a struct column)");
    // Seven shards: a directory and a glob, in path order.
    let shards = dir.join("shards");
    std::fs::create_dir_all(shards.join("b")).unwrap();
    let all: Vec<&str> = std::fs::read_to_string(&plain)
        .unwrap()
        .leak()
        .lines()
        .collect();
    let per = all.len().div_ceil(7);
    for (i, chunk) in all.chunks(per).enumerate() {
        let name = if i < 4 {
            format!("a-{i}.jsonl")
        } else {
            format!("b/{i}.jsonl.zst")
        };
        let p = shards.join(&name);
        std::fs::write(&p, chunk.join("\n") + "\n").unwrap();
        if name.ends_with(".zst") {
            let tmp = p.with_extension("tmp");
            std::fs::rename(&p, &tmp).unwrap();
            compress(&tmp, &p, "zst");
            std::fs::remove_file(&tmp).unwrap();
        }
    }
    std::fs::write(shards.join("_SUCCESS"), "").unwrap();
    assert_eq!(
        answer(dir, "dir", &[s(&shards)], "url"),
        top,
        "a directory of 7 shards"
    );
    let glob = format!("{}/**/*.jsonl*", shards.display());
    assert_eq!(
        answer(dir, "glob", &[&glob], "url"),
        top,
        "a glob of 7 shards"
    );
    // One output per shard, named as in the input directory; together the kept records.
    let out_dir = dir.join("out");
    let report = dir.join("report.json");
    ok(&[
        "dedup",
        "-q",
        s(&shards),
        "--output-dir",
        s(&out_dir),
        "--report",
        s(&report),
    ]);
    let mut kept = Vec::new();
    let mut names = Vec::new();
    for i in 0..7 {
        let name = if i < 4 {
            format!("a-{i}.jsonl")
        } else {
            format!("b/{i}.jsonl.zst")
        };
        let p = out_dir.join(&name);
        let bytes = std::fs::read(&p).unwrap();
        let text = if name.ends_with(".zst") {
            zstd::decode_all(&bytes[..]).unwrap()
        } else {
            bytes
        };
        for l in String::from_utf8(text).unwrap().lines() {
            kept.push(
                serde_json::from_str::<Value>(l).unwrap()["id"]
                    .as_str()
                    .unwrap()
                    .to_owned(),
            );
        }
        names.push(name);
    }
    assert_eq!(
        kept, top.0,
        "the shards' outputs together are the kept records"
    );
    let r: Value = serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
    let per_input = r["accounting"]["per_input"].as_array().unwrap();
    assert_eq!(per_input.len(), 7);
    for p in per_input {
        let n = |k: &str| p[k].as_u64().unwrap();
        assert_eq!(
            n("records"),
            n("kept") + n("exact_duplicates") + n("near_duplicates") + n("rejected")
        );
        assert_eq!(p["kept_written"], p["kept"]);
    }
    assert_eq!(r["accounting"]["holds"], true);
    // Standard input, by content: zstd JSONL and Parquet.
    for (f, extra) in [
        (dir.join("corpus.jsonl.zst"), "url"),
        (pq.clone(), "meta.url"),
    ] {
        let out = bin()
            .args(["dedup", "-q", "-", "-o", "-", "--url-field", extra])
            .stdin(std::fs::File::open(&f).unwrap())
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let ids: Vec<String> = String::from_utf8(out.stdout)
            .unwrap()
            .lines()
            .map(|l| {
                serde_json::from_str::<Value>(l).unwrap()["id"]
                    .as_str()
                    .unwrap()
                    .to_owned()
            })
            .collect();
        assert_eq!(ids, top.0, "stdin {}", f.display());
    }
}

#[test]
fn parquet_outputs_keep_the_input_schema_and_columns() {
    let t = tempfile::tempdir().unwrap();
    let dir = t.path();
    let (_, rows) = corpus(dir);
    let pq = dir.join("in.parquet");
    let schema = write_parquet(&pq, &rows, 64);
    let (ids, _, _) = answer(dir, "ref", &[s(&pq)], "meta.url");
    let kept = dir.join("kept.parquet");
    ok(&[
        "dedup",
        "-q",
        s(&pq),
        "--url-field",
        "meta.url",
        "-o",
        s(&kept),
    ]);
    let (got_schema, batches) = read_parquet(&kept);
    assert_eq!(
        got_schema.fields(),
        schema.fields(),
        "the kept records' schema is the input's"
    );
    let got_ids: Vec<String> = parquet_strings(&batches, "id")
        .into_iter()
        .map(Option::unwrap)
        .collect();
    assert_eq!(got_ids, ids);
    // Every column unchanged: `extra` is 7 × the row's index in the input.
    let index: std::collections::HashMap<&str, i64> = rows
        .iter()
        .enumerate()
        .map(|(i, r)| (r["id"].as_str().unwrap(), i as i64))
        .collect();
    let extra = parquet_strings(&batches, "extra");
    for (id, e) in got_ids.iter().zip(extra) {
        assert_eq!(e.unwrap(), (index[id.as_str()] * 7).to_string());
    }
    // Per shard: two Parquet shards to a directory of Parquet files.
    let shards = dir.join("pq");
    std::fs::create_dir_all(&shards).unwrap();
    write_parquet(&shards.join("0.parquet"), &rows[..rows.len() / 2], 50);
    write_parquet(&shards.join("1.parquet"), &rows[rows.len() / 2..], 50);
    let out = dir.join("pq-out");
    ok(&[
        "dedup",
        "-q",
        s(&shards),
        "--url-field",
        "meta.url",
        "--output-dir",
        s(&out),
    ]);
    let mut all = Vec::new();
    for n in ["0.parquet", "1.parquet"] {
        let (sch, b) = read_parquet(&out.join(n));
        assert_eq!(sch.fields(), schema.fields());
        all.extend(parquet_strings(&b, "id").into_iter().map(Option::unwrap));
    }
    assert_eq!(all, ids, "the shards' kept rows are the one file's");
    // JSONL records cannot be written as Parquet: a clear error, no file.
    let (plain, _) = corpus(dir);
    let bad = neardup(&["dedup", "-q", s(&plain), "-o", s(&dir.join("x.parquet"))]);
    assert!(!bad.status.success());
    assert!(String::from_utf8_lossy(&bad.stderr).contains("cannot be written as Parquet"));
    assert!(!dir.join("x.parquet").exists());
}

/// A corpus whose fates are known by construction.
/// A record's planted fate: (id, fate, the id it duplicates).
type Planted = (&'static str, &'static str, Option<&'static str>);

fn planted() -> (Vec<Vec<u8>>, Vec<Planted>) {
    let words: Vec<String> = (0..400)
        .map(|i| format!("w{}x{}", i * 7919 % 1013, i % 17))
        .collect();
    let base = words.join(" ");
    let mut near = words.clone();
    near[200] = "changed".into();
    let other: String = (0..300)
        .map(|i| format!("o{}y{} ", i * 31 % 977, i % 13))
        .collect();
    let lines: Vec<Vec<u8>> = vec![
        serde_json::json!({"id": "a", "text": base, "lang": "en"})
            .to_string()
            .into_bytes(),
        serde_json::json!({"id": "b", "text": other})
            .to_string()
            .into_bytes(),
        serde_json::json!({"id": "a-copy", "text": base})
            .to_string()
            .into_bytes(),
        b"{not json".to_vec(),
        serde_json::json!({"id": "a-near", "text": near.join(" ")})
            .to_string()
            .into_bytes(),
        serde_json::json!({"id": "empty", "text": "  "})
            .to_string()
            .into_bytes(),
        serde_json::json!({"id": "b", "text": "a repeated id"})
            .to_string()
            .into_bytes(),
    ];
    // (id, fate, of)
    let fates = vec![
        ("a", "kept", None),
        ("b", "kept", None),
        ("a-copy", "exact", Some("a")),
        ("", "rejected", None),
        ("a-near", "near", Some("a")),
        ("empty", "rejected", None),
        ("b", "rejected", None),
    ];
    (lines, fates)
}

#[test]
fn annotate_marks_every_record_with_its_fate() {
    let t = tempfile::tempdir().unwrap();
    let dir = t.path();
    let (lines, fates) = planted();
    let input = dir.join("planted.jsonl");
    let mut bytes = lines.join(&b'\n');
    bytes.push(b'\n');
    std::fs::write(&input, bytes).unwrap();
    let ann = dir.join("annotated.jsonl.gz");
    let report = dir.join("r.json");
    ok(&[
        "dedup",
        "-q",
        s(&input),
        "--annotate",
        s(&ann),
        "--report",
        s(&report),
    ]);
    let mut text = String::new();
    std::io::Read::read_to_string(
        &mut flate2::read::GzDecoder::new(std::fs::File::open(&ann).unwrap()),
        &mut text,
    )
    .unwrap();
    let got: Vec<&str> = text.lines().collect();
    assert_eq!(got.len(), lines.len(), "every record, in order");
    for ((line, out), (id, fate, of)) in lines.iter().zip(&got).zip(&fates) {
        let v: Value = serde_json::from_str(out).unwrap();
        assert_eq!(v["neardup_fate"], *fate, "{out}");
        assert_eq!(v["neardup_of"].as_str(), *of, "{out}");
        if *fate == "rejected" {
            assert!(v["neardup_reason"].as_str().is_some_and(|r| !r.is_empty()));
        } else {
            assert_eq!(v["neardup_reason"], Value::Null);
        }
        if line.starts_with(b"{\"") {
            // The record's own bytes are kept: the fields are added at its end.
            assert!(out.as_bytes().starts_with(&line[..line.len() - 1]), "{out}");
            assert_eq!(v["id"], *id);
        } else {
            assert_eq!(
                v["neardup_position"], 4,
                "a malformed line keeps its place: {out}"
            );
        }
    }
    let a: Value = serde_json::from_str(got[0]).unwrap();
    assert_eq!(a["lang"], "en");
    assert_eq!(a["neardup_cluster"], "a");
    let r: Value = serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
    assert_eq!(r["accounting"]["annotated_written"], 7);
    assert_eq!(r["accounting"]["holds"], true);
    // Parquet: the same fates as added columns.
    let rows: Vec<Value> = lines
        .iter()
        .filter_map(|l| serde_json::from_slice(l).ok())
        .collect();
    let pq = dir.join("planted.parquet");
    write_parquet(&pq, &rows, 3);
    let ann = dir.join("annotated.parquet");
    ok(&["dedup", "-q", s(&pq), "--annotate", s(&ann)]);
    let (schema, batches) = read_parquet(&ann);
    let names: Vec<&str> = schema.fields().iter().map(|f| f.name().as_str()).collect();
    assert_eq!(
        names,
        [
            "id",
            "text",
            "html",
            "meta",
            "extra",
            "neardup_fate",
            "neardup_of",
            "neardup_cluster",
            "neardup_reason"
        ]
    );
    let want: Vec<(&str, &str, Option<&str>)> =
        fates.iter().filter(|f| !f.0.is_empty()).cloned().collect();
    let got_fates = parquet_strings(&batches, "neardup_fate");
    let got_of = parquet_strings(&batches, "neardup_of");
    assert_eq!(got_fates.len(), want.len());
    for ((f, o), (_, fate, of)) in got_fates.iter().zip(&got_of).zip(&want) {
        assert_eq!(f.as_deref(), Some(*fate));
        assert_eq!(o.as_deref(), *of);
    }
}

#[test]
fn damaged_parquet_inputs_are_rejected_with_file_and_row() {
    let t = tempfile::tempdir().unwrap();
    let dir = t.path();
    let (_, rows) = corpus(dir);
    let good = dir.join("good.parquet");
    write_parquet(&good, &rows, 40);
    let bytes = std::fs::read(&good).unwrap();
    let run = |name: &str, data: &[u8], extra: &[&str]| -> (Output, Vec<Value>, Value) {
        let p = dir.join(name);
        std::fs::write(&p, data).unwrap();
        let (rej, rep) = (
            dir.join(format!("{name}.rejects")),
            dir.join(format!("{name}.report")),
        );
        let kept = dir.join("k.jsonl");
        let mut args = vec![
            "dedup",
            "-q",
            s(&p),
            "--rejects",
            s(&rej),
            "--report",
            s(&rep),
            "-o",
            s(&kept),
        ];
        args.extend_from_slice(extra);
        let out = neardup(&args);
        let rejects = if rej.exists() {
            read_jsonl(&rej)
        } else {
            Vec::new()
        };
        let report = std::fs::read_to_string(&rep)
            .map(|r| serde_json::from_str(&r).unwrap())
            .unwrap_or(Value::Null);
        (out, rejects, report)
    };
    // A cut file: not Parquet any more (no footer); one rejection for the input.
    let (out, rejects, report) = run(
        "cut.parquet",
        &bytes[..bytes.len() / 2],
        &["--format", "parquet"],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(rejects.len(), 1);
    assert_eq!(rejects[0]["code"], "cannot_read_input");
    assert!(rejects[0]["input"]
        .as_str()
        .unwrap()
        .ends_with("cut.parquet"));
    assert_eq!(report["accounting"]["holds"], true);
    // Damaged bytes in the middle of the data pages: every record is kept, dropped or
    // rejected (the damaged rows as one rejection naming the first row not read).
    let mut damaged = bytes.clone();
    for i in (bytes.len() / 3..bytes.len() / 3 + 64).step_by(3) {
        damaged[i] ^= 0x5a;
    }
    let (out, rejects, report) = run("damaged.parquet", &damaged, &[]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(report["accounting"]["holds"], true, "{report}");
    assert_eq!(
        report["accounting"]["read"],
        rows.len(),
        "every row is a record, damaged or not"
    );
    let damaged_rows: Vec<u64> = rejects
        .iter()
        .filter(|r| r["code"] == "damaged_rows")
        .map(|r| r["position"].as_u64().unwrap())
        .collect();
    assert!(
        !damaged_rows.is_empty() && damaged_rows.len() < rows.len(),
        "{rejects:?}"
    );
    // The rows given up end row groups of 40: the rest of the file is read.
    assert!(
        damaged_rows
            .windows(2)
            .all(|w| w[1] == w[0] + 1 || w[0] % 40 == 0),
        "{damaged_rows:?}"
    );
    assert_eq!(damaged_rows.last().unwrap() % 40, 0, "{damaged_rows:?}");
    // A missing body column and a body column that is not strings: every row rejected.
    let schema = Arc::new(Schema::new(vec![
        Field::new("id", DataType::Utf8, false),
        Field::new("text", DataType::Int64, false),
    ]));
    let b = RecordBatch::try_new(
        schema.clone(),
        vec![
            Arc::new(StringArray::from(vec!["x", "y", "z"])),
            Arc::new(Int64Array::from(vec![1, 2, 3])),
        ],
    )
    .unwrap();
    let mut buf = Vec::new();
    let mut w = ArrowWriter::try_new(&mut buf, schema, None).unwrap();
    w.write(&b).unwrap();
    w.close().unwrap();
    let (out, rejects, _) = run("numbers.parquet", &buf, &[]);
    assert!(out.status.success());
    let got: Vec<(u64, &str)> = rejects
        .iter()
        .map(|r| (r["position"].as_u64().unwrap(), r["code"].as_str().unwrap()))
        .collect();
    assert_eq!(
        got,
        [(1, "bad_column"), (2, "bad_column"), (3, "bad_column")]
    );
    let (out, rejects, _) = run(
        "numbers.parquet",
        &buf,
        &["--text-field", "body", "--html-field", "markup"],
    );
    assert!(out.status.success());
    assert!(rejects.iter().all(|r| r["code"] == "missing_column") && rejects.len() == 3);
    // --strict: the first bad row is a clear error naming the file and the row.
    let (out, _, _) = run("numbers.parquet", &buf, &["--strict"]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("numbers.parquet") && err.contains('1'),
        "{err}"
    );
}
