#![no_main]
//! A JSONL record is parsed or rejected with a reason, never a panic.
use libfuzzer_sys::fuzz_target;
use neardup::io::{parse_json_record, Fields};

fuzz_target!(|data: &[u8]| {
    let _ = parse_json_record(data, &Fields::default(), "fuzz", 1);
});
