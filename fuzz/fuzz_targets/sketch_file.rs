#![no_main]
//! Loading any bytes as a sketch file is an error or valid sketches, never a panic.
use libfuzzer_sys::fuzz_target;
use neardup::persist::sketches::SavedSketches;

fuzz_target!(|data: &[u8]| {
    if let Ok(s) = SavedSketches::from_bytes(data) {
        assert_eq!(s.ids.len(), s.sketches.len());
    }
});
