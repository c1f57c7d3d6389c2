//! `neardup stream`: verdict lines in order; a restart between two halves, or a SIGKILL at
//! chosen points and a reopen, give the verdicts of one uninterrupted pass.

mod common;

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::thread::JoinHandle;

fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_neardup")
}

fn corpus(dir: &Path) -> Vec<String> {
    // A bad record among them: rejected, in its place.
    common::synth_lines(
        dir,
        "corpus.jsonl",
        &[
            "--base",
            "400",
            "--min-words",
            "60",
            "--max-words",
            "250",
            "--duplicate-rate",
            "0.5",
            "--hosts",
            "6",
            "--seed",
            "9",
        ],
        17,
    )
}

/// `neardup stream [--state state]` fed `lines` by a thread of its own (which stops
/// with a broken pipe if the process dies first).
fn spawn(lines: &[String], state: Option<&Path>) -> (Child, JoinHandle<std::io::Result<()>>) {
    spawn_with(lines, state, &[])
}

/// [`spawn`] with more flags.
fn spawn_with(
    lines: &[String],
    state: Option<&Path>,
    flags: &[&str],
) -> (Child, JoinHandle<std::io::Result<()>>) {
    let mut cmd = Command::new(bin());
    cmd.arg("stream").args(flags);
    if let Some(s) = state {
        cmd.arg("--state").arg(s);
    }
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let input = lines.join("\n") + "\n";
    let writer = std::thread::spawn(move || stdin.write_all(input.as_bytes()));
    (child, writer)
}

/// Streams `lines` through `neardup stream [state]`; the verdict lines.
fn stream(lines: &[String], state: Option<&Path>) -> Vec<String> {
    stream_with(lines, state, &[])
}

/// [`stream`] with more flags.
fn stream_with(lines: &[String], state: Option<&Path>, flags: &[&str]) -> Vec<String> {
    let (child, writer) = spawn_with(lines, state, flags);
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap().unwrap();
    assert!(out.status.success());
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(str::to_owned)
        .collect()
}

/// For each record of `lines` whose verdict in `verdicts` is `new`: the record under the
/// id `probe-ID`, which a state that stored the record calls its exact duplicate.
fn probes_of_new<S: AsRef<str>>(lines: &[String], verdicts: &[S]) -> Vec<String> {
    lines
        .iter()
        .zip(verdicts)
        .filter(|(_, v)| v.as_ref().contains("\"new\""))
        .map(|(l, _)| {
            let mut rec: serde_json::Value = serde_json::from_str(l).unwrap();
            let id = rec["id"].as_str().unwrap().to_owned();
            rec["id"] = format!("probe-{id}").into();
            rec.to_string()
        })
        .collect()
}

#[test]
fn verdict_lines_in_order_and_a_restart_changes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let lines = corpus(dir.path());
    let one = stream(&lines, None);
    assert_eq!(one.len(), lines.len());
    for (l, v) in lines.iter().zip(&one) {
        let rec: serde_json::Value = serde_json::from_str(l).unwrap();
        let v: serde_json::Value = serde_json::from_str(v).unwrap();
        assert_eq!(rec["id"], v["id"]);
        match v["verdict"].as_str().unwrap() {
            "new" | "rejected" => assert!(v["of"].is_null()),
            "exact" | "near" => assert!(v["of"].is_string()),
            other => panic!("verdict {other}"),
        }
    }
    let count = |k: &str| {
        one.iter()
            .filter(|v| v.contains(&format!("\"{k}\"")))
            .count()
    };
    assert!(count("near") > 20 && count("exact") > 5 && count("rejected") == 1);
    let state = dir.path().join("state");
    let (a, b) = lines.split_at(lines.len() / 2);
    let mut two = stream(a, Some(&state));
    two.extend(stream(b, Some(&state)));
    assert_eq!(two, one);
    // Room reserved at the start, and again on the restart: the same lines.
    let state = dir.path().join("reserved");
    let mut three = stream_with(a, Some(&state), &["--reserve", "50000"]);
    three.extend(stream_with(b, Some(&state), &["--reserve", "1000000"]));
    assert_eq!(three, one);
}

#[test]
fn a_killed_stream_reopens_with_what_it_acknowledged() {
    let dir = tempfile::tempdir().unwrap();
    let lines = corpus(dir.path());
    let one = stream(&lines, None);
    for (n, kill_after) in [5usize, 97, 301, 555].into_iter().enumerate() {
        let state = dir.path().join(format!("state{n}"));
        let (mut child, writer) = spawn(&lines, Some(&state));
        let mut reader = BufReader::new(child.stdout.take().unwrap());
        let mut acknowledged = Vec::new();
        while acknowledged.len() < kill_after {
            let mut l = String::new();
            assert!(reader.read_line(&mut l).unwrap() > 0);
            acknowledged.push(l.trim_end().to_owned());
        }
        child.kill().unwrap(); // SIGKILL
        child.wait().unwrap();
        let _ = writer.join().unwrap();
        assert_eq!(acknowledged[..], one[..kill_after]);
        // Every acknowledged new record is stored: a copy under another id is its
        // duplicate.
        let probes = probes_of_new(&lines, &acknowledged);
        // Resending everything not acknowledged gives the uninterrupted run's verdicts.
        let rest = stream(&lines[kill_after..], Some(&state));
        assert_eq!(
            rest[..],
            one[kill_after..],
            "killed after {kill_after} lines"
        );
        let probed = stream(&probes, Some(&state));
        assert!(probed.iter().all(|v| v.contains("\"exact\"")), "{probed:?}");
    }
}

/// A line longer than the record cap (`--max-document-bytes` doubled, plus 1 MiB) is
/// rejected as too large without being parsed, and the stream goes on: blank lines are
/// skipped and `\r\n` ends cut, as `dedup` reads a JSONL file.
#[test]
fn a_line_past_the_cap_is_rejected_and_the_stream_goes_on() {
    let dir = tempfile::tempdir().unwrap();
    let lines = corpus(dir.path());
    let cap = 2 * 1000 + (1 << 20);
    let huge = format!(r#"{{"id": "huge", "text": "{}"}}"#, "word ".repeat(cap / 5));
    assert!(huge.len() + 1 > cap);
    let mut input: Vec<String> = lines[..10].to_vec();
    input.push(huge);
    input.push(String::new());
    input.push(format!("{}\r", lines[10]));
    input.extend_from_slice(&lines[11..20]);
    let got = stream_with(&input, None, &["--max-document-bytes", "1000"]);
    let want = stream_with(&lines[..20], None, &["--max-document-bytes", "1000"]);
    assert_eq!(got.len(), 21, "{got:?}");
    let v: serde_json::Value = serde_json::from_str(&got[10]).unwrap();
    assert_eq!(v["verdict"], "rejected");
    assert!(v["id"].is_null());
    let reason = v["reason"].as_str().unwrap();
    assert!(
        reason.starts_with(&format!(
            "record too large: {} bytes > {cap}",
            cap / 5 * 5 + 27
        )),
        "{reason}"
    );
    assert_eq!(got[..10], want[..10]);
    assert_eq!(got[11..], want[10..]);
}

/// Driven one record at a time through a pipe, each verdict comes before the next
/// record is sent, also when blank lines follow the record; the verdict lines are not
/// written one by one when the records come faster (checked by the other tests' output).
#[test]
fn each_verdict_comes_before_the_next_record_is_sent() {
    use std::sync::mpsc;
    use std::time::Duration;
    let dir = tempfile::tempdir().unwrap();
    let lines = corpus(dir.path());
    let mut child = Command::new(bin())
        .arg("stream")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut to = child.stdin.take().unwrap();
    let from = BufReader::new(child.stdout.take().unwrap());
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for l in from.lines() {
            let _ = tx.send(l.unwrap());
        }
    });
    let first: serde_json::Value = serde_json::from_str(&lines[0]).unwrap();
    let mut copy = first.clone();
    copy["id"] = "copy-of-the-first".into();
    for (record, then) in [(lines[0].clone(), "\n\n  \n"), (copy.to_string(), "\n")] {
        to.write_all(record.as_bytes()).unwrap();
        to.write_all(then.as_bytes()).unwrap();
        to.flush().unwrap();
        let v: serde_json::Value = serde_json::from_str(
            &rx.recv_timeout(Duration::from_secs(20))
                .expect("the verdict before the next record"),
        )
        .unwrap();
        if v["id"] == first["id"] {
            assert_eq!(v["verdict"], "new");
        } else {
            assert_eq!((&v["verdict"], &v["of"]), (&"exact".into(), &first["id"]));
        }
    }
    drop(to);
    assert!(child.wait().unwrap().success());
}

/// The entries of a version 3 log: (start, end) of each, from its documented layout
/// (a 4-byte mark, length, CRC-32, payload).
fn log_entries(log: &[u8]) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut at = 12;
    while at + 12 <= log.len() {
        let len = u32::from_le_bytes(log[at + 4..at + 8].try_into().unwrap()) as usize;
        out.push((at, at + 12 + len));
        at += 12 + len;
    }
    out
}

/// `neardup stream --state state FLAGS` fed `lines`: its whole output, stderr too.
fn run_stream(lines: &[String], state: &Path, flags: &[&str]) -> std::process::Output {
    run_stream_with(lines, state, flags, &[])
}

/// [`run_stream`] with environment variables.
fn run_stream_with(
    lines: &[String],
    state: &Path,
    flags: &[&str],
    env: &[(&str, &str)],
) -> std::process::Output {
    let mut child = Command::new(bin())
        .arg("stream")
        .args(flags)
        .arg("--state")
        .arg(state)
        .envs(env.iter().copied())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let input = lines.join("\n") + "\n";
    let writer = std::thread::spawn(move || stdin.write_all(input.as_bytes()));
    let out = child.wait_with_output().unwrap();
    let _ = writer.join().unwrap();
    out
}

/// A state whose log has a byte flipped a third of the way in: `stream` fails, naming
/// the file and the entries past the damage, and changes nothing; `--recover` keeps
/// every other entry, keeps the damaged file aside and says so; nothing is silently
/// forgotten.
#[test]
fn a_damaged_state_is_an_error_and_recover_keeps_every_other_entry() {
    let dir = tempfile::tempdir().unwrap();
    let lines: Vec<String> = corpus(dir.path()).into_iter().take(120).collect();
    let state = dir.path().join("state");
    let verdicts = stream_with(&lines, Some(&state), &["--sync", "never"]);
    let stored = verdicts.iter().filter(|v| v.contains("\"new\"")).count();
    let log = std::fs::read(state.join("log.0")).unwrap();
    let entries = log_entries(&log);
    assert_eq!(entries.len(), stored);
    let (start, _) = entries[entries.len() / 3];
    let mut bad = log.clone();
    bad[start + 20] ^= 1;
    std::fs::write(state.join("log.0"), &bad).unwrap();
    let probes = probes_of_new(&lines, &verdicts);
    let out = run_stream(&probes, &state, &[]);
    assert!(!out.status.success(), "a damaged state must not open");
    let err = String::from_utf8_lossy(&out.stderr);
    let past = entries.len() - entries.len() / 3 - 1;
    assert!(
        err.contains("log.0") && err.contains(&format!("{past} whole entries past")),
        "{err}"
    );
    assert!(out.stdout.is_empty());
    assert_eq!(std::fs::read(state.join("log.0")).unwrap(), bad);
    // Recovered: every probe but the damaged entry's document is a duplicate.
    let out = run_stream(&probes, &state, &["--recover"]);
    assert!(out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("recovered a damaged log") && err.contains("log.0.damaged"),
        "{err}"
    );
    let answers = String::from_utf8(out.stdout).unwrap();
    let new = answers.lines().filter(|v| v.contains("\"new\"")).count();
    assert_eq!(
        new, 1,
        "only the damaged entry's document is lost: {answers}"
    );
    assert_eq!(std::fs::read(state.join("log.0.damaged")).unwrap(), bad);
}

/// `neardup stream` killed at chosen points inside an append (half an entry written)
/// and inside a compaction (after the new snapshot, before the new log; between the
/// removals of the old generation), through the state's kill points: a restart keeps
/// every acknowledged record, and the record being written is either whole or absent.
#[test]
fn a_stream_killed_inside_an_append_or_a_compaction_keeps_what_it_acknowledged() {
    let dir = tempfile::tempdir().unwrap();
    let lines: Vec<String> = corpus(dir.path()).into_iter().take(200).collect();
    let one = stream(&lines, None);
    // Create 1 is the first log's; 2 the first compaction's (every 10 stored).
    for (n, point) in [
        "half-write:37",
        "create:2",
        "remove:1",
        "remove:2",
        "sync:50",
    ]
    .into_iter()
    .enumerate()
    {
        let state = dir.path().join(format!("state{n}"));
        let out = run_stream_with(
            &lines,
            &state,
            &["--compact-every", "10"],
            &[("NEARDUP_STATE_KILL", point)],
        );
        assert!(!out.status.success(), "{point}: the kill point was reached");
        let acknowledged: Vec<&str> = std::str::from_utf8(&out.stdout).unwrap().lines().collect();
        assert!(acknowledged.len() < lines.len(), "{point}");
        assert_eq!(acknowledged[..], one[..acknowledged.len()], "{point}");
        // Every acknowledged new record is stored: a copy under another id is its
        // exact duplicate.
        let probes = probes_of_new(&lines, &acknowledged);
        let probed = stream(&probes, Some(&state));
        assert!(
            probed.iter().all(|v| v.contains("\"exact\"")),
            "{point}: {probed:?}"
        );
        // The record in flight is whole or absent: resending it is a retry or new, and
        // the rest then gives the uninterrupted run's verdicts.
        let k = acknowledged.len();
        let rest = stream(&lines[k..], Some(&state));
        assert_eq!(rest[1..], one[k + 1..], "{point}");
        // Opened once more, the state holds every record the uninterrupted run stored:
        // what was appended after the restart followed the last whole entry (a torn
        // tail left in place would now be damage before whole entries).
        let probed = stream(&probes_of_new(&lines, &one), Some(&state));
        assert!(
            probed.iter().all(|v| v.contains("\"exact\"")),
            "{point}: {probed:?}"
        );
    }
}
