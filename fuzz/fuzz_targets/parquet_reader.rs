//! The Parquet reader path on arbitrary bytes (`bash scripts/fuzz.sh SECONDS
//! parquet_reader`; nightly and cargo-fuzz). Reading must end without a panic and
//! account for every record it yields (the in-suite test `parquet_damage` checks the
//! same on 400 seeded damages of a valid file).
#![no_main]

use libfuzzer_sys::fuzz_target;
use neardup::io::{Fields, Format, Input, Reader};

fuzz_target!(|data: &[u8]| {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("x.parquet");
    std::fs::write(&p, data).unwrap();
    let input = Input::detect(&p, "x.parquet", Some(Format::Parquet));
    let reader = Reader::new(vec![input], Fields::default(), false, false);
    let counter = reader.counter();
    let mut n = 0u64;
    for r in reader {
        let rec = r.expect("not strict: problems are rejections");
        assert!(rec.doc.is_some());
        n += 1;
    }
    assert_eq!(n, counter.records());
    assert!(n >= 1);
});
