//! The `neardup` binary on generated corpora in every input format, and on bad input.
mod common;
use common::{bin, ok_in};
use neardup::synth::{generate, SynthConfig};
use serde_json::Value;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Stdio;

fn corpus() -> neardup::synth::Corpus {
    generate(&SynthConfig {
        base_documents: 60,
        words: (300, 800),
        duplicate_rate: 0.5,
        edit_words: (1, 1),
        seed: 5,
        ..Default::default()
    })
}

fn jsonl(c: &neardup::synth::Corpus) -> String {
    c.documents
        .iter()
        .map(|d| serde_json::json!({"id": d.id, "url": d.url, "text": d.body.as_str(), "extra": {"keep": "me"}}).to_string() + "\n")
        .collect()
}

fn read_jsonl(p: &Path) -> Vec<Value> {
    std::fs::read_to_string(p)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

struct Run {
    dir: tempfile::TempDir,
    status: i32,
    stderr: String,
}

impl Run {
    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }
    fn report(&self) -> Value {
        serde_json::from_str(&std::fs::read_to_string(self.path("report.json")).unwrap()).unwrap()
    }
    fn kept_ids(&self) -> Vec<String> {
        read_jsonl(&self.path("kept.jsonl"))
            .iter()
            .map(|v| v["id"].as_str().unwrap().to_string())
            .collect()
    }
}

/// Runs `dedup` on `inputs` (created by `setup` in a fresh directory) with all outputs.
fn dedup(setup: impl FnOnce(&Path) -> Vec<String>, extra: &[&str], stdin: Option<&[u8]>) -> Run {
    let dir = tempfile::tempdir().unwrap();
    let inputs = setup(dir.path());
    let mut cmd = bin();
    cmd.current_dir(dir.path())
        .arg("dedup")
        .args(&inputs)
        .args([
            "-o",
            "kept.jsonl",
            "--clusters",
            "clusters.jsonl",
            "--pairs",
            "pairs.jsonl",
            "--rejects",
            "rejects.jsonl",
            "--report",
            "report.json",
        ]);
    cmd.args(extra)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().unwrap();
    if let Some(data) = stdin {
        child.stdin.take().unwrap().write_all(data).unwrap();
    }
    drop(child.stdin.take());
    let out = child.wait_with_output().unwrap();
    Run {
        dir,
        status: out.status.code().unwrap_or(-1),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

fn check_accounting(r: &Run, read: u64) -> Value {
    assert_eq!(r.status, 0, "{}", r.stderr);
    let rep = r.report();
    let a = &rep["accounting"];
    assert_eq!(a["read"], read, "{rep}");
    assert_eq!(a["holds"], true);
    assert_eq!(r.kept_ids().len() as u64, a["kept"].as_u64().unwrap());
    assert_eq!(
        read_jsonl(&r.path("rejects.jsonl")).len() as u64,
        a["rejected"].as_u64().unwrap()
    );
    rep
}

#[test]
fn jsonl_plain_gzip_zstd_and_stdin_give_the_same_result() {
    let c = corpus();
    let text = jsonl(&c);
    let n = c.documents.len() as u64;
    let plain = dedup(
        |d| {
            std::fs::write(d.join("c.jsonl"), &text).unwrap();
            vec!["c.jsonl".into()]
        },
        &[],
        None,
    );
    let rep = check_accounting(&plain, n);
    assert!(rep["accounting"]["near_duplicates"].as_u64().unwrap() > 5);
    assert!(rep["accounting"]["exact_duplicates"].as_u64().unwrap() > 5);
    let kept = plain.kept_ids();
    // Kept records are the input lines, unchanged (extra fields too), in input order.
    let lines: Vec<&str> = text.lines().collect();
    let kept_lines: Vec<String> = std::fs::read_to_string(plain.path("kept.jsonl"))
        .unwrap()
        .lines()
        .map(str::to_owned)
        .collect();
    let mut pos = 0;
    for k in &kept_lines {
        pos += lines[pos..]
            .iter()
            .position(|l| l == k)
            .expect("kept line is an input line, in order")
            + 1;
    }
    // Every planted variant is in a cluster with its base or was dropped; clusters name ids.
    let clusters = read_jsonl(&plain.path("clusters.jsonl"));
    assert!(clusters.iter().all(|c| c["size"].as_u64().unwrap() >= 2
        && c["members"]
            .as_array()
            .unwrap()
            .contains(&c["representative"])));
    let pairs = read_jsonl(&plain.path("pairs.jsonl"));
    assert!(pairs
        .iter()
        .any(|p| p["kind"] == "near" && p["charikar_agreement"].as_u64().unwrap() >= 372));

    let gz = dedup(
        |d| {
            let mut e = flate2::write::GzEncoder::new(
                std::fs::File::create(d.join("c.jsonl.gz")).unwrap(),
                flate2::Compression::fast(),
            );
            e.write_all(text.as_bytes()).unwrap();
            e.finish().unwrap();
            vec!["c.jsonl.gz".into()]
        },
        &["--threads", "1"],
        None,
    );
    check_accounting(&gz, n);
    assert_eq!(gz.kept_ids(), kept);
    let zst = dedup(
        |d| {
            std::fs::write(
                d.join("c.jsonl.zst"),
                zstd::encode_all(text.as_bytes(), 3).unwrap(),
            )
            .unwrap();
            vec!["c.jsonl.zst".into()]
        },
        &[],
        None,
    );
    check_accounting(&zst, n);
    assert_eq!(zst.kept_ids(), kept);
    let stdin = dedup(|_| vec!["-".into()], &[], Some(text.as_bytes()));
    check_accounting(&stdin, n);
    assert_eq!(stdin.kept_ids(), kept);
    // Compression by the bytes, not the name: zstd on standard input (`zstdcat |`
    // would decompress; this is the compressed stream itself), and misnamed files.
    let zbytes = zstd::encode_all(text.as_bytes(), 3).unwrap();
    let zstdin = dedup(|_| vec!["-".into()], &[], Some(&zbytes));
    check_accounting(&zstdin, n);
    assert_eq!(zstdin.kept_ids(), kept);
    let misnamed = dedup(
        |d| {
            // zstd bytes under a plain name.
            std::fs::write(d.join("c.jsonl"), &zbytes).unwrap();
            vec!["c.jsonl".into()]
        },
        &[],
        None,
    );
    check_accounting(&misnamed, n);
    assert_eq!(misnamed.kept_ids(), kept);
    assert_eq!(
        std::fs::read(stdin.path("clusters.jsonl")).unwrap(),
        std::fs::read(plain.path("clusters.jsonl")).unwrap()
    );
}

fn warc_record(id: &str, url: &str, html: &str) -> Vec<u8> {
    let payload = format!("HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n{html}");
    let mut r = format!(
        "WARC/1.0\r\nWARC-Type: response\r\nWARC-Record-ID: <urn:uuid:{id}>\r\nWARC-Target-URI: {url}\r\nContent-Length: {}\r\n\r\n",
        payload.len()
    )
    .into_bytes();
    r.extend_from_slice(payload.as_bytes());
    r.extend_from_slice(b"\r\n\r\n");
    r
}

#[test]
fn warc_gzip_warc_and_directories() {
    let c = corpus();
    let mut warc =
        b"WARC/1.0\r\nWARC-Type: warcinfo\r\nContent-Length: 4\r\n\r\nabcd\r\n\r\n".to_vec();
    for d in &c.documents {
        warc.extend(warc_record(
            &d.id,
            d.url.as_deref().unwrap_or(""),
            &format!("<html><body><p>{}</p></body></html>", d.body.as_str()),
        ));
    }
    let n = c.documents.len() as u64;
    let w = dedup(
        |d| {
            std::fs::write(d.join("c.warc"), &warc).unwrap();
            vec!["c.warc".into()]
        },
        &[],
        None,
    );
    let rep = check_accounting(&w, n);
    assert!(rep["accounting"]["near_duplicates"].as_u64().unwrap() > 5);
    let kept = w.kept_ids();
    assert!(kept[0].starts_with("urn:uuid:doc"));
    let wgz = dedup(
        |d| {
            let mut e = flate2::write::GzEncoder::new(
                std::fs::File::create(d.join("c.warc.gz")).unwrap(),
                flate2::Compression::fast(),
            );
            e.write_all(&warc).unwrap();
            e.finish().unwrap();
            vec!["c.warc.gz".into()]
        },
        &[],
        None,
    );
    check_accounting(&wgz, n);
    assert_eq!(wgz.kept_ids(), kept);
    let dir = dedup(
        |d| {
            let root = d.join("pages");
            std::fs::create_dir_all(root.join("sub")).unwrap();
            for (i, doc) in c.documents.iter().enumerate() {
                let name = if i % 2 == 0 {
                    format!("sub/{}.txt", doc.id)
                } else {
                    format!("{}.html", doc.id)
                };
                let body = if i % 2 == 0 {
                    doc.body.as_str().to_string()
                } else {
                    format!("<p>{}</p>", doc.body.as_str())
                };
                std::fs::write(root.join(name), body).unwrap();
            }
            std::fs::write(root.join("ignored.bin"), [0u8, 1, 2]).unwrap();
            vec!["pages".into()]
        },
        &[],
        None,
    );
    let rep = check_accounting(&dir, n);
    assert!(rep["accounting"]["near_duplicates"].as_u64().unwrap() > 5);
}

#[test]
fn bad_records_are_rejected_with_reasons_or_stop_strict_runs() {
    let mut data = Vec::new();
    data.extend_from_slice(b"{\"id\": \"ok1\", \"text\": \"alpha beta gamma delta\"}\n");
    data.extend_from_slice(b"{not json\n");
    data.extend_from_slice(b"{\"id\": \"notext\"}\n");
    data.extend_from_slice(b"{\"id\": \"bad\xff\", \"text\": \"x\"}\n");
    data.extend_from_slice(b"\n");
    data.extend_from_slice(b"{\"id\": \"empty\", \"text\": \"  \"}\n");
    data.extend_from_slice(b"{\"id\": \"ok1\", \"text\": \"another text entirely here\"}\n");
    data.extend_from_slice(b"[1, 2]\n");
    data.extend_from_slice(b"{\"id\": \"ok2\", \"html\": \"<p>omega psi</p>\"}\n");
    let r = dedup(
        |d| {
            std::fs::write(d.join("bad.jsonl"), &data).unwrap();
            vec!["bad.jsonl".into()]
        },
        &[],
        None,
    );
    check_accounting(&r, 8);
    let rejects = read_jsonl(&r.path("rejects.jsonl"));
    let reasons: Vec<(u64, String, String)> = rejects
        .iter()
        .map(|v| {
            (
                v["position"].as_u64().unwrap(),
                v["reason"].as_str().unwrap().to_string(),
                v["code"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    let expect = [
        (2, "malformed JSON", "malformed_json"),
        (3, "missing field", "missing_body"),
        (4, "invalid UTF-8", "invalid_utf8"),
        (6, "empty document", "empty"),
        (7, "duplicate id", "duplicate_id"),
        (8, "not a JSON object", "not_an_object"),
    ];
    assert_eq!(reasons.len(), expect.len(), "{reasons:?}");
    for ((pos, reason, code), (want_pos, want, want_code)) in reasons.iter().zip(expect) {
        assert_eq!(*pos, want_pos);
        assert!(reason.contains(want), "{reason} should say {want}");
        assert_eq!(code, want_code, "{reason}");
    }
    assert_eq!(r.kept_ids(), ["ok1", "ok2"]);
    // Strict: the first bad record stops the run with an error naming file and line.
    let s = dedup(
        |d| {
            std::fs::write(d.join("bad.jsonl"), &data).unwrap();
            vec!["bad.jsonl".into()]
        },
        &["--strict"],
        None,
    );
    assert_eq!(s.status, 1);
    assert!(s.stderr.contains("bad.jsonl: record 2"), "{}", s.stderr);
    assert!(!s.path("kept.jsonl").exists(), "no partial output");
}

#[test]
fn truncated_gzip_and_warc_are_reported_not_lost() {
    let c = corpus();
    let text = jsonl(&c);
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    e.write_all(text.as_bytes()).unwrap();
    let gz = e.finish().unwrap();
    let cut = gz[..gz.len() / 2].to_vec();
    let r = dedup(
        |d| {
            std::fs::write(d.join("cut.jsonl.gz"), &cut).unwrap();
            vec!["cut.jsonl.gz".into()]
        },
        &[],
        None,
    );
    assert_eq!(r.status, 0, "{}", r.stderr);
    let rejects = read_jsonl(&r.path("rejects.jsonl"));
    assert!(
        rejects
            .iter()
            .any(|v| v["reason"].as_str().unwrap().contains("unreadable")),
        "{rejects:?}"
    );
    assert_eq!(r.report()["accounting"]["holds"], true);
    // Independently: the complete lines a gzip decoder gets out of the cut file. They
    // are the records read before the truncation, and the run keeps exactly what a run
    // over those lines alone keeps; the truncation is the one reject.
    let mut prefix = Vec::new();
    let mut dec = flate2::read::MultiGzDecoder::new(&cut[..]);
    let mut buf = [0u8; 4096];
    while let Ok(k) = std::io::Read::read(&mut dec, &mut buf) {
        if k == 0 {
            break;
        }
        prefix.extend_from_slice(&buf[..k]);
    }
    let complete = &prefix[..prefix.iter().rposition(|&b| b == b'\n').unwrap() + 1];
    let lines = complete.iter().filter(|&&b| b == b'\n').count() as u64;
    assert!(lines > 10 && lines < c.documents.len() as u64, "{lines}");
    let acc = &r.report()["accounting"];
    assert_eq!(acc["read"], lines + 1, "{acc}");
    assert_eq!(acc["rejected"], 1, "{acc}");
    assert_eq!(rejects.len(), 1);
    let whole = dedup(
        |d| {
            std::fs::write(d.join("prefix.jsonl"), complete).unwrap();
            vec!["prefix.jsonl".into()]
        },
        &[],
        None,
    );
    assert_eq!(r.kept_ids(), whole.kept_ids());

    let mut warc = Vec::new();
    for d in c.documents.iter().take(3) {
        warc.extend(warc_record(&d.id, "http://a/", d.body.as_str()));
    }
    warc.truncate(warc.len() - 100);
    let w = dedup(
        |d| {
            std::fs::write(d.join("cut.warc"), &warc).unwrap();
            vec!["cut.warc".into()]
        },
        &[],
        None,
    );
    assert_eq!(w.status, 0, "{}", w.stderr);
    let rejects = read_jsonl(&w.path("rejects.jsonl"));
    assert_eq!(rejects.len(), 1);
    assert!(rejects[0]["reason"]
        .as_str()
        .unwrap()
        .contains("ends inside a WARC record body"));
    assert_eq!(w.kept_ids().len(), 2);
}

#[test]
fn demo_runs_and_usage_errors_exit_2() {
    let out = bin().arg("dedup").output().unwrap();
    assert!(out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("records read") && err.contains("demo"),
        "{err}"
    );
    let bad = bin().args(["dedup", "--shingle"]).output().unwrap();
    assert_eq!(bad.status.code(), Some(2));
    let bad = bin()
        .args(["dedup", "--supershingles", "5"])
        .output()
        .unwrap();
    assert_eq!(bad.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&bad.stderr).contains("84 min-hash values cannot be split into 5")
    );
}

#[test]
fn config_file_and_presets() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("nd.toml"),
        "shingle = 5\ncharikar-threshold = 360\nkeep = \"longest\"\n",
    )
    .unwrap();
    let out = bin()
        .current_dir(dir.path())
        .args(["dedup", "--config", "nd.toml", "--report", "r.json", "-q"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let rep: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("r.json")).unwrap()).unwrap();
    assert_eq!(rep["parameters"]["sketch"]["shingle_size"], 5);
    assert_eq!(rep["parameters"]["charikar_threshold"], 360);
    // A flag overrides the file.
    let out = bin()
        .current_dir(dir.path())
        .args([
            "dedup",
            "--config",
            "nd.toml",
            "--shingle",
            "6",
            "--report",
            "r.json",
            "-q",
        ])
        .output()
        .unwrap();
    assert!(out.status.success());
    let rep: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("r.json")).unwrap()).unwrap();
    assert_eq!(rep["parameters"]["sketch"]["shingle_size"], 6);
    std::fs::write(dir.path().join("bad.toml"), "shingel = 5\n").unwrap();
    let out = bin()
        .current_dir(dir.path())
        .args(["dedup", "--config", "bad.toml"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("shingel"));
}

#[test]
fn pair_explains_a_verdict() {
    let dir = tempfile::tempdir().unwrap();
    let c = corpus();
    let t = &c.truth.iter().find(|t| t.kind == "edit").unwrap();
    let get = |id: &str| {
        c.documents
            .iter()
            .find(|d| d.id == id)
            .unwrap()
            .body
            .as_str()
            .to_string()
    };
    std::fs::write(dir.path().join("a.txt"), get(&t.base)).unwrap();
    std::fs::write(dir.path().join("b.txt"), get(&t.variant)).unwrap();
    let out = bin()
        .current_dir(dir.path())
        .args(["pair", "a.txt", "b.txt", "--json"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["exact_duplicate"], false);
    assert!(v["estimated_resemblance"].as_f64().unwrap() > 0.8);
    assert!(v["jaccard_shingles"].as_f64().unwrap() > 0.9);
    assert_eq!(v["near_duplicate"], true);
    assert_eq!(v["rule"]["candidate"], true);
    assert_eq!(v["rule"]["accepted"], true);
}

#[test]
fn outputs_are_byte_identical_for_1_2_and_8_threads() {
    let c = generate(&SynthConfig {
        base_documents: 120,
        words: (50, 400),
        duplicate_rate: 0.5,
        edit_words: (1, 3),
        seed: 77,
        ..Default::default()
    });
    let mut text = jsonl(&c);
    text.push_str("{broken\n{\"id\": \"e\", \"text\": \"\"}\n");
    let outputs = |threads: &str| {
        let r = dedup(
            |d| {
                std::fs::write(d.join("c.jsonl"), &text).unwrap();
                vec!["c.jsonl".into()]
            },
            &[
                "--threads",
                threads,
                "--preset",
                "recall",
                "--high-recall",
                "900",
            ],
            None,
        );
        assert_eq!(r.status, 0, "{}", r.stderr);
        [
            "kept.jsonl",
            "clusters.jsonl",
            "pairs.jsonl",
            "rejects.jsonl",
        ]
        .map(|f| std::fs::read(r.path(f)).unwrap())
    };
    let one = outputs("1");
    assert!(!one[1].is_empty() && !one[2].is_empty() && !one[3].is_empty());
    assert_eq!(one, outputs("2"));
    assert_eq!(one, outputs("8"));
    assert_eq!(one, outputs("1"));
}

#[test]
fn index_commands_build_query_insert_and_stats() {
    let dir = tempfile::tempdir().unwrap();
    let run = |args: &[&str]| ok_in(dir.path(), args);
    let fps = run(&[
        "index",
        "fingerprint",
        concat!(env!("CARGO_MANIFEST_DIR"), "/../fixtures/demo.jsonl"),
    ]);
    let n = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../fixtures/demo.jsonl"
    ))
    .unwrap()
    .lines()
    .count() as u64;
    assert_eq!(fps.lines().count() as u64, n);
    std::fs::write(dir.path().join("fps.txt"), &fps).unwrap();
    run(&[
        "index", "build", "fps.txt", "-o", "x.idx", "--design", "k3-16",
    ]);
    let stats: Value = serde_json::from_str(&run(&["index", "stats", "x.idx"])).unwrap();
    assert_eq!(
        (stats["tables"].as_u64(), stats["fingerprints"].as_u64()),
        (Some(16), Some(n))
    );
    // Every fingerprint finds itself at distance 0.
    let q = run(&["index", "query", "x.idx", "fps.txt"]);
    for line in q.lines() {
        let v: Value = serde_json::from_str(line).unwrap();
        assert!(v["matches"]
            .as_array()
            .unwrap()
            .iter()
            .any(|m| m["id"] == v["id"] && m["distance"] == 0));
    }
    // The crawler loop: an unseen fingerprint is stored, then found.
    std::fs::write(dir.path().join("new.txt"), "9999 0123456789abcdef\n").unwrap();
    let first: Value =
        serde_json::from_str(run(&["index", "query", "x.idx", "new.txt", "--insert"]).trim())
            .unwrap();
    assert_eq!(first["matches"].as_array().unwrap().len(), 0);
    let again: Value =
        serde_json::from_str(run(&["index", "query", "x.idx", "new.txt"]).trim()).unwrap();
    assert_eq!(again["matches"][0]["id"], 9999);
    let bad = bin()
        .current_dir(dir.path())
        .args(["index", "query", "fps.txt", "new.txt"])
        .output()
        .unwrap();
    assert_eq!(bad.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("not a neardup simhash index"));

    // Driven through a pipe, one query at a time: each answer comes before the next
    // query is sent (a reader of the whole input first would never answer), and the
    // insertions are saved at the end of the input.
    use std::io::{BufRead, Write};
    let mut child = bin()
        .current_dir(dir.path())
        .args(["index", "query", "x.idx", "-", "--insert"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut to = child.stdin.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    let from = std::io::BufReader::new(child.stdout.take().unwrap());
    std::thread::spawn(move || {
        for l in from.lines() {
            let _ = tx.send(l.unwrap());
        }
    });
    for (id, fp) in [(7001, "fedcba9876543210"), (7002, "fedcba9876543211")] {
        writeln!(to, "{id} {fp}").unwrap();
        to.flush().unwrap();
        let answer: Value = serde_json::from_str(
            &rx.recv_timeout(std::time::Duration::from_secs(20))
                .expect("an answer before the next query"),
        )
        .unwrap();
        assert_eq!(answer["id"], id);
        // The second is within distance 1 of the first, stored by the first query.
        let matches = answer["matches"].as_array().unwrap();
        assert_eq!(matches.len(), usize::from(id == 7002), "{answer}");
    }
    drop(to);
    assert!(child.wait().unwrap().success());
    std::fs::write(dir.path().join("probe.txt"), "7003 fedcba9876543210\n").unwrap();
    let saved: Value =
        serde_json::from_str(run(&["index", "query", "x.idx", "probe.txt"]).trim()).unwrap();
    let ids: Vec<&Value> = saved["matches"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| &m["id"])
        .collect();
    assert_eq!(ids, [7001]);
}

#[test]
fn mirrors_report_and_site_strategy_flags() {
    let c = corpus();
    let mut text = jsonl(&c);
    for d in c.documents.iter().filter(|d| !d.id.contains("-v")).take(20) {
        let url = d
            .url
            .as_deref()
            .unwrap_or("")
            .replace("http://", "http://mirror-host.example/");
        text.push_str(
            &(serde_json::json!({"id": format!("m-{}", d.id), "url": url, "text": d.body.as_str()})
                .to_string() + "\n"),
        );
    }
    let r = dedup(
        |d| {
            std::fs::write(d.join("c.jsonl"), &text).unwrap();
            vec![
                "c.jsonl".into(),
                "--mirrors".into(),
                "mirrors.jsonl".into(),
                "--strategy".into(),
                "henzinger".into(),
                "--site".into(),
                "domain".into(),
            ]
        },
        &[],
        None,
    );
    let rep = check_accounting(&r, c.documents.len() as u64 + 20);
    assert_eq!(
        rep["parameters"]["stage_two"],
        "same-site: charikar(agreement>=380); cross-site and unknown: charikar(agreement>=372)"
    );
    let mirrors = read_jsonl(&r.path("mirrors.jsonl"));
    assert!(
        mirrors[0]["site_a"] == "mirror-host.example"
            || mirrors[0]["site_b"] == "mirror-host.example",
        "{mirrors:?}"
    );
    let pairs = read_jsonl(&r.path("pairs.jsonl"));
    assert!(pairs
        .iter()
        .all(|p| ["same", "cross", "unknown"].contains(&p["site"].as_str().unwrap())));
    assert!(pairs.iter().any(|p| p["site"] == "cross"));
    let bad = bin()
        .args(["dedup", "--strategy", "custom"])
        .output()
        .unwrap();
    assert_eq!(bad.status.code(), Some(1));
}

#[test]
fn eval_on_a_generated_corpus_with_truth() {
    let dir = tempfile::tempdir().unwrap();
    let ok = |args: &[&str]| ok_in(dir.path(), args);
    ok(&[
        "synth", "--base", "200", "--seed", "4", "-o", "c.jsonl", "--truth", "t.jsonl",
    ]);
    // Two bad records among them: counted and named, not dropped silently.
    let path = dir.path().join("c.jsonl");
    let lines = std::fs::read_to_string(&path).unwrap();
    let n = lines.lines().count();
    std::fs::write(&path, format!("{lines}{{\"id\": \"no-text\"}}\nnot json\n")).unwrap();
    let out = bin()
        .current_dir(dir.path())
        .args(["eval", "--corpus", "c.jsonl", "--truth", "t.jsonl"])
        .args(["--json", "e.json", "--plot", "e.svg"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let (table, said) = (
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    );
    assert!(table.contains("recall-preset"));
    assert!(table.contains(&format!("{n} documents,")), "{table}");
    assert!(table.contains("2 records rejected"), "{table}");
    assert!(
        said.contains(&format!("record {} (no-text) rejected", n + 1)),
        "{said}"
    );
    let v: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("e.json")).unwrap()).unwrap();
    assert_eq!(v["documents"], n);
    assert_eq!(v["rejected"], 2);
    let algos = v["algorithms"].as_array().unwrap();
    assert_eq!(algos.len(), 7);
    let combined = &algos[0];
    assert!(
        combined["all"]["precision"].as_f64().unwrap() > 0.99
            && combined["all"]["recall"].as_f64().unwrap() > 0.3
    );
    assert!(std::fs::read_to_string(dir.path().join("e.svg"))
        .unwrap()
        .contains("near-duplicates of a document"));
}

#[test]
fn synth_compresses_as_the_output_name_says() {
    // The same corpus plain and through each compressor, read back by independent
    // decoders (flate2, the zstd crate, bzip2, liblzma).
    use std::io::Read;
    let dir = tempfile::tempdir().unwrap();
    let synth = |name: &str| {
        ok_in(
            dir.path(),
            &["synth", "--base", "300", "--seed", "9", "-o", name],
        );
        std::fs::File::open(dir.path().join(name)).unwrap()
    };
    let mut plain = Vec::new();
    synth("c.jsonl").read_to_end(&mut plain).unwrap();
    assert!(plain.len() > 10_000);
    use bzip2::read::MultiBzDecoder;
    use flate2::read::MultiGzDecoder;
    use liblzma::read::XzDecoder;
    let decoders: [(&str, Box<dyn Read>); 4] = [
        ("gz", Box::new(MultiGzDecoder::new(synth("c.jsonl.gz")))),
        (
            "zst",
            Box::new(zstd::Decoder::new(synth("c.jsonl.zst")).unwrap()),
        ),
        ("bz2", Box::new(MultiBzDecoder::new(synth("c.jsonl.bz2")))),
        (
            "xz",
            Box::new(XzDecoder::new_multi_decoder(synth("c.jsonl.xz"))),
        ),
    ];
    for (kind, mut r) in decoders {
        let mut bytes = Vec::new();
        r.read_to_end(&mut bytes).unwrap();
        assert!(bytes == plain, "{kind}: not the plain corpus");
    }
}

#[test]
fn stage_one_flags_select_the_generator_and_its_parameters() {
    let dir = tempfile::tempdir().unwrap();
    let stage_one = |args: &[&str]| {
        let out = bin()
            .current_dir(dir.path())
            .args(["dedup", "-q", "--report", "r.json"])
            .args(args)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let v: Value =
            serde_json::from_str(&std::fs::read_to_string(dir.path().join("r.json")).unwrap())
                .unwrap();
        v["parameters"]["stage_one"].as_str().unwrap().to_string()
    };
    assert_eq!(stage_one(&[]), "broder(shared>=2)");
    assert_eq!(
        stage_one(&["--candidates", "pugh", "--pugh-lists", "8"]),
        "pugh(shared>=1)"
    );
    assert_eq!(
        stage_one(&["--candidates", "simhash", "--simhash-design", "2:4"]),
        "simhash64(distance<=2)"
    );
    assert_eq!(
        stage_one(&["--candidates", "charikar-blocks", "--block-distance", "20"]),
        "charikar-blocks(distance<=20)"
    );
    let bad = bin()
        .args([
            "dedup",
            "--candidates",
            "simhash",
            "--simhash-design",
            "bogus",
        ])
        .output()
        .unwrap();
    assert_eq!(bad.status.code(), Some(1));
}

#[test]
fn boilerplate_flag_strips_site_templates() {
    let dir = tempfile::tempdir().unwrap();
    let ok = |args: &[&str]| ok_in(dir.path(), args);
    ok(&[
        "synth",
        "--base",
        "200",
        "--min-words",
        "90",
        "--max-words",
        "160",
        "--hosts",
        "2",
        "--template-sites",
        "2",
        "--template-words",
        "600",
        "--duplicate-rate",
        "0",
        "--seed",
        "3",
        "-o",
        "c.jsonl.zst",
    ]);
    let kept = |extra: &[&str]| {
        let mut a = vec![
            "dedup",
            "-q",
            "c.jsonl.zst",
            "--preset",
            "recall",
            "--report",
            "r.json",
        ];
        a.extend_from_slice(extra);
        ok(&a);
        let v: Value =
            serde_json::from_str(&std::fs::read_to_string(dir.path().join("r.json")).unwrap())
                .unwrap();
        (v["accounting"]["kept"].as_u64().unwrap(), v)
    };
    // 200 distinct pages on two template sites: merged without removal, all kept with.
    let (without, _) = kept(&[]);
    assert!(without < 20, "{without}");
    let (with, v) = kept(&["--boilerplate", "--boilerplate-share", "0.6"]);
    assert_eq!(with, 200);
    assert_eq!(v["boilerplate"]["sites_with_boilerplate"], 2);
    assert_eq!(v["boilerplate"]["settings"]["min_share"], 0.6);
    // Invalid settings are refused with a clear message.
    let out = bin()
        .current_dir(dir.path())
        .args([
            "dedup",
            "c.jsonl.zst",
            "--boilerplate",
            "--boilerplate-share",
            "0",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("min_share"));
}

#[test]
fn synth_takes_real_seeds_and_variant_proportions() {
    let dir = tempfile::tempdir().unwrap();
    let run = |args: &[&str]| bin().current_dir(dir.path()).args(args).output().unwrap();
    let seeds = "{\"id\": \"s1\", \"text\": \"one two three four five six seven eight nine ten\"}\n\
                 {\"id\": \"s2\", \"text\": \"alpha beta gamma delta epsilon zeta eta theta iota\"}\n";
    std::fs::write(dir.path().join("seeds.jsonl"), seeds).unwrap();
    let out = run(&[
        "synth",
        "--seeds",
        "seeds.jsonl",
        "--duplicate-rate",
        "1",
        "--max-variants",
        "1",
        "--variants",
        "edit=1",
        "-o",
        "c.jsonl.gz",
        "--truth",
        "t.jsonl",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let truth = std::fs::read_to_string(dir.path().join("t.jsonl")).unwrap();
    assert_eq!(truth.lines().count(), 2);
    assert!(truth.lines().all(|l| l.contains("\"kind\":\"edit\"")));
    // The compressed corpus reads back: 2 seeds + 2 variants.
    let out = run(&["dedup", "-q", "c.jsonl.gz", "--report", "r.json"]);
    assert!(out.status.success());
    let v: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("r.json")).unwrap()).unwrap();
    assert_eq!(v["accounting"]["read"], 4);
    // Bad proportions and HTML seeds are refused with the reason.
    let out = run(&["synth", "--variants", "edit", "-o", "x.jsonl"]);
    assert!(String::from_utf8_lossy(&out.stderr).contains("KIND=WEIGHT"));
    std::fs::write(
        dir.path().join("h.jsonl"),
        "{\"id\": \"h\", \"html\": \"<p>x</p>\"}\n",
    )
    .unwrap();
    let out = run(&["synth", "--seeds", "h.jsonl", "-o", "x.jsonl"]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("seeds must be text"));
}

/// `neardup sketch` takes dedup's field flags: records whose id and text live in other
/// fields are sketched (not rejected), and an incremental run with the same flags drops
/// a later snapshot's copy of one of them. Without the flags, nothing can be sketched.
#[test]
fn sketch_takes_the_field_flags() {
    let dir = tempfile::tempdir().unwrap();
    let c = corpus();
    let record = |id: &str, text: &str| serde_json::json!({"key": id, "content": text}).to_string();
    let march: String = c
        .documents
        .iter()
        .take(10)
        .map(|d| record(&d.id, d.body.as_str()) + "\n")
        .collect();
    std::fs::write(dir.path().join("march.jsonl"), march).unwrap();
    let copy = record("april-copy", c.documents[3].body.as_str());
    let fresh = record(
        "april-new",
        "a page of april that no one wrote in march at all",
    );
    std::fs::write(dir.path().join("april.jsonl"), format!("{copy}\n{fresh}\n")).unwrap();
    let fields = ["--id-field", "key", "--text-field", "content"];
    let mut args = vec!["sketch", "march.jsonl", "-o", "march.sketches"];
    args.extend(fields);
    ok_in(dir.path(), &args);
    let saved = neardup::persist::sketches::SavedSketches::load(&dir.path().join("march.sketches"))
        .unwrap();
    assert_eq!(saved.len(), 10);
    assert_eq!(saved.ids[3], c.documents[3].id);
    let mut args = vec![
        "dedup",
        "april.jsonl",
        "--sketches",
        "march.sketches",
        "-q",
        "-o",
        "kept.jsonl",
        "--report",
        "r.json",
    ];
    args.extend(fields);
    ok_in(dir.path(), &args);
    let kept = read_jsonl(&dir.path().join("kept.jsonl"));
    assert_eq!(kept.len(), 1);
    assert_eq!(kept[0]["key"], "april-new");
    // Without the flags every record lacks a text: none is sketched.
    ok_in(
        dir.path(),
        &["sketch", "march.jsonl", "-o", "none.sketches", "-q"],
    );
    let none =
        neardup::persist::sketches::SavedSketches::load(&dir.path().join("none.sketches")).unwrap();
    assert_eq!(none.len(), 0);
}

/// `neardup presets`: the paper preset's candidate probability is the binomial tail
/// "at least 2 of 6 supershingles of 14 agree" (written out here), the recall
/// preset's curve rises through one half between resemblances 0.6 and 0.7, and its
/// thresholds read as the settings say (815 of 1024 bits: cosine cos(π·209/1024)).
#[test]
fn presets_say_what_the_thresholds_mean() {
    let dir = tempfile::tempdir().unwrap();
    let paper: Value = serde_json::from_str(&ok_in(dir.path(), &["presets", "--json"])).unwrap();
    for row in paper["candidate_probability"].as_array().unwrap() {
        let j = row["resemblance"].as_f64().unwrap();
        let p = j.powi(14);
        let want = 1.0 - (1.0 - p).powi(6) - 6.0 * p * (1.0 - p).powi(5);
        assert!(
            (row["probability"].as_f64().unwrap() - want).abs() < 1e-9,
            "J = {j}"
        );
    }
    assert_eq!(paper["cluster_mode"], "transitive");
    let recall: Value = serde_json::from_str(&ok_in(
        dir.path(),
        &["presets", "--preset", "recall", "--json"],
    ))
    .unwrap();
    let p_at = |j: f64| {
        recall["candidate_probability"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| (r["resemblance"].as_f64().unwrap() - j).abs() < 1e-9)
            .unwrap()["probability"]
            .as_f64()
            .unwrap()
    };
    assert!(p_at(0.6) < 0.5 && p_at(0.7) > 0.5 && p_at(0.9) > 0.999);
    assert_eq!(recall["band"], 2);
    assert_eq!(recall["bucket_keys_per_document"], 42);
    assert_eq!(recall["cluster_mode"], "verified");
    let cos = (std::f64::consts::PI * 209.0 / 1024.0).cos();
    assert!((recall["charikar_cosine"].as_f64().unwrap() - cos).abs() < 1e-12);
    // Bands and rows a user gives.
    let own: Value = serde_json::from_str(&ok_in(
        dir.path(),
        &[
            "presets",
            "--preset",
            "recall",
            "--band",
            "3",
            "--min-shared",
            "1",
            "--json",
        ],
    ))
    .unwrap();
    let j: f64 = 0.8;
    let row = &own["candidate_probability"].as_array().unwrap()[10];
    assert_eq!(row["resemblance"], 0.8);
    let want = 1.0 - (1.0 - j.powi(6)).powi(28);
    assert!((row["probability"].as_f64().unwrap() - want).abs() < 1e-9);
}
