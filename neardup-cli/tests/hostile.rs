//! The hostile-input corpus (`fixtures/hostile.jsonl`, written by
//! `scripts/make_hostile.py`) and very large documents: no panic, bounded memory, every
//! record accounted for, each with its documented outcome.
use serde_json::Value;
use std::collections::HashMap;
use std::process::Command;

fn run(
    dir: &std::path::Path,
    args: &[&str],
) -> (Value, HashMap<String, String>, std::process::Output) {
    let out = Command::new(env!("CARGO_BIN_EXE_neardup"))
        .current_dir(dir)
        .args(args)
        .args([
            "--report",
            "r.json",
            "--rejects",
            "rej.jsonl",
            "--clusters",
            "c.jsonl",
            "-o",
            "kept.jsonl",
            "-q",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("r.json")).unwrap()).unwrap();
    let mut rejects = HashMap::new();
    for l in std::fs::read_to_string(dir.join("rej.jsonl"))
        .unwrap()
        .lines()
    {
        let v: Value = serde_json::from_str(l).unwrap();
        let key = v["id"]
            .as_str()
            .map_or_else(|| format!("line {}", v["position"]), str::to_owned);
        rejects.insert(key, v["reason"].as_str().unwrap().to_owned());
    }
    (report, rejects, out)
}

#[test]
fn hostile_corpus_outcomes() {
    let dir = tempfile::tempdir().unwrap();
    let fixture = concat!(env!("CARGO_MANIFEST_DIR"), "/../fixtures/hostile.jsonl");
    let (report, rejects, _) = run(dir.path(), &["dedup", fixture]);
    let a = &report["accounting"];
    assert_eq!(a["holds"], true);
    assert_eq!(a["read"], 10018);
    for id in [
        "empty",
        "whitespace-only",
        "punctuation-only",
        "unclosed-markup",
        "only-script",
    ] {
        assert_eq!(rejects[id], "empty document: no terms", "{id}");
    }
    assert!(rejects["line 16"].contains("invalid UTF-8"));
    assert!(rejects["line 17"].contains("malformed JSON"));
    assert!(rejects["no-text-field"].contains("missing field"));
    assert_eq!(a["rejected"], 8);
    // 10,000 identical documents: one kept, 9,999 exact duplicates of it (plus the copy
    // of the short document).
    assert_eq!(a["exact_duplicates"], 10000);
    let clusters: Vec<Value> = std::fs::read_to_string(dir.path().join("c.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let big = clusters
        .iter()
        .find(|c| c["size"] == 10000)
        .expect("the identical documents form one cluster");
    assert_eq!(big["representative"], "identical-00000");
    // The two runs of one repeated word are near-duplicates; everything else is kept.
    assert_eq!(a["near_duplicates"], 1);
    let kept: Vec<String> = std::fs::read_to_string(dir.path().join("kept.jsonl"))
        .unwrap()
        .lines()
        .map(|l| {
            serde_json::from_str::<Value>(l).unwrap()["id"]
                .as_str()
                .unwrap()
                .to_owned()
        })
        .collect();
    for id in [
        "one-word-repeated",
        "deep-nesting",
        "binary-garbage",
        "nul-bytes",
        "long-line-one-term",
        "long-line-many-terms",
        "shorter-than-shingle",
        "unicode-mix",
        "identical-00000",
    ] {
        assert!(
            kept.contains(&id.to_string()),
            "{id} should be kept: {kept:?}"
        );
    }
}

#[test]
fn a_100_mb_document_is_rejected_by_the_size_cap_without_being_held() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("big.jsonl");
    {
        use std::io::Write;
        let mut f = std::io::BufWriter::new(std::fs::File::create(&path).unwrap());
        writeln!(
            f,
            "{{\"id\": \"small\", \"text\": \"a small document next to a huge one\"}}"
        )
        .unwrap();
        write!(f, "{{\"id\": \"huge\", \"text\": \"").unwrap();
        let chunk = "lorem ipsum dolor sit amet ".repeat(1000);
        for _ in 0..(100 << 20) / chunk.len() {
            f.write_all(chunk.as_bytes()).unwrap();
        }
        writeln!(f, "\"}}").unwrap();
        writeln!(
            f,
            "{{\"id\": \"after\", \"text\": \"the record after the huge one is read normally\"}}"
        )
        .unwrap();
    }
    // A 10 MB cap: the 100 MB line is skipped while reading, not held in memory.
    let (report, rejects, _) = run(
        dir.path(),
        &["dedup", "big.jsonl", "--max-document-bytes", "10000000"],
    );
    assert_eq!(report["accounting"]["read"], 3);
    assert_eq!(report["accounting"]["kept"], 2);
    assert!(
        rejects["line 2"].contains("record too large"),
        "{rejects:?}"
    );
    let peak = report["peak_memory_bytes"].as_u64().unwrap();
    assert!(
        peak < 90 << 20,
        "peak memory {peak} bytes: the huge record was held"
    );
    // With the default 64 MiB cap on the decoded body the document is read, then
    // rejected with the reason.
    let (report, rejects, _) = run(dir.path(), &["dedup", "big.jsonl"]);
    assert_eq!(report["accounting"]["rejected"], 1);
    assert!(
        rejects["huge"].contains("document too large"),
        "{rejects:?}"
    );
}

/// A WARC record whose block is past the record cap, and a file of a directory input
/// past it, are read through (or not at all) without being held, and rejected as too
/// large; the records after them are read as usual, and a WARC header line without an
/// end makes the input malformed instead of being read whole into a line.
#[test]
fn warc_records_and_files_past_the_record_cap_are_rejected_unread() {
    let dir = tempfile::tempdir().unwrap();
    // `--max-document-bytes 1000`: the record cap is 2 × 1000 + 1 MiB.
    let cap = 2 * 1000 + (1u64 << 20);
    let big_html = format!(
        "<html><body><p>{}</p></body></html>",
        "many words here ".repeat(80_000)
    );
    assert!(big_html.len() as u64 > cap);
    let record = |id: &str, html: &str| {
        let payload = format!("HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n{html}");
        format!(
            "WARC/1.0\r\nWARC-Type: response\r\nWARC-Record-ID: <{id}>\r\nContent-Length: {}\r\n\r\n{payload}\r\n\r\n",
            payload.len()
        )
    };
    let small = |w: &str| {
        format!(
            "<html><body><p>{}</p></body></html>",
            format!("{w} text of a small page ").repeat(20)
        )
    };
    let warc = [
        record("first", &small("alpha")),
        record("huge", &big_html),
        record("after", &small("omega")),
    ]
    .concat();
    std::fs::write(dir.path().join("c.warc"), &warc).unwrap();
    // Three records read, the middle one rejected: the rejections by id.
    let capped = |input: &str| {
        let (report, rejects, _) = run(
            dir.path(),
            &["dedup", input, "--max-document-bytes", "1000"],
        );
        let a = &report["accounting"];
        let counts = ["read", "kept", "rejected"].map(|k| a[k].as_u64());
        assert_eq!(counts, [Some(3), Some(2), Some(1)], "{a}");
        rejects
    };
    let rejects = capped("c.warc");
    let huge_len = big_html.len() + "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n".len();
    assert_eq!(
        rejects["huge"],
        format!("record too large: {huge_len} bytes > {cap} (max record size)")
    );

    // A header line without an end: malformed from there on, one rejection.
    let mut bad = record("first", &small("alpha")).into_bytes();
    bad.extend_from_slice(b"WARC/1.0\r\nWARC-Type: response\r\nX-Junk: ");
    bad.extend(std::iter::repeat_n(b'x', 3 << 20));
    std::fs::write(dir.path().join("bad.warc"), &bad).unwrap();
    let (report, rejects, _) = run(dir.path(), &["dedup", "bad.warc"]);
    assert_eq!(report["accounting"]["kept"], 1);
    assert_eq!(report["accounting"]["rejected"], 1);
    assert!(
        rejects
            .values()
            .any(|r| r.contains("a WARC header line longer than 1048576 bytes")),
        "{rejects:?}"
    );

    // A directory input: the big file is rejected by its length, unread.
    let docs = dir.path().join("docs");
    std::fs::create_dir(&docs).unwrap();
    std::fs::write(docs.join("a.html"), small("alpha")).unwrap();
    std::fs::write(docs.join("b.html"), &big_html).unwrap();
    std::fs::write(docs.join("c.html"), small("omega")).unwrap();
    assert_eq!(
        capped("docs")["b.html"],
        format!(
            "record too large: {} bytes > {cap} (max record size)",
            big_html.len()
        )
    );
}
