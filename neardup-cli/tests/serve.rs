//! `neardup serve` started for real on an ephemeral loopback port: its verdicts are
//! `stream`'s; concurrent clients store what they sent; a delete is seen by the next
//! check; a SIGKILL loses no acknowledged insert; bad input, a full queue, a missing
//! token and an exposed listen get their documented answers; TLS serves; every route of
//! `docs/openapi.yaml` is served.

mod common;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_neardup")
}

/// A running server; killed when dropped.
struct Server {
    child: Child,
    url: String,
    /// Standard error's lines after the first.
    stderr: mpsc::Receiver<String>,
}

impl Server {
    /// `neardup serve --state STATE --listen 127.0.0.1:0 FLAGS`, once it listens.
    fn start(state: &Path, flags: &[&str]) -> Server {
        let mut child = Command::new(bin())
            .args(["serve", "--listen", "127.0.0.1:0", "--state"])
            .arg(state)
            .args(flags)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let (tx, rx) = mpsc::channel();
        let err = child.stderr.take().unwrap();
        std::thread::spawn(move || {
            for line in BufReader::new(err).lines() {
                if tx.send(line.unwrap_or_default()).is_err() {
                    return;
                }
            }
        });
        let first = rx
            .recv_timeout(Duration::from_secs(60))
            .expect("the server said where it listens");
        let url = first
            .split_whitespace()
            .find(|w| w.contains("://"))
            .unwrap_or_else(|| panic!("no address in {first:?}"))
            .to_owned();
        Server {
            child,
            url,
            stderr: rx,
        }
    }

    fn url(&self, path: &str) -> String {
        format!("{}{path}", self.url)
    }

    /// SIGTERM, then the exit status and what it said on the way out.
    fn stop(mut self) -> (std::process::ExitStatus, String) {
        let pid = self.child.id().to_string();
        assert!(Command::new("kill")
            .args(["-TERM", &pid])
            .status()
            .unwrap()
            .success());
        let status = self.child.wait().unwrap();
        let said: Vec<String> = self.stderr.try_iter().collect();
        (status, said.join("\n"))
    }

    fn kill(mut self) {
        self.child.kill().unwrap();
        self.child.wait().unwrap();
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn agent() -> ureq::Agent {
    ureq::Agent::config_builder()
        .http_status_as_error(false)
        .build()
        .into()
}

/// A POST: the status and the body.
fn post(url: &str, kind: &str, body: &[u8], token: Option<&str>) -> (u16, String) {
    let mut req = agent().post(url).header("Content-Type", kind);
    if let Some(t) = token {
        req = req.header("Authorization", &format!("Bearer {t}"));
    }
    let mut r = req.send(body).unwrap();
    let status = r.status().as_u16();
    (status, r.body_mut().read_to_string().unwrap())
}

fn ndjson(url: &str, lines: &[String]) -> (u16, String) {
    let body = lines.join("\n") + "\n";
    post(url, "application/x-ndjson", body.as_bytes(), None)
}

fn get(url: &str) -> (u16, String) {
    let mut r = agent().get(url).call().unwrap();
    let status = r.status().as_u16();
    (status, r.body_mut().read_to_string().unwrap())
}

fn delete(url: &str) -> u16 {
    agent().delete(url).call().unwrap().status().as_u16()
}

fn stats(s: &Server) -> serde_json::Value {
    let (status, body) = get(&s.url("/v1/stats"));
    assert_eq!(status, 200, "{body}");
    serde_json::from_str(&body).unwrap()
}

/// A synthetic corpus with near-duplicates and a bad record, as JSONL lines.
fn corpus(dir: &Path, base: usize, seed: u64) -> Vec<String> {
    let (base, seed) = (base.to_string(), seed.to_string());
    common::synth_lines(
        dir,
        &format!("corpus-{seed}.jsonl"),
        &[
            "--base",
            &base,
            "--min-words",
            "60",
            "--max-words",
            "200",
            "--duplicate-rate",
            "0.5",
            "--hosts",
            "5",
            "--seed",
            &seed,
        ],
        11,
    )
}

/// `neardup stream`'s output for `lines`.
fn stream(lines: &[String]) -> String {
    let mut child = Command::new(bin())
        .arg("stream")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let input = lines.join("\n") + "\n";
    let mut stdin = child.stdin.take().unwrap();
    let writer = std::thread::spawn(move || stdin.write_all(input.as_bytes()));
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap().unwrap();
    assert!(out.status.success());
    String::from_utf8(out.stdout).unwrap()
}

fn id_of(line: &str) -> String {
    let v: serde_json::Value = serde_json::from_str(line).unwrap();
    v["id"].as_str().unwrap().to_owned()
}

/// One request of JSON lines, and the same records as JSON arrays of 37, answer
/// `stream`'s lines for them, in order, rejected record included.
#[test]
fn verdicts_equal_streams() {
    let dir = tempfile::tempdir().unwrap();
    let lines = corpus(dir.path(), 300, 3);
    let want = stream(&lines);
    assert!(want.contains(r#""verdict":"near""#) && want.contains(r#""verdict":"exact""#));
    assert!(want.contains(r#""verdict":"rejected""#));

    let s = Server::start(&dir.path().join("a"), &[]);
    let (status, got) = ndjson(&s.url("/v1/check-and-insert"), &lines);
    assert_eq!(status, 200, "{got}");
    assert!(got == want, "the verdict lines are not stream's");

    let want: Vec<serde_json::Value> = want
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let s = Server::start(&dir.path().join("b"), &[]);
    let mut got = Vec::new();
    for chunk in lines.chunks(37) {
        let body = format!("[{}]", chunk.join(","));
        let (status, answer) = post(
            &s.url("/v1/check-and-insert"),
            "application/json",
            body.as_bytes(),
            None,
        );
        assert_eq!(status, 200, "{answer}");
        let answer: Vec<serde_json::Value> = serde_json::from_str(&answer).unwrap();
        assert_eq!(answer.len(), chunk.len());
        got.extend(answer);
    }
    assert!(got == want, "the arrays' verdicts are not stream's");
}

/// Eight clients inserting overlapping shares at once store every id any of them
/// sent, no more (each id found by `DELETE`), the count one client inserting the
/// records serially stores.
#[test]
fn concurrent_clients_store_what_they_sent() {
    let dir = tempfile::tempdir().unwrap();
    let lines: Vec<String> = corpus(dir.path(), 240, 5)
        .into_iter()
        .filter(|l| !l.contains(r#""bad""#))
        .collect();
    let s = Server::start(&dir.path().join("many"), &[]);
    let url = s.url("/v1/insert");
    let n = lines.len();
    std::thread::scope(|scope| {
        for c in 0..8 {
            let (lines, url) = (&lines, &url);
            scope.spawn(move || {
                // Client c sends a quarter of the records, starting at its eighth:
                // each record goes to two clients.
                let share: Vec<String> = (0..n / 4)
                    .map(|i| lines[(c * n / 8 + i) % n].clone())
                    .collect();
                for batch in share.chunks(1 + c) {
                    let (status, body) = ndjson(url, batch);
                    assert_eq!(status, 200, "{body}");
                }
            });
        }
    });
    let serial = Server::start(&dir.path().join("one"), &[]);
    for batch in lines.chunks(25) {
        assert_eq!(ndjson(&serial.url("/v1/insert"), batch).0, 200);
    }
    let sent: std::collections::BTreeSet<String> = lines.iter().map(|l| id_of(l)).collect();
    assert_eq!(stats(&s)["stored"], sent.len());
    assert_eq!(stats(&serial)["stored"], sent.len());
    for id in &sent {
        assert_eq!(delete(&s.url(&format!("/v1/docs/{id}"))), 200, "{id}");
    }
    assert_eq!(stats(&s)["stored"], 0);
}

/// A check finds a stored twin; after its `DELETE` the same check finds nothing, and
/// a second `DELETE` is 404. A check stores nothing.
#[test]
fn a_delete_is_seen_by_the_next_check() {
    let dir = tempfile::tempdir().unwrap();
    let s = Server::start(&dir.path().join("state"), &[]);
    let text = "the quick brown fox jumps over the lazy dog again and again, each day";
    let a = format!(r#"{{"id": "a/1", "text": "{text}"}}"#);
    let b = format!(r#"{{"id": "b", "text": "{text}"}}"#);
    assert!(ndjson(&s.url("/v1/check"), std::slice::from_ref(&a))
        .1
        .contains(r#""new""#));
    assert_eq!(stats(&s)["stored"], 0);
    assert!(ndjson(&s.url("/v1/insert"), &[a]).1.contains(r#""new""#));
    let (_, got) = ndjson(&s.url("/v1/check"), std::slice::from_ref(&b));
    assert_eq!(got.trim(), r#"{"id":"b","verdict":"exact","of":"a/1"}"#);
    // The id is a path segment, percent-encoded.
    assert_eq!(delete(&s.url("/v1/docs/a%2F1")), 200);
    let (_, got) = ndjson(&s.url("/v1/check"), &[b]);
    assert_eq!(got.trim(), r#"{"id":"b","verdict":"new","of":null}"#);
    assert_eq!(delete(&s.url("/v1/docs/a%2F1")), 404);
}

/// Bad requests get their documented status, store nothing, and the server goes on.
#[test]
fn bad_input_gets_its_answer_and_stores_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let flags = [
        "--max-body-bytes",
        "20000",
        "--max-records",
        "5",
        "--max-document-bytes",
        "1000",
    ];
    let s = Server::start(&dir.path().join("state"), &flags);
    let ok = r#"{"id": "ok", "text": "words enough to be a document of its own"}"#;
    let url = s.url("/v1/insert");
    let cases: Vec<(&str, String, u16, &str)> = vec![
        (
            "application/json",
            format!("[{ok}, {{\"id\": ]"),
            400,
            "record 1",
        ),
        (
            "application/json",
            format!("[{ok}] [{ok}]"),
            400,
            "after the array",
        ),
        ("application/json", ok.to_string(), 400, "array"),
        (
            "application/x-ndjson",
            format!("{ok}\n\n{{\"id\": \"x\", \"text\": \n"),
            400,
            "record 1 (line 3)",
        ),
        (
            "application/json",
            format!("[{}]", [ok; 6].join(",")),
            413,
            "--max-records",
        ),
        (
            "application/x-ndjson",
            format!("{ok}\n").repeat(6),
            413,
            "--max-records",
        ),
        (
            "application/json",
            "x".repeat(30_000),
            413,
            "--max-body-bytes",
        ),
        ("text/plain", ok.to_owned(), 415, "Content-Type"),
        ("", ok.to_owned(), 415, "Content-Type"),
    ];
    for (kind, body, status, says) in &cases {
        let (got, answer) = post(&url, kind, body.as_bytes(), None);
        assert_eq!((got, kind), (*status, kind), "{answer}");
        assert!(answer.contains(says), "{kind} {status}: {answer}");
        assert_eq!(stats(&s)["stored"], 0, "{answer}");
    }
    // A record over the size cap is rejected in its place; the others are stored.
    let big = format!(r#"{{"id": "big", "text": "{}"}}"#, "word ".repeat(400));
    let (status, answer) = ndjson(&url, &[ok.to_owned(), big]);
    assert_eq!(status, 200);
    let lines: Vec<&str> = answer.lines().collect();
    assert_eq!(lines[0], r#"{"id":"ok","verdict":"new","of":null}"#);
    assert!(lines[1].contains(r#""verdict":"rejected""#), "{}", lines[1]);
    assert_eq!(stats(&s)["stored"], 1);
    assert_eq!(get(&s.url("/healthz")), (200, "ok\n".into()));
    assert_eq!(get(&s.url("/nothing/here")).0, 404);
}

/// A request that holds the queue's one place (its body not all sent) makes the next
/// one 503 with `Retry-After`; once it is answered, requests go through again.
#[test]
fn past_the_queue_is_503_with_retry_after() {
    let dir = tempfile::tempdir().unwrap();
    let s = Server::start(&dir.path().join("state"), &["--queue", "1"]);
    let addr = s.url.trim_start_matches("http://").to_owned();
    let record = br#"[{"id": "slow", "text": "sent in two parts"}]"#;
    let mut slow = TcpStream::connect(&addr).unwrap();
    write!(
        slow,
        "POST /v1/insert HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        record.len()
    )
    .unwrap();
    slow.write_all(&record[..10]).unwrap();
    slow.flush().unwrap();
    // The slow request has its place once the server reads its head; wait for it
    // (stats take no place).
    let mut held = false;
    for _ in 0..1000 {
        if stats(&s)["queue"]["in_use"] == 1 {
            held = true;
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(held, "the slow request never took the queue's place");
    let full = agent()
        .post(&s.url("/v1/check"))
        .header("Content-Type", "application/json")
        .send(&b"[]"[..])
        .unwrap();
    assert_eq!(full.status(), 503);
    assert_eq!(full.headers()["retry-after"], "1");
    slow.write_all(&record[10..]).unwrap();
    let mut answer = String::new();
    slow.read_to_string(&mut answer).unwrap();
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    assert!(
        answer.contains(r#""id":"slow","verdict":"new""#),
        "{answer}"
    );
    let (status, _) = post(&s.url("/v1/check"), "application/json", b"[]", None);
    assert_eq!(status, 200);
}

/// A connection that sends nothing is closed after `--idle-timeout`.
#[test]
fn a_silent_connection_is_closed() {
    let dir = tempfile::tempdir().unwrap();
    let s = Server::start(&dir.path().join("state"), &["--idle-timeout", "1"]);
    let mut c = TcpStream::connect(s.url.trim_start_matches("http://")).unwrap();
    c.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    let mut buf = [0u8; 64];
    // Closed (0 bytes, or a reset), not left open until the read gives up.
    match c.read(&mut buf) {
        Ok(n) => assert!(n == 0 || buf.starts_with(b"HTTP/1.1 408"), "{n} bytes"),
        Err(e) => assert_ne!(e.kind(), std::io::ErrorKind::WouldBlock, "{e}"),
    }
}

/// A request in flight is not idle: its body sent in two parts two seconds apart is
/// answered under `--idle-timeout 1`; past `--body-timeout` it is 408.
#[test]
fn a_request_in_flight_is_not_idle_and_its_body_has_a_deadline() {
    let dir = tempfile::tempdir().unwrap();
    let record = br#"[{"id": "slow", "text": "sent in two parts"}]"#;
    let send = |flags: &[&str], pause: u64| {
        let s = Server::start(&dir.path().join(format!("state{pause}")), flags);
        let mut c = TcpStream::connect(s.url.trim_start_matches("http://")).unwrap();
        write!(
            c,
            "POST /v1/insert HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
            record.len()
        )
        .unwrap();
        c.write_all(&record[..10]).unwrap();
        std::thread::sleep(Duration::from_secs(pause));
        // The server may have answered and closed already: a failed write is fine.
        let _ = c.write_all(&record[10..]);
        let mut answer = String::new();
        let _ = c.read_to_string(&mut answer);
        answer
    };
    let answer = send(&["--idle-timeout", "1"], 2);
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    let answer = send(&["--body-timeout", "1"], 3);
    assert!(answer.starts_with("HTTP/1.1 408"), "{answer}");
    assert!(answer.contains("--body-timeout"), "{answer}");
}

fn token_file(dir: &Path, text: &str) -> PathBuf {
    let path = dir.join("tokens");
    std::fs::write(&path, text).unwrap();
    path
}

/// With `--token-file`, a request without one of its tokens is 401 and stores
/// nothing; `/healthz` stays open.
#[test]
fn a_token_is_needed_when_given() {
    let dir = tempfile::tempdir().unwrap();
    let tokens = token_file(
        dir.path(),
        "# fleet\n0123456789abcdef-one\n\n0123456789abcdef-two\n",
    );
    let s = Server::start(
        &dir.path().join("state"),
        &["--token-file", tokens.to_str().unwrap()],
    );
    let doc = br#"[{"id": "a", "text": "some words of a document"}]"#;
    let url = s.url("/v1/insert");
    for token in [
        None,
        Some("0123456789abcdef-on"),
        Some("0123456789abcdef-onf"),
    ] {
        let (status, body) = post(&url, "application/json", doc, token);
        assert_eq!(status, 401, "{token:?}: {body}");
    }
    assert_eq!(get(&s.url("/v1/stats")).0, 401);
    assert_eq!(get(&s.url("/metrics")).0, 401);
    assert_eq!(get(&s.url("/healthz")).0, 200);
    let (status, body) = post(&url, "application/json", doc, Some("0123456789abcdef-two"));
    assert_eq!(status, 200, "{body}");
    let mut r = agent()
        .get(&s.url("/v1/stats"))
        .header("Authorization", "Bearer 0123456789abcdef-one")
        .call()
        .unwrap();
    let st: serde_json::Value =
        serde_json::from_str(&r.body_mut().read_to_string().unwrap()).unwrap();
    assert_eq!(st["stored"], 1);
}

/// Listening past loopback without a token file is refused at start-up, as is a
/// token file without a usable token; with one it starts and says tokens are needed.
#[test]
fn an_exposed_listen_needs_tokens() {
    let dir = tempfile::tempdir().unwrap();
    // Refused at once; a server that started instead is killed after a minute, and
    // the test fails on its status.
    let run = |flags: &[&str]| {
        let child = Command::new(bin())
            .args(["serve", "--state"])
            .arg(dir.path().join("state"))
            .args(flags)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let pid = child.id().to_string();
        let (done_tx, done_rx) = mpsc::channel::<()>();
        let watchdog = std::thread::spawn(move || {
            if done_rx.recv_timeout(Duration::from_secs(60)).is_err() {
                let _ = Command::new("kill").args(["-KILL", &pid]).status();
            }
        });
        let out = child.wait_with_output().unwrap();
        let _ = done_tx.send(());
        watchdog.join().unwrap();
        out
    };
    let out = run(&["--listen", "0.0.0.0:0"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--token-file"));
    let short = token_file(dir.path(), "short\n");
    let out = run(&["--token-file", short.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("at least 16"));
    assert!(!dir.path().join("state").exists(), "nothing opened");

    let tokens = token_file(dir.path(), "0123456789abcdef\n");
    let mut child = Command::new(bin())
        .args(["serve", "--listen", "0.0.0.0:0", "--token-file"])
        .arg(&tokens)
        .arg("--state")
        .arg(dir.path().join("state"))
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = String::new();
    BufReader::new(child.stderr.take().unwrap())
        .read_line(&mut first)
        .unwrap();
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(
        first.contains("0.0.0.0:") && first.contains("bearer token"),
        "{first}"
    );
}

/// SIGTERM: exit 0 after a sync; a restart holds what was stored.
#[test]
fn sigterm_stops_cleanly_and_a_restart_holds_the_documents() {
    let dir = tempfile::tempdir().unwrap();
    let lines = corpus(dir.path(), 60, 8);
    let state = dir.path().join("state");
    let s = Server::start(&state, &["--sync", "never"]);
    assert_eq!(ndjson(&s.url("/v1/insert"), &lines).0, 200);
    let stored = stats(&s)["stored"].clone();
    let (status, said) = s.stop();
    assert!(status.success(), "{said}");
    assert!(said.contains("synced"), "{said}");
    let s = Server::start(&state, &[]);
    assert_eq!(stats(&s)["stored"], stored);
}

/// Eight clients insert with `--sync always` until the server is killed with
/// SIGKILL; after a restart (no `--recover`), every insert a client saw
/// acknowledged is stored.
#[test]
fn a_sigkill_loses_no_acknowledged_insert() {
    let dir = tempfile::tempdir().unwrap();
    let lines: Vec<String> = corpus(dir.path(), 400, 11)
        .into_iter()
        .filter(|l| !l.contains(r#""bad""#))
        .collect();
    let state = dir.path().join("state");
    let s = Server::start(&state, &["--sync", "always"]);
    let url = s.url("/v1/insert");
    let (acked_tx, acked_rx) = mpsc::channel::<String>();
    let clients: Vec<_> = (0..8)
        .map(|c| {
            let mine: Vec<String> = lines.iter().skip(c).step_by(8).cloned().collect();
            let (url, acked) = (url.clone(), acked_tx.clone());
            std::thread::spawn(move || {
                for batch in mine.chunks(3) {
                    let body = batch.join("\n") + "\n";
                    let r = agent()
                        .post(&url)
                        .header("Content-Type", "application/x-ndjson")
                        .send(body.as_bytes());
                    let Ok(mut r) = r else { return };
                    let Ok(answer) = r.body_mut().read_to_string() else {
                        return;
                    };
                    if r.status() != 200 {
                        return;
                    }
                    for line in answer.lines() {
                        acked.send(id_of(line)).unwrap();
                    }
                }
            })
        })
        .collect();
    drop(acked_tx);
    // Kill once some inserts are acknowledged, while the clients still send.
    let mut acked = Vec::new();
    while acked.len() < 60 {
        acked.push(
            acked_rx
                .recv()
                .expect("inserts acknowledged before the kill"),
        );
    }
    s.kill();
    for c in clients {
        c.join().unwrap();
    }
    acked.extend(acked_rx.try_iter());
    assert!(acked.len() < lines.len(), "killed before the end");

    let s = Server::start(&state, &[]);
    let said: Vec<String> = s.stderr.try_iter().collect();
    assert!(
        said.is_empty(),
        "opened without a word of recovery: {said:?}"
    );
    for id in &acked {
        assert_eq!(
            delete(&s.url(&format!("/v1/docs/{id}"))),
            200,
            "{id} was acknowledged"
        );
    }
}

/// HTTPS with `--tls-cert` and `--tls-key`: a client that trusts the certificate gets
/// verdicts.
#[test]
fn tls_serves_https() {
    let dir = tempfile::tempdir().unwrap();
    let key = rcgen::generate_simple_self_signed(vec!["localhost".into()]).unwrap();
    let (cert, private) = (dir.path().join("cert.pem"), dir.path().join("key.pem"));
    std::fs::write(&cert, key.cert.pem()).unwrap();
    std::fs::write(&private, key.signing_key.serialize_pem()).unwrap();
    let s = Server::start(
        &dir.path().join("state"),
        &[
            "--tls-cert",
            cert.to_str().unwrap(),
            "--tls-key",
            private.to_str().unwrap(),
        ],
    );
    assert!(s.url.starts_with("https://127.0.0.1:"), "{}", s.url);
    let root = ureq::tls::Certificate::from_der(key.cert.der()).to_owned();
    let tls = ureq::tls::TlsConfig::builder()
        .root_certs(ureq::tls::RootCerts::new_with_certs(&[root]))
        .build();
    let agent: ureq::Agent = ureq::Agent::config_builder().tls_config(tls).build().into();
    let url = s.url("/v1/check").replace("127.0.0.1", "localhost");
    let mut r = agent
        .post(&url)
        .header("Content-Type", "application/json")
        .send(&br#"[{"id": "a", "text": "a document over https"}]"#[..])
        .unwrap();
    assert_eq!(r.status(), 200);
    assert_eq!(
        r.body_mut().read_to_string().unwrap(),
        r#"[{"id":"a","verdict":"new","of":null}]"#
    );
}

/// Every (method, path) of `docs/openapi.yaml` is served (neither 404 nor 405) and
/// answers one of the statuses documented for it; the routes it documents are the
/// server's.
#[test]
fn the_openapi_description_is_the_servers() {
    let spec =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/openapi.yaml"))
            .unwrap();
    // The paths' section, read by indentation: `  /path:`, `    method:`,
    // `        "200":` under `      responses:`.
    let mut routes: Vec<(String, String, Vec<u16>)> = Vec::new();
    let mut in_paths = false;
    let mut path = String::new();
    for line in spec.lines() {
        let indent = line.len() - line.trim_start().len();
        let t = line.trim();
        if indent == 0 {
            in_paths = t == "paths:";
            continue;
        }
        if !in_paths || t.is_empty() || t.starts_with('#') {
            continue;
        }
        if indent == 2 {
            path = t.trim_end_matches(':').to_owned();
        } else if indent == 4 && t.ends_with(':') && !t.starts_with("parameters") {
            routes.push((t.trim_end_matches(':').to_owned(), path.clone(), Vec::new()));
        } else if indent == 8 && t.starts_with('"') {
            let status = t
                .split(':')
                .next()
                .unwrap()
                .trim_matches('"')
                .parse()
                .unwrap();
            routes.last_mut().unwrap().2.push(status);
        }
    }
    let mut named: Vec<String> = routes.iter().map(|(m, p, _)| format!("{m} {p}")).collect();
    named.sort();
    assert_eq!(
        named,
        [
            "delete /v1/docs/{id}",
            "get /healthz",
            "get /metrics",
            "get /v1/stats",
            "post /v1/check",
            "post /v1/check-and-insert",
            "post /v1/insert",
        ]
    );
    let dir = tempfile::tempdir().unwrap();
    let s = Server::start(&dir.path().join("state"), &[]);
    for (method, path, statuses) in &routes {
        let url = s.url(&path.replace("{id}", "some-id"));
        let status = match method.as_str() {
            "get" => get(&url).0,
            "delete" => delete(&url),
            "post" => post(&url, "application/json", b"[]", None).0,
            m => panic!("method {m}"),
        };
        assert!(
            statuses.contains(&status),
            "{method} {path}: {status} not in {statuses:?}"
        );
        assert!(status != 404 || method == "delete", "{method} {path}");
    }
    // Another method on a documented path is not served.
    assert_eq!(
        agent()
            .put(&s.url("/v1/check"))
            .send(&b"[]"[..])
            .unwrap()
            .status(),
        405
    );
}
