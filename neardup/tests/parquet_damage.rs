//! The Parquet reader against damaged files: a valid file (written here with the
//! `parquet` crate) with bytes flipped, runs overwritten and the tail cut, 400 ways
//! from a fixed seed. Reading never panics, ends, and accounts for every record: each
//! yielded item is a document or a rejection, and the reader's own count agrees.
//! (`fuzz/` holds the same check as a cargo-fuzz target for longer runs.)

use arrow::array::{RecordBatch, StringArray};
use arrow::datatypes::{DataType, Field, Schema};
use neardup::io::{Fields, Format, Input, Reader};
use parquet::arrow::ArrowWriter;
use parquet::basic::Compression;
use parquet::file::properties::WriterProperties;
use rand::{RngExt, SeedableRng};
use std::sync::Arc;

fn valid_file(compression: Compression) -> Vec<u8> {
    let n = 300;
    let schema = Arc::new(Schema::new(vec![
        Field::new("id", DataType::Utf8, true),
        Field::new("text", DataType::Utf8, true),
    ]));
    let ids: StringArray = (0..n).map(|i| Some(format!("doc{i}"))).collect();
    let text: StringArray = (0..n)
        .map(|i| Some(format!("record {i} has some words {} in it", i * 31 % 97)))
        .collect();
    let b = RecordBatch::try_new(schema.clone(), vec![Arc::new(ids), Arc::new(text)]).unwrap();
    let props = WriterProperties::builder()
        .set_compression(compression)
        .set_max_row_group_row_count(Some(40))
        .build();
    let mut out = Vec::new();
    let mut w = ArrowWriter::try_new(&mut out, schema, Some(props)).unwrap();
    w.write(&b).unwrap();
    w.close().unwrap();
    out
}

/// Reads `bytes` as a Parquet input; returns (documents, rejections, counted).
fn read(dir: &std::path::Path, bytes: &[u8]) -> (usize, usize, u64) {
    let p = dir.join("x.parquet");
    std::fs::write(&p, bytes).unwrap();
    let input = Input::detect(&p, "x.parquet", Some(Format::Parquet));
    let reader = Reader::new(vec![input], Fields::default());
    let counter = reader.counter();
    let (mut docs, mut rejected) = (0, 0);
    for r in reader {
        match r.expect("not strict: problems are rejections").into_doc() {
            Some(Ok(_)) => docs += 1,
            Some(Err(_)) => rejected += 1,
            None => panic!("a Parquet record carries its document or its rejection"),
        }
    }
    (docs, rejected, counter.records())
}

#[test]
fn damaged_parquet_is_rejected_never_a_panic() {
    let t = tempfile::tempdir().unwrap();
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(20);
    for compression in [
        Compression::UNCOMPRESSED,
        Compression::SNAPPY,
        Compression::ZSTD(Default::default()),
    ] {
        let good = valid_file(compression);
        assert_eq!(read(t.path(), &good), (300, 0, 300));
        for case in 0..400 / 3 {
            let mut bad = good.clone();
            match case % 4 {
                0 => {
                    for _ in 0..rng.random_range(1..8) {
                        let i = rng.random_range(0..bad.len());
                        bad[i] ^= 1 << rng.random_range(0..8);
                    }
                }
                1 => {
                    let i = rng.random_range(0..bad.len() - 16);
                    let v = rng.random::<u8>();
                    bad[i..i + 16].fill(v);
                }
                2 => bad.truncate(rng.random_range(0..bad.len())),
                _ => {
                    // Damage inside the footer's metadata (the last bytes before its length).
                    let end = bad.len() - 8;
                    let i = rng.random_range(end.saturating_sub(200)..end);
                    bad[i] = rng.random();
                }
            }
            let (docs, rejected, counted) = read(t.path(), &bad);
            assert_eq!(
                (docs + rejected) as u64,
                counted,
                "case {case}: every record counted once"
            );
            // A row is a record: as many records as the footer (read here on its own)
            // promises rows, or one rejection for a file whose footer is unreadable.
            let f = std::fs::File::open(t.path().join("x.parquet")).unwrap();
            let footer = parquet::file::metadata::ParquetMetaDataReader::new().parse_and_finish(&f);
            match footer {
                Ok(m) if m.row_groups().iter().all(|g| g.num_rows() >= 0) => {
                    let rows: i64 = m.row_groups().iter().map(|g| g.num_rows()).sum();
                    if docs + rejected != 1 || rows == 1 {
                        assert_eq!((docs + rejected) as i64, rows, "case {case}");
                    }
                }
                _ => assert_eq!(
                    (docs, rejected),
                    (0, 1),
                    "case {case}: an unreadable footer"
                ),
            }
        }
    }
}
