//! The second pass's fast way for plain JSONL inputs: where each record lies in its
//! file is noted by the first pass ([`Ranges`]), so the kept records are written at
//! their places in the output straight from the files' mappings (`pwritev`: the system
//! copies them once; a run of kept lines with their own `\n` ends goes as one slice),
//! by two threads at once when the run may use two ([`write_kept`]), without splitting
//! the inputs into lines again. The output is
//! byte for byte what the line-by-line way writes: each kept record's bytes (its line
//! without the `\n` / `\r\n` end) and a `\n`, in input order.
//!
//! It is taken only when the kept records are all the second pass writes (`-o` to an
//! uncompressed JSONL file that is replaced on commit, no `--output-dir`, `--annotate`
//! or `--rejects`) and every record of every input was lent from a mapping of its file;
//! otherwise the line-by-line way runs.

use super::sink::Sink;
use crate::error::{Error, Result};
use crate::io::Encoder;
use crate::io::{Content, Input, Mapped, RawBytes, RawRecord};
use crate::persist::behind::{reserve_blocks, start_write_back, WRITE_BEHIND};
#[cfg(unix)]
use crate::persist::behind::{write_all_vectored_at, MAX_SLICES};
use crate::pipeline::Fate;
use crate::Dedup;
#[cfg(unix)]
use std::io::IoSlice;

/// The length noted for a record without bytes (a line too large, unreadable).
const NO_BYTES: u32 = u32::MAX;

/// Bytes gathered by a writing thread before each positional write.
const CHUNK: usize = 1 << 20;

/// The input number of a gathered newline that is not a line's own.
const NEWLINE: u32 = u32::MAX;

/// Pages released behind a thread's reading at a time, and their alignment.
const STEP: usize = 2 << 20;

/// Where the first pass found each record of each input (see the module docs).
#[derive(Debug)]
pub struct Ranges {
    /// Per input; `None` once a record of it was not lent from a mapping.
    per_input: Vec<Option<Noted>>,
}

/// One input's records as the first pass found them.
#[derive(Debug, Default)]
struct Noted {
    /// `(start, length)` of each record's bytes in the file, in input order.
    records: Vec<(u64, u32)>,
    /// The length of the file as mapped.
    file_len: usize,
}

impl Ranges {
    /// Ranges of `inputs` inputs, noted only when `on`.
    pub fn new(inputs: usize, on: bool) -> Self {
        Ranges {
            per_input: (0..inputs).map(|_| on.then(Noted::default)).collect(),
        }
    }

    /// Notes the next record read (records come in input order).
    pub fn note(&mut self, rec: &RawRecord) {
        let input = rec.position.input;
        let Some(Some(noted)) = self.per_input.get_mut(input) else {
            return;
        };
        match &rec.content {
            Content::Line(RawBytes::Mapped { map, range }) if range.len() < NO_BYTES as usize => {
                noted.records.push((range.start as u64, range.len() as u32));
                noted.file_len = map.len();
            }
            Content::Parsed {
                doc: Err(_),
                raw: None,
            } => noted.records.push((0, NO_BYTES)),
            _ => self.per_input[input] = None,
        }
    }
}

impl Ranges {
    /// Where record `ordinal` (counted over the inputs in order, from 0) lies: its
    /// input, and the start and length of its bytes in that file; `None` when the first
    /// pass could not note it (an input read otherwise than from a mapping, or a record
    /// without bytes).
    pub fn locate(&self, ordinal: usize) -> Option<(usize, u64, u32)> {
        let mut at = ordinal;
        for (input, noted) in self.per_input.iter().enumerate() {
            let noted = noted.as_ref()?;
            if at < noted.records.len() {
                let (start, len) = noted.records[at];
                return (len != NO_BYTES).then_some((input, start, len));
            }
            at -= noted.records.len();
        }
        None
    }
}

/// Elsewhere than on Unix the line-by-line way always runs.
#[cfg(not(unix))]
pub fn write_kept(_: &Dedup, _: &[Input], _: &Ranges, _: &Sink, _: usize) -> Result<Option<u64>> {
    Ok(None)
}

/// Writes the kept records of `d` from `inputs` into `out` at their places, by
/// `writers` threads at once (the calling one among them; at most two: ext4 lets one
/// writer of a file copy at a time, so a second one only overlaps what each does
/// outside that lock: gathering the next slices, releasing the input's pages behind,
/// starting the disk writes); returns how many, or `None` (nothing written) when the run
/// does not allow this way (see the module docs: the caller checked the other
/// targets).
#[cfg(unix)]
pub fn write_kept(
    d: &Dedup,
    inputs: &[Input],
    ranges: &Ranges,
    out: &Sink,
    writers: usize,
) -> Result<Option<u64>> {
    let Sink::Lines { w, name } = out else {
        return Ok(None);
    };
    let Encoder::Plain(file) = w.as_ref() else {
        return Ok(None);
    };
    let Some(file) = file.positional() else {
        return Ok(None);
    };
    if ranges.per_input.len() != inputs.len() || ranges.per_input.iter().any(Option::is_none) {
        return Ok(None);
    }
    let records: usize = ranges
        .per_input
        .iter()
        .flatten()
        .map(|n| n.records.len())
        .sum();
    if d.previous + records != d.fates.len() {
        // Not the records the run decided on: the line-by-line way says why.
        return Ok(None);
    }
    // The kept records in input order: (input, start, length).
    let mut kept: Vec<(u32, u64, u32)> = Vec::new();
    let mut ordinal = d.previous;
    for (i, noted) in ranges.per_input.iter().flatten().enumerate() {
        for &(start, len) in &noted.records {
            if matches!(d.fates[ordinal], Fate::Kept) {
                if len == NO_BYTES {
                    // A record without bytes is never kept; leave it to the other way.
                    return Ok(None);
                }
                kept.push((i as u32, start, len));
            }
            ordinal += 1;
        }
    }
    // The inputs holding kept records, mapped again, each as long as before.
    let mut maps: Vec<Option<Mapped>> = (0..inputs.len()).map(|_| None).collect();
    for &(i, ..) in &kept {
        let i = i as usize;
        if maps[i].is_some() {
            continue;
        }
        let noted = ranges.per_input[i].as_ref().map_or(0, |n| n.file_len);
        match Mapped::open(&inputs[i].path)? {
            Some(m) if m.len() == noted => maps[i] = Some(m),
            _ => {
                return Err(Error::InputChanged(format!(
                    "{}: input changed between the two passes (its length is not what was read)",
                    inputs[i].name
                )))
            }
        }
    }
    let bytes: u64 = kept.iter().map(|&(_, _, l)| l as u64 + 1).sum();
    // The file's blocks reserved at once rather than page by page as it is written.
    reserve_blocks(file, bytes);
    let maps = &maps;
    if writers <= 1 {
        write_part(maps, &kept, file, 0).map_err(|e| Error::io(name, e))?;
        return Ok(Some(kept.len() as u64));
    }
    // Two parts of about equal bytes, each written from its own offset.
    let mut split = 0;
    let mut before = 0u64;
    while split < kept.len() && 2 * before < bytes {
        before += kept[split].2 as u64 + 1;
        split += 1;
    }
    let (first, second) = kept.split_at(split);
    std::thread::scope(|s| -> Result<()> {
        let other = s.spawn(move || write_part(maps, second, file, before));
        let mine = write_part(maps, first, file, 0);
        let theirs = other
            .join()
            .unwrap_or_else(|_| Err(std::io::Error::other("a writing thread panicked")));
        mine.and(theirs).map_err(|e| Error::io(name, e))
    })?;
    Ok(Some(kept.len() as u64))
}

#[cfg(unix)]
/// Writes `part` (kept records: input, start, length) into `file` from offset `at`:
/// each record's bytes and a newline, copied once, by the system, from the inputs'
/// mappings into the file (the line's own `\n` when it has one, so that consecutive
/// kept lines go as one slice); the pages read are released behind, the stretches
/// written are handed to the disk behind.
fn write_part(
    maps: &[Option<Mapped>],
    part: &[(u32, u64, u32)],
    file: &std::fs::File,
    mut at: u64,
) -> std::io::Result<()> {
    // Gathered stretches: (input, start, end), or a lone newline (input `NEWLINE`).
    let mut stretches: Vec<(u32, usize, usize)> = Vec::with_capacity(MAX_SLICES);
    let mut slices: Vec<IoSlice<'_>> = Vec::with_capacity(MAX_SLICES);
    let mut gathered = 0usize;
    let mut synced = at;
    // The input being read, and where its pages were released up to (from this part's
    // first record in it, rounded up: the other part's pages are left alone).
    let mut current = (u32::MAX, 0usize);
    for (k, &(i, start, len)) in part.iter().enumerate() {
        let Some(map) = maps[i as usize].as_ref() else {
            return Err(std::io::Error::other("an input was not mapped"));
        };
        let (start, len) = (start as usize, len as usize);
        if current.0 != i {
            current = (i, start.next_multiple_of(STEP));
        }
        if map.get(start..start + len).is_none() {
            return Err(std::io::Error::other("a record lies past its input's end"));
        }
        let own_newline = map.get(start + len) == Some(&b'\n');
        let end = start + len + usize::from(own_newline);
        match stretches.last_mut() {
            Some(last) if last.0 == i && last.2 == start => last.2 = end,
            _ => stretches.push((i, start, end)),
        }
        if !own_newline {
            stretches.push((NEWLINE, 0, 1));
        }
        gathered += len + 1;
        let last = k + 1 == part.len();
        if gathered >= CHUNK || stretches.len() + 2 > MAX_SLICES || last {
            slices.clear();
            for &(j, s, e) in &stretches {
                let bytes: &[u8] = if j == NEWLINE {
                    b"\n"
                } else {
                    match maps[j as usize].as_ref().and_then(|m| m.get(s..e)) {
                        Some(b) => b,
                        None => return Err(std::io::Error::other("a stretch left its input")),
                    }
                };
                slices.push(IoSlice::new(bytes));
            }
            write_all_vectored_at(file, &mut slices, at)?;
            at += gathered as u64;
            gathered = 0;
            stretches.clear();
            if at - synced >= WRITE_BEHIND {
                start_write_back(file, synced, at - synced);
                synced = at;
            }
            // The bytes before `end` are in the file: their pages can go.
            let upto = end & !(STEP - 1);
            if upto > current.1 {
                map.release(current.1..upto);
                current.1 = upto;
            }
        }
    }
    Ok(())
}

#[cfg(all(test, unix))]
mod tests {
    use super::{write_kept, Ranges};
    use crate::io::{Fields, Format, Input, Reader};
    use crate::job::sink::Sink;
    use crate::pipeline::Fate;
    use crate::Pipeline;

    /// An input with every kind of line: duplicates and near-duplicates (dropped),
    /// `\r\n` ends, blank and white-space lines, malformed JSON, a line over the
    /// record cap, a kept record bigger than a writing chunk, non-ASCII text, and no
    /// newline after the last line.
    fn corpus() -> Vec<u8> {
        let mut out = Vec::new();
        let text_of = |i: u64| -> Vec<String> {
            (0..60u64)
                .map(|j| {
                    let w = format!("w{}", (i * 2_654_435_761 + j * 40_503) % 1_000_003);
                    if j % 9 == 0 {
                        format!("{w}é")
                    } else {
                        w
                    }
                })
                .collect()
        };
        for i in 0..4000u64 {
            let mut words = text_of(if i % 10 == 3 { i - 1 } else { i });
            if i % 10 == 5 {
                // The record before it with one word changed (a near-duplicate).
                words = text_of(i - 1);
                words[30] = "changed".into();
            }
            let text = words.join(" ");
            let line = format!("{{\"id\": \"r{i}\", \"text\": \"{text}\"}}");
            out.extend_from_slice(line.as_bytes());
            out.extend_from_slice(if i % 13 == 0 { b"\r\n" } else { b"\n" });
            match i {
                100 => out.extend_from_slice(b"\n   \n\t\r\n"),
                200 => out.extend_from_slice(b"{\"id\": \"broken\", \"text\": \n"),
                300 => {
                    // Over the record cap (2 × 1,500,000 + 1 MiB bytes): rejected unread.
                    out.extend_from_slice(b"{\"id\": \"huge\", \"text\": \"");
                    out.extend(std::iter::repeat_n(b'x', 4_500_000));
                    out.extend_from_slice(b"\"}\n");
                }
                400 => {
                    // Bigger than a writing chunk, within the body limit: kept.
                    let body: Vec<String> = (0..200_000).map(|k| format!("w{k}")).collect();
                    let line = format!("{{\"id\": \"big\", \"text\": \"{}\"}}\n", body.join(" "));
                    assert!(line.len() > super::CHUNK && line.len() < 1_500_000);
                    out.extend_from_slice(line.as_bytes());
                }
                _ => {}
            }
        }
        out.extend_from_slice(b"{\"id\": \"last\", \"text\": \"no newline after me\"}");
        out
    }

    #[test]
    fn kept_records_written_from_their_ranges_are_the_kept_lines() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("in.jsonl");
        let bytes = corpus();
        std::fs::write(&path, &bytes).unwrap();
        let inputs = vec![Input::detect(&path, "in.jsonl", Some(Format::Jsonl))];
        let mut b = Pipeline::builder();
        b.max_document_bytes(1_500_000);
        let pipeline = b.build().unwrap();
        let max_record = 1_500_000 * 2 + (1 << 20);
        let mut ranges = Ranges::new(1, true);
        let records = Reader::new(inputs.clone(), Fields::default())
            .defer_parsing(true)
            .max_record_bytes(max_record)
            .map(|r| r.unwrap())
            .inspect(|r| ranges.note(r))
            .collect::<Vec<_>>();
        let fields = Fields::default();
        let d = pipeline
            .run_with(records, |r| r.into_document(&fields, "in.jsonl"))
            .unwrap();
        // The definition: the lines (split after each `\n`), without their `\n` /
        // `\r` ends; blank ones are no records; a kept record's line and a newline.
        let mut want = Vec::new();
        let lines = bytes
            .split_inclusive(|&c| c == b'\n')
            .map(|l| {
                let mut l = l;
                while let [rest @ .., b'\n' | b'\r'] = l {
                    l = rest;
                }
                l
            })
            .filter(|l| !l.iter().all(u8::is_ascii_whitespace));
        let mut n_records = 0;
        for (line, fate) in lines.zip(&d.fates) {
            n_records += 1;
            if matches!(fate, Fate::Kept) {
                want.extend_from_slice(line);
                want.push(b'\n');
            }
        }
        assert_eq!(n_records, d.fates.len());
        let kept = d.fates.iter().filter(|f| matches!(f, Fate::Kept)).count() as u64;
        assert!(
            kept > 3000 && (kept as usize) < d.fates.len() - 400,
            "{kept} kept"
        );
        for writers in [1, 2] {
            let out_path = dir.path().join(format!("out-{writers}.jsonl"));
            let out = Sink::create(&out_path, 2).unwrap();
            let written = write_kept(&d, &inputs, &ranges, &out, writers).unwrap();
            assert_eq!(written, Some(kept), "the ranges' way was taken");
            out.commit().unwrap();
            let got = std::fs::read(&out_path).unwrap();
            assert_eq!(got.len(), want.len(), "{writers} writers");
            assert!(
                got == want,
                "the kept lines, byte for byte, {writers} writers"
            );
        }
    }

    #[test]
    fn other_outputs_and_unnoted_inputs_take_the_line_by_line_way() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("in.jsonl");
        std::fs::write(&path, b"{\"id\": \"a\", \"text\": \"one two three\"}\n").unwrap();
        let inputs = vec![Input::detect(&path, "in.jsonl", Some(Format::Jsonl))];
        let pipeline = Pipeline::builder().build().unwrap();
        let fields = Fields::default();
        let run = |ranges: &mut Ranges| {
            let records = Reader::new(inputs.clone(), Fields::default())
                .defer_parsing(true)
                .map(|r| r.unwrap())
                .inspect(|r| ranges.note(r))
                .collect::<Vec<_>>();
            pipeline
                .run_with(records, |r| r.into_document(&fields, "in.jsonl"))
                .unwrap()
        };
        let mut on = Ranges::new(1, true);
        let d = run(&mut on);
        let mut off = Ranges::new(1, false);
        run(&mut off);
        let to = |name: &str| Sink::create(&dir.path().join(name), 2).unwrap();
        // Not noted (a compressed or read-ahead input).
        assert_eq!(
            write_kept(&d, &inputs, &off, &to("a.jsonl"), 2).unwrap(),
            None
        );
        // Compressed, or standard output: written in order by the other way.
        assert_eq!(
            write_kept(&d, &inputs, &on, &to("b.jsonl.gz"), 2).unwrap(),
            None
        );
        assert_eq!(
            write_kept(
                &d,
                &inputs,
                &on,
                &Sink::create(std::path::Path::new("-"), 2).unwrap(),
                2
            )
            .unwrap(),
            None
        );
        // Noted and plain: this way.
        assert_eq!(
            write_kept(&d, &inputs, &on, &to("c.jsonl"), 2).unwrap(),
            Some(1)
        );
    }
}
