//! The online deduper when the system refuses the memory its tables need to grow: the
//! call that needed it fails with `Error::OutOfMemory`, nothing is logged or stored
//! for it, no thread panics, and the deduper goes on. (Its own test binary: the plan
//! that refuses memory covers every deduper of the process.)

use neardup::online::fault::{self, Op};
use neardup::online::SyncPolicy;
use neardup::synth::{generate, SynthConfig};
use neardup::{Deduper, Document, Error, Pipeline, Verdict};
use std::io::ErrorKind;
use std::path::Path;

fn docs(n: usize) -> Vec<Document> {
    let mut d = generate(&SynthConfig {
        base_documents: n,
        words: (60, 200),
        duplicate_rate: 0.0,
        hosts: 3,
        seed: 11,
        ..Default::default()
    })
    .documents;
    d.truncate(n);
    d
}

/// The plan's directory: memory blocks are asked for under `<memory>`, whose
/// directory is the empty path.
fn memory() -> &'static Path {
    Path::new("")
}

#[test]
fn a_refused_rebuild_changes_nothing_and_the_deduper_goes_on() {
    let dir = tempfile::tempdir().unwrap();
    let pipeline = Pipeline::builder().build().unwrap();
    let docs = docs(600);
    let mut acknowledged: Vec<&Document> = Vec::new();
    let mut refusals = 0;
    {
        let d = Deduper::open(dir.path(), pipeline.clone(), SyncPolicy::Always).unwrap();
        fault::watch(memory());
        for (i, doc) in docs.iter().enumerate() {
            // Every 50 documents, the next block asked for is refused.
            if i % 50 == 0 {
                fault::fail(memory(), Op::Map, 1, ErrorKind::OutOfMemory);
            }
            match d.check_and_insert(doc) {
                Ok(Verdict::New) => acknowledged.push(doc),
                Ok(v) => panic!("{}: generated without duplicates, got {v:?}", doc.id),
                Err(Error::OutOfMemory(why)) => {
                    refusals += 1;
                    assert!(why.contains("injected failure of map"), "{why}");
                    // Not stored: asked again (the plan is spent), it is new.
                    assert_eq!(d.check(doc).unwrap(), Verdict::New);
                }
                Err(e) => panic!("{}: {e}", doc.id),
            }
        }
        assert!(
            d.failure().is_none(),
            "a refused block does not fail the state"
        );
        assert_eq!(d.len(), acknowledged.len());
        for x in &acknowledged {
            assert_eq!(d.check(x).unwrap(), Verdict::Exact { of: x.id.clone() });
        }
        // A refused reserve: an error, the tables whole, the deduper goes on.
        fault::fail(memory(), Op::Map, 1, ErrorKind::OutOfMemory);
        let r = d.reserve(1_000_000);
        assert!(matches!(r, Err(Error::Io { .. })), "{r:?}");
        for x in &acknowledged {
            assert_eq!(d.check(x).unwrap(), Verdict::Exact { of: x.id.clone() });
        }
        d.reserve(10_000).unwrap();
    }
    fault::clear(memory());
    // Growth over 600 documents rebuilds the tables' shards many times: refusals struck.
    assert!(refusals >= 5, "{refusals} refusals");
    assert!(acknowledged.len() + refusals == docs.len());
    // The log holds exactly what was acknowledged.
    let d = Deduper::open(dir.path(), pipeline, SyncPolicy::Always).unwrap();
    assert_eq!(d.len(), acknowledged.len());
    for x in &acknowledged {
        assert_eq!(d.check(x).unwrap(), Verdict::Exact { of: x.id.clone() });
    }
}
