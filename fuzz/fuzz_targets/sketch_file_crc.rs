#![no_main]
//! Any bytes wrapped as a well-formed sketch file (right magic, end marker and CRC-32) so
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
    use neardup::persist::sketches::{SavedSketches, END_MAGIC, MAGIC};
    let bytes = wrap(data, MAGIC, END_MAGIC);
    if let Ok(s) = SavedSketches::from_bytes(&bytes) {
        assert_eq!(s.ids.len(), s.sketches.len());
    }
});
