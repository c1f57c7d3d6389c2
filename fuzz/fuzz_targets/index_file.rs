#![no_main]
//! Loading any bytes as a saved simhash index is an error or a working index, never a
//! panic; a loaded index answers its own fingerprints.
use libfuzzer_sys::fuzz_target;
use neardup::index::SimhashIndex;

fuzz_target!(|data: &[u8]| {
    if let Ok(idx) = SimhashIndex::from_bytes(data) {
        for (id, fp) in idx.entries().into_iter().take(16) {
            assert!(idx.query(fp).iter().any(|m| m.id == id && m.distance == 0));
        }
    }
});
