#![no_main]
//! Any bytes as the entries of an online deduper's log (each framed with its length and
//! a right CRC-32, so that the entry parser past the checksum is exercised; the rest as
//! a raw tail): opening the state is an error or a working deduper, never a panic, and
//! a deduper that opened takes a new document and opens again to the same count.
use libfuzzer_sys::fuzz_target;
use neardup::online::SyncPolicy;
use neardup::{Deduper, Document, Pipeline};
use std::sync::OnceLock;

/// A snapshot of no documents made by this build, and a pipeline (built once).
fn base() -> &'static (Vec<u8>, Pipeline) {
    static BASE: OnceLock<(Vec<u8>, Pipeline)> = OnceLock::new();
    BASE.get_or_init(|| {
        let p = Pipeline::builder().build().unwrap();
        let dir = tempfile::tempdir().unwrap();
        drop(Deduper::open(dir.path(), p.clone(), SyncPolicy::Never).unwrap());
        (std::fs::read(dir.path().join("snapshot.0")).unwrap(), p)
    })
}

fuzz_target!(|data: &[u8]| {
    let (snapshot, p) = base();
    let mut log = b"NDDEDLOG".to_vec();
    log.extend_from_slice(&2u32.to_le_bytes());
    // Entries: a 2-byte length, then that many bytes as the payload.
    let mut rest = data;
    while rest.len() >= 2 {
        let len = u16::from_le_bytes([rest[0], rest[1]]) as usize;
        if len == 0 || rest.len() < 2 + len {
            break;
        }
        let payload = &rest[2..2 + len];
        log.extend_from_slice(&(len as u32).to_le_bytes());
        log.extend_from_slice(&crc32fast::hash(payload).to_le_bytes());
        log.extend_from_slice(payload);
        rest = &rest[2 + len..];
    }
    log.extend_from_slice(rest);
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("snapshot.0"), snapshot).unwrap();
    std::fs::write(dir.path().join("log.0"), &log).unwrap();
    let Ok(d) = Deduper::open(dir.path(), p.clone(), SyncPolicy::Never) else {
        return;
    };
    let n = d.len();
    let doc = Document::text(
        "fuzz-new-document",
        "a new document stored after whatever the log held, then found again",
    );
    d.insert(&doc).unwrap();
    let after = d.len();
    assert!(after == n || after == n + 1);
    drop(d);
    let again = Deduper::open(dir.path(), p.clone(), SyncPolicy::Never).unwrap();
    assert_eq!(again.len(), after);
});
