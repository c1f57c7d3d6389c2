//! The online deduper's state under faults: I/O errors injected at every write, flush,
//! rename, create and removal of appends, compaction and opening; damaged logs, refused
//! and recovered; updates of a stored id. The log's framing is re-implemented here from
//! its documented layout (mark, length, CRC-32 of length and payload, payload), so the
//! tests do not take the code's word for where entries lie.

use neardup::online::fault::{self, Op};
use neardup::online::{StateOptions, SyncPolicy};
use neardup::synth::{generate, SynthConfig};
use neardup::{Deduper, Document, Error, Pipeline, Verdict};
use std::io::ErrorKind;
use std::path::Path;

const MARK: [u8; 4] = [0xF5, 0x9E, 0x3C, 0xA7];

fn docs(n: usize, seed: u64) -> Vec<Document> {
    let mut d = generate(&SynthConfig {
        base_documents: n,
        words: (60, 200),
        duplicate_rate: 0.0,
        hosts: 3,
        seed,
        ..Default::default()
    })
    .documents;
    d.truncate(n);
    d
}

fn pipeline() -> Pipeline {
    Pipeline::builder().build().unwrap()
}

/// The entries of a version 3 log: (start of the entry, end of the entry).
fn entries(log: &[u8]) -> Vec<(usize, usize)> {
    assert_eq!(&log[..8], b"NDDEDLOG");
    assert_eq!(&log[8..12], &3u32.to_le_bytes());
    let mut out = Vec::new();
    let mut at = 12;
    while at < log.len() {
        assert_eq!(log[at..at + 4], MARK, "an entry starts with the mark");
        let len = u32::from_le_bytes(log[at + 4..at + 8].try_into().unwrap()) as usize;
        let crc = u32::from_le_bytes(log[at + 8..at + 12].try_into().unwrap());
        let mut h = crc32fast::Hasher::new();
        h.update(&log[at + 4..at + 8]);
        h.update(&log[at + 12..at + 12 + len]);
        assert_eq!(h.finalize(), crc);
        out.push((at, at + 12 + len));
        at += 12 + len;
    }
    out
}

/// Every document of `stored` is stored, under its id, and nothing else is.
fn holds_exactly(d: &Deduper, stored: &[&Document]) {
    assert_eq!(d.len(), stored.len());
    for x in stored {
        assert_eq!(
            d.check(x).unwrap(),
            Verdict::Exact { of: x.id.clone() },
            "{} is stored",
            x.id
        );
    }
}

const OPS: [Op; 5] = [Op::Write, Op::Sync, Op::Create, Op::Rename, Op::Remove];

/// One run: open, check_and_insert the documents (compacting after the fifth), with
/// the `nth` `op` failing with `kind`. Returns the acknowledged new documents, whether
/// the fault struck, and how many of each of [`OPS`] the run made.
fn run_with_fault<'a>(
    path: &Path,
    docs: &'a [Document],
    op: Op,
    nth: u64,
    kind: ErrorKind,
) -> (Vec<&'a Document>, bool, Vec<u64>) {
    fault::fail(path, op, nth, kind);
    let opened = Deduper::open(path, pipeline(), SyncPolicy::Always);
    let d = match opened {
        Err(Error::Io { source, .. }) => {
            assert_eq!(source.kind(), kind);
            fault::clear(path);
            return (Vec::new(), true, Vec::new());
        }
        Err(e) => panic!("opening: {e}"),
        Ok(d) => d,
    };
    let mut acked = Vec::new();
    let mut struck = None;
    for (i, x) in docs.iter().enumerate() {
        match d.check_and_insert(x) {
            Ok(Verdict::New) => acked.push(x),
            Ok(v) => panic!("{}: {v:?}", x.id),
            Err(e) => {
                struck = Some(e);
                break;
            }
        }
        if i == 4 {
            if let Err(e) = d.compact() {
                struck = Some(e);
                break;
            }
        }
    }
    let counts = OPS.iter().map(|&op| fault::count(path, op)).collect();
    fault::clear(path);
    let Some(e) = struck else {
        return (acked, false, counts);
    };
    assert!(
        matches!(&e, Error::Io { source, .. } if source.kind() == kind),
        "the first error is the I/O error: {e}"
    );
    assert!(d.failure().is_some());
    // Every later change is refused, and says why.
    let last = docs.last().unwrap();
    let other = Document::text("after-the-failure", "a document sent after the failure");
    assert!(matches!(d.check_and_insert(&other), Err(Error::Failed(_))));
    assert!(matches!(d.insert(&other), Err(Error::Failed(_))));
    assert!(matches!(d.remove(&last.id), Err(Error::Failed(_))));
    assert!(matches!(d.compact(), Err(Error::Failed(_))));
    // Checks too: memory may hold a document whose entry is not on the disk.
    assert!(matches!(
        d.check(acked.first().copied().unwrap_or(last)),
        Err(Error::Failed(_))
    ));
    (acked, true, counts)
}

/// ENOSPC and EIO at every write, flush, create, rename and removal of opening, the
/// appends and a compaction: the deduper refuses changes after the fault, and the
/// reopened state holds exactly the acknowledged documents.
#[test]
fn a_fault_at_any_operation_leaves_exactly_the_acknowledged_documents() {
    let docs = docs(9, 3);
    let base = tempfile::tempdir().unwrap();
    // How many of each operation a run without faults makes.
    let clean = base.path().join("clean");
    let (acked, struck, counts) =
        run_with_fault(&clean, &docs, Op::Write, u64::MAX, ErrorKind::Other);
    assert!(!struck && acked.len() == docs.len());
    assert!(counts[0] > docs.len() as u64 && counts[1] > docs.len() as u64);
    let mut runs = 0;
    for (&op, &n) in OPS.iter().zip(&counts) {
        for nth in 1..=n {
            for kind in [ErrorKind::StorageFull, ErrorKind::Other] {
                let path = base.path().join(format!("{op:?}-{nth}-{kind:?}"));
                let (acked, struck, _) = run_with_fault(&path, &docs, op, nth, kind);
                assert!(struck, "{op:?} {nth}: the fault struck");
                let d = Deduper::open(&path, pipeline(), SyncPolicy::Always).unwrap();
                holds_exactly(&d, &acked);
                // And it takes the rest.
                for x in &docs[acked.len()..] {
                    assert_eq!(d.check_and_insert(x).unwrap(), Verdict::New);
                }
                runs += 1;
            }
        }
    }
    assert!(runs > 40, "{runs} runs");
}

/// A clean state of `n` documents stored one entry each; its log's bytes.
fn stored_state(path: &Path, docs: &[Document]) -> Vec<u8> {
    let d = Deduper::open(path, pipeline(), SyncPolicy::Never).unwrap();
    for x in docs {
        assert_eq!(d.check_and_insert(x).unwrap(), Verdict::New);
    }
    drop(d);
    std::fs::read(path.join("log.0")).unwrap()
}

/// A byte flipped in each part of every entry but the last (its mark, length, CRC,
/// first and last payload byte): opening fails, naming the file, the damaged bytes and
/// the entries past them, and changes nothing; a recovery keeps every other entry,
/// sets the damaged file aside unchanged and says what it lost. The same flip in the
/// last entry is a torn tail, dropped quietly.
#[test]
fn a_damaged_log_is_refused_and_recovered_on_request() {
    let docs = docs(8, 5);
    let base = tempfile::tempdir().unwrap();
    let fresh = base.path().join("fresh");
    let whole = stored_state(&fresh, &docs);
    let bounds = entries(&whole);
    assert_eq!(bounds.len(), docs.len());
    for (k, &(start, end)) in bounds.iter().enumerate() {
        for at in [start, start + 5, start + 9, start + 12, end - 1] {
            let path = base.path().join(format!("flip-{k}-{at}"));
            std::fs::create_dir(&path).unwrap();
            std::fs::copy(fresh.join("snapshot.0"), path.join("snapshot.0")).unwrap();
            let mut bad = whole.clone();
            bad[at] ^= 0x10;
            std::fs::write(path.join("log.0"), &bad).unwrap();
            let last = k + 1 == bounds.len();
            if last {
                // A damaged last entry cannot be told from a torn one.
                let d = Deduper::open(&path, pipeline(), SyncPolicy::Always).unwrap();
                let kept: Vec<&Document> = docs[..k].iter().collect();
                holds_exactly(&d, &kept);
                assert!(d.recovered().is_none());
                continue;
            }
            match Deduper::open(&path, pipeline(), SyncPolicy::Always) {
                Err(Error::Corrupt { path: file, reason }) => {
                    assert_eq!(file, path.join("log.0"));
                    assert!(
                        reason.contains(&format!("bytes {start}..{end}")),
                        "{reason}"
                    );
                    let past = bounds.len() - k - 1;
                    assert!(
                        reason.contains(&format!("{past} whole entries past")),
                        "{reason}"
                    );
                }
                Err(e) => panic!("flip at {at}: {e}"),
                Ok(_) => panic!("flip at {at}: opened a damaged log"),
            }
            assert_eq!(
                std::fs::read(path.join("log.0")).unwrap(),
                bad,
                "left as it was"
            );
            let d =
                Deduper::open_with(&path, pipeline(), &StateOptions::new().recover(true)).unwrap();
            let kept: Vec<&Document> = docs
                .iter()
                .enumerate()
                .filter(|&(i, _)| i != k)
                .map(|(_, x)| x)
                .collect();
            holds_exactly(&d, &kept);
            assert_eq!(d.check(&docs[k]).unwrap(), Verdict::New);
            let r = d.recovered().expect("a recovery report").clone();
            assert_eq!(r.damaged, vec![start as u64..end as u64]);
            assert_eq!(r.entries_kept, docs.len() as u64 - 1);
            assert_eq!(r.entries_past_damage, (bounds.len() - k - 1) as u64);
            assert_eq!(r.damaged_copy, path.join("log.0.damaged"));
            assert_eq!(std::fs::read(&r.damaged_copy).unwrap(), bad, "kept aside");
            drop(d);
            // The recovered log opens cleanly, and the copy stays.
            let d = Deduper::open(&path, pipeline(), SyncPolicy::Always).unwrap();
            holds_exactly(&d, &kept);
            assert!(d.recovered().is_none());
            assert!(path.join("log.0.damaged").exists());
        }
    }
}

/// A version 2 log (no marks, CRC of the payload only, a zeroed end after a crash) is
/// read, and rewritten as version 3 on opening.
#[test]
fn a_version_2_log_is_read_and_rewritten() {
    let docs = docs(6, 8);
    let base = tempfile::tempdir().unwrap();
    let path = base.path().join("state");
    let v3 = stored_state(&path, &docs);
    let mut v2 = b"NDDEDLOG".to_vec();
    v2.extend_from_slice(&2u32.to_le_bytes());
    for (start, end) in entries(&v3) {
        let payload = &v3[start + 12..end];
        v2.extend_from_slice(&(payload.len() as u32).to_le_bytes());
        v2.extend_from_slice(&crc32fast::hash(payload).to_le_bytes());
        v2.extend_from_slice(payload);
    }
    v2.resize(v2.len() + 4096, 0);
    std::fs::write(path.join("log.0"), &v2).unwrap();
    let d = Deduper::open(&path, pipeline(), SyncPolicy::Always).unwrap();
    holds_exactly(&d, &docs.iter().collect::<Vec<_>>());
    drop(d);
    assert_eq!(std::fs::read(path.join("log.0")).unwrap(), v3);
}

/// A stored id sent with other text is an update: judged against the other documents
/// (never its own earlier version); new, it replaces the earlier version; a duplicate
/// of another, the earlier version is removed. Both survive a reopen.
#[test]
fn an_update_replaces_or_removes_the_earlier_version() {
    // 2,000 distinct words and one more: a near-duplicate (a few Charikar bits apart).
    let text: String = (0..2000).map(|i| format!("word{i} ")).collect();
    let edited = format!("{text}more");
    let pair = neardup::eval::compare(
        &pipeline(),
        &Document::text("x", text.clone()),
        &Document::text("y", edited.clone()),
    );
    assert!(pair.scores.judgement.near_duplicate);
    let other: String = (0..120).map(|i| format!("other{i} ")).collect();
    let base = tempfile::tempdir().unwrap();
    let path = base.path().join("state");
    {
        let d = Deduper::open(&path, pipeline(), SyncPolicy::Always).unwrap();
        let page = Document::text("page", text.clone());
        assert_eq!(d.check_and_insert(&page).unwrap(), Verdict::New);
        // A small edit under the same id: not a near-duplicate of itself, but new.
        let update = Document::text("page", edited.clone());
        assert_eq!(d.check(&update).unwrap(), Verdict::New);
        assert_eq!(d.check_and_insert(&update).unwrap(), Verdict::New);
        assert_eq!(d.len(), 1);
        // The stored version is the update.
        assert_eq!(
            d.check(&Document::text("probe", edited.clone())).unwrap(),
            Verdict::Exact { of: "page".into() }
        );
        // An update that copies another document: the earlier version goes.
        let b = Document::text("b", other.clone());
        assert_eq!(d.check_and_insert(&b).unwrap(), Verdict::New);
        let copy = Document::text("page", other.clone());
        assert_eq!(
            d.check_and_insert(&copy).unwrap(),
            Verdict::Exact { of: "b".into() }
        );
        assert_eq!(d.len(), 1);
        assert_eq!(
            d.check(&Document::text("probe", edited.clone())).unwrap(),
            Verdict::New
        );
    }
    let d = Deduper::open(&path, pipeline(), SyncPolicy::Always).unwrap();
    assert_eq!(d.len(), 1);
    assert_eq!(
        d.check(&Document::text("probe", other)).unwrap(),
        Verdict::Exact { of: "b".into() }
    );
    assert_eq!(
        d.check(&Document::text("probe", edited)).unwrap(),
        Verdict::New
    );
}

/// Threads inserting at once under `Always` share flushes, and every acknowledged
/// document is in the reopened state.
#[test]
fn concurrent_inserters_share_flushes() {
    let docs = docs(64, 11);
    let base = tempfile::tempdir().unwrap();
    let path = base.path().join("state");
    std::fs::create_dir(&path).unwrap();
    fault::watch(&path);
    {
        let d = Deduper::open(&path, pipeline(), SyncPolicy::Always).unwrap();
        std::thread::scope(|s| {
            for part in docs.chunks(8) {
                let d = &d;
                s.spawn(move || {
                    for x in part {
                        assert_eq!(d.check_and_insert(x).unwrap(), Verdict::New);
                    }
                });
            }
        });
    }
    let syncs = fault::count(&path, Op::Sync);
    fault::clear(&path);
    // One flush per entry at most, plus opening's and closing's.
    assert!(syncs <= docs.len() as u64 + 4, "{syncs} flushes");
    let d = Deduper::open(&path, pipeline(), SyncPolicy::Always).unwrap();
    holds_exactly(&d, &docs.iter().collect::<Vec<_>>());
}

/// `disk` tells the log's and snapshot's sizes as the files have them, before and after
/// a compaction; a deduper in memory has none.
#[test]
fn disk_stats_are_the_files_sizes() {
    assert!(Deduper::new(pipeline()).unwrap().disk().is_none());
    let dir = tempfile::tempdir().unwrap();
    let d = Deduper::open(dir.path(), pipeline(), SyncPolicy::Always).unwrap();
    for doc in docs(20, 7).iter() {
        d.check_and_insert(doc).unwrap();
    }
    let size = |name: &str| std::fs::metadata(dir.path().join(name)).map_or(0, |m| m.len());
    let before = d.disk().unwrap();
    assert_eq!(
        before.log_bytes,
        size(&format!("log.{}", before.generation))
    );
    assert!(before.log_bytes > 12, "{before:?}");
    d.compact().unwrap();
    let after = d.disk().unwrap();
    assert_eq!(after.generation, before.generation + 1);
    assert_eq!(after.log_bytes, size(&format!("log.{}", after.generation)));
    assert_eq!(
        after.snapshot_bytes,
        size(&format!("snapshot.{}", after.generation))
    );
    assert!(after.snapshot_bytes > 0 && after.log_bytes < before.log_bytes);
}
