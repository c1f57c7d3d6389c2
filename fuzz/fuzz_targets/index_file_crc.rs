#![no_main]
//! Any bytes wrapped as a well-formed index file (right magic, end marker and CRC-32) so
//! that the parser past the checksum is exercised: an error or a working result, never
//! a panic.
use libfuzzer_sys::fuzz_target;

fn wrap(body: &[u8], magic: &[u8; 8], end: &[u8; 8]) -> Vec<u8> {
    let mut v = magic.to_vec();
    v.extend_from_slice(body);
    let crc = crc32fast::hash(&v);
    v.extend_from_slice(&crc.to_le_bytes());
    v.extend_from_slice(end);
    v
}

fuzz_target!(|data: &[u8]| {
    use neardup::index::{SimhashIndex, INDEX_END, INDEX_MAGIC};
    let bytes = wrap(data, INDEX_MAGIC, INDEX_END);
    if let Ok(idx) = SimhashIndex::from_bytes(&bytes) {
        for (id, fp) in idx.entries().into_iter().take(16) {
            assert!(idx.query(fp).iter().any(|m| m.id == id && m.distance == 0));
        }
    }
});
