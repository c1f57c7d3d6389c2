#![no_main]
//! A JSONL record is parsed or rejected with a reason, never a panic; and the one-pass
//! parser of flat objects agrees with the general parser: the same document or the
//! same rejection.
use libfuzzer_sys::fuzz_target;
use neardup::io::{parse_general, parse_json_record, Fields};

fuzz_target!(|data: &[u8]| {
    let f = Fields::default();
    let got = parse_json_record(data, &f, "fuzz", 1);
    if let Ok(text) = std::str::from_utf8(data) {
        assert_eq!(got, parse_general(text, &f, "fuzz", 1));
    }
});
