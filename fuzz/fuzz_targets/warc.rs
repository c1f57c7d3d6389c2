#![no_main]
//! Any byte string read as WARC gives documents or rejections, never a panic.
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = neardup::io::parse_warc(data);
});
