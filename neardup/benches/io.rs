//! JSONL line splitting: [`JsonlLines`] on a mapped file (lines lent from the mapping)
//! and through a read buffer (lines lent from the buffer), against the per-line reading
//! it replaced in `dedup`'s second pass (each line read into a vector of its own with
//! `read_until`, its ends cut, blank lines skipped). All count the records and their
//! bytes, checked inside the loop. And output files: [`neardup::persist::AtomicFile`]
//! (written by a thread of its own) against a plain buffered writer.
use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use neardup::io::{Input, JsonlLine, JsonlLines};
use std::io::{BufRead, Write};

fn corpus() -> Vec<u8> {
    let mut out = Vec::new();
    let mut state = 1u64;
    for i in 0..20_000u64 {
        state = neardup::sketch::hash::mix64(state.wrapping_add(i));
        // Lines of 200 to 4,000 bytes, like pages of text; a blank line now and then.
        let words = 30 + (state % 600) as usize;
        let text: Vec<String> = (0..words)
            .map(|w| format!("w{}", (state >> (w % 48)) % 997))
            .collect();
        out.extend_from_slice(
            serde_json::json!({"id": i.to_string(), "text": text.join(" ")})
                .to_string()
                .as_bytes(),
        );
        out.extend_from_slice(if i % 50 == 0 { b"\r\n\n" } else { b"\n" });
    }
    out
}

fn split(c: &mut Criterion) {
    let data = corpus();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("corpus.jsonl");
    std::fs::write(&path, &data).unwrap();
    let input = Input::detect(&path, "corpus.jsonl", None);
    let cap = 64 << 20;
    let mut g = c.benchmark_group("jsonl-lines");
    g.throughput(Throughput::Bytes(data.len() as u64));
    let count = |mut lines: JsonlLines| {
        let (mut n, mut bytes) = (0u64, 0u64);
        while let Some(l) = lines.next() {
            if let JsonlLine::Record { bytes: r, .. } = l {
                n += 1;
                bytes += r.len() as u64;
            }
        }
        assert_eq!(n, 20_000);
        bytes
    };
    g.bench_function("lent from the read buffer", |b| {
        b.iter(|| {
            let f = std::fs::File::open(&path).unwrap();
            count(JsonlLines::from_read(Box::new(f), cap))
        })
    });
    g.bench_function("lent from a mapping", |b| {
        b.iter(|| {
            let lines = JsonlLines::open(&input, cap).unwrap();
            assert!(lines.is_mapped());
            count(lines)
        })
    });
    g.bench_function("read_until, a vector per line (baseline)", |b| {
        b.iter(|| {
            let f = std::fs::File::open(&path).unwrap();
            let mut r = std::io::BufReader::with_capacity(1 << 20, f);
            let (mut n, mut bytes) = (0u64, 0u64);
            loop {
                let mut buf = Vec::new();
                if r.read_until(b'\n', &mut buf).unwrap() == 0 {
                    break;
                }
                while buf.last().is_some_and(|&c| c == b'\n' || c == b'\r') {
                    buf.pop();
                }
                if buf.iter().all(u8::is_ascii_whitespace) {
                    continue;
                }
                n += 1;
                bytes += buf.len() as u64;
            }
            assert_eq!(n, 20_000);
            bytes
        })
    });
    g.finish();
}

/// Output files: 64 MiB handed over in pieces of a JSONL line's size through
/// [`neardup::persist::AtomicFile`] (its buffers written by a thread of its own, see
/// `persist::behind`) against a plain 1 MiB `BufWriter` on the caller's thread. Both
/// write into the page cache of a temporary file and are dropped without a sync (the
/// atomic file is abandoned, not committed), so the disk is out of the figure.
fn write(c: &mut Criterion) {
    let piece: Vec<u8> = (0..1_700u32).map(|i| b'a' + (i % 26) as u8).collect();
    let total = 64usize << 20;
    let dir = tempfile::tempdir().unwrap();
    let mut g = c.benchmark_group("output-file");
    g.throughput(Throughput::Bytes(total as u64));
    g.sample_size(20);
    g.bench_function("AtomicFile, writing thread", |b| {
        b.iter(|| {
            let mut f = neardup::persist::AtomicFile::create(dir.path().join("a.jsonl")).unwrap();
            let mut n = 0;
            while n < total {
                f.write_all(&piece).unwrap();
                n += piece.len();
            }
            f.flush().unwrap();
        })
    });
    g.bench_function("BufWriter on the caller's thread (baseline)", |b| {
        b.iter(|| {
            let file = std::fs::File::create(dir.path().join("b.jsonl")).unwrap();
            let mut f = std::io::BufWriter::with_capacity(1 << 20, file);
            let mut n = 0;
            while n < total {
                f.write_all(&piece).unwrap();
                n += piece.len();
            }
            f.flush().unwrap();
        })
    });
    g.finish();
}

/// JSONL records parsed into documents: [`neardup::io::parse_json_record`] (a flat
/// object of strings read in one pass, `io::flat_json`) against the general serde_json
/// parser it falls back to ([`neardup::io::parse_general`], the baseline; it gets the
/// line already checked as UTF-8, so the check is in the first figure only). The lines
/// are written as Python's `json.dumps` writes them by default: an id, a URL and a text
/// whose non-ASCII characters are `\uXXXX` escapes (surrogate pairs beyond the BMP),
/// with a newline escape now and then: about one escape per 100 bytes, as in the Rust
/// docs corpus.
fn records(c: &mut Criterion) {
    let mut words: Vec<String> = (0..60).map(|i| format!("w{}", i * 37 % 1000)).collect();
    words.extend(["café", "naïve", "数据", "😀"].map(String::from));
    let mut state = 3u64;
    let lines: Vec<Vec<u8>> = (0..5_000u64)
        .map(|i| {
            let mut text = String::new();
            for w in 0..(40 + i % 400) {
                state = neardup::sketch::hash::mix64(state.wrapping_add(w));
                text.push_str(&words[(state % words.len() as u64) as usize]);
                text.push(if state.is_multiple_of(97) { '\n' } else { ' ' });
            }
            let doc = serde_json::json!({
                "id": format!("doc/{i}.html"),
                "url": format!("https://example.com/doc/{i}.html"),
                "text": text,
            });
            // serde_json keeps non-ASCII characters as they are; escape them as
            // Python does.
            let mut out = String::new();
            for ch in doc.to_string().chars() {
                if ch.is_ascii() {
                    out.push(ch);
                } else {
                    let mut units = [0u16; 2];
                    for u in ch.encode_utf16(&mut units) {
                        out.push_str(&format!("\\u{u:04x}"));
                    }
                }
            }
            out.into_bytes()
        })
        .collect();
    let bytes: usize = lines.iter().map(Vec::len).sum();
    let fields = neardup::io::Fields::default();
    let mut g = c.benchmark_group("json-record");
    g.throughput(Throughput::Bytes(bytes as u64));
    g.bench_function("parse_json_record (flat objects in one pass)", |b| {
        b.iter(|| {
            let mut n = 0;
            for l in &lines {
                n += neardup::io::parse_json_record(l, &fields, "b", 1)
                    .unwrap()
                    .id
                    .len();
            }
            n
        })
    });
    g.bench_function("serde_json, the general parser (baseline)", |b| {
        let texts: Vec<&str> = lines
            .iter()
            .map(|l| std::str::from_utf8(l).unwrap())
            .collect();
        b.iter(|| {
            let mut n = 0;
            for l in &texts {
                n += neardup::io::parse_general(l, &fields, "b", 1)
                    .unwrap()
                    .id
                    .len();
            }
            n
        })
    });
    g.finish();
}

criterion_group!(benches, split, write, records);
criterion_main!(benches);
