//! Compression by content: gzip, zstd, bzip2 or xz recognized by a file's first bytes,
//! never by its name, and the decoder that reads it.

use super::Input;
use crate::error::{Error, Result};
use std::fs::File;
use std::io::{BufReader, Read};
use std::path::Path;

/// Compression of a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Compression {
    /// None.
    None,
    /// gzip (multi-member allowed).
    Gzip,
    /// Zstandard.
    Zstd,
    /// bzip2 (multi-stream allowed).
    Bzip2,
    /// xz (multi-stream allowed).
    Xz,
}

/// gzip, zstd, bzip2 or xz by the file's first bytes (`1f 8b`, `28 b5 2f fd`, `BZh`,
/// `fd 37 7a 58 5a 00`), whatever its name;
/// `None` for anything else, a directory or an unreadable file (the error comes when it
/// is opened).
pub(super) fn sniff_compression(path: &Path) -> Compression {
    let mut head = [0u8; 6];
    let n = File::open(path)
        .and_then(|mut f| {
            let mut n = 0;
            while n < head.len() {
                match f.read(&mut head[n..])? {
                    0 => break,
                    k => n += k,
                }
            }
            Ok(n)
        })
        .unwrap_or(0);
    match &head[..n] {
        [0x1f, 0x8b, ..] => Compression::Gzip,
        [0x28, 0xb5, 0x2f, 0xfd, ..] => Compression::Zstd,
        [b'B', b'Z', b'h', ..] => Compression::Bzip2,
        [0xfd, b'7', b'z', b'X', b'Z', 0x00] => Compression::Xz,
        _ => Compression::None,
    }
}

/// `input`'s bytes, decompressed, behind a read buffer of 1 MiB.
pub(super) fn open_decoded(input: &Input) -> Result<BufReader<Box<dyn Read + Send>>> {
    let f = File::open(&input.path).map_err(|e| Error::io(&input.path, e))?;
    let r: Box<dyn Read + Send> = match input.compression {
        Compression::None => Box::new(f),
        Compression::Gzip => Box::new(flate2::read::MultiGzDecoder::new(BufReader::new(f))),
        Compression::Zstd => {
            Box::new(zstd::stream::read::Decoder::new(f).map_err(|e| Error::io(&input.path, e))?)
        }
        Compression::Bzip2 => Box::new(bzip2::read::MultiBzDecoder::new(BufReader::new(f))),
        Compression::Xz => Box::new(liblzma::read::XzDecoder::new_multi_decoder(BufReader::new(
            f,
        ))),
    };
    // Decompression runs on a thread of its own, a few blocks ahead of the reader
    // that splits records, so that the two overlap.
    let r: Box<dyn Read + Send> = match input.compression {
        Compression::None => r,
        _ => Box::new(Decompressing::spawn(r)),
    };
    Ok(BufReader::with_capacity(1 << 20, r))
}

impl Compression {
    /// The compression an output's name asks for: `.gz`, `.zst` / `.zstd`, `.bz2`, `.xz`
    /// (any case), else none.
    pub fn by_name(name: &str) -> Compression {
        let lower = name.to_ascii_lowercase();
        if lower.ends_with(".gz") {
            Compression::Gzip
        } else if lower.ends_with(".zst") || lower.ends_with(".zstd") {
            Compression::Zstd
        } else if lower.ends_with(".bz2") {
            Compression::Bzip2
        } else if lower.ends_with(".xz") {
            Compression::Xz
        } else {
            Compression::None
        }
    }
}

/// A writer that compresses what it is given ([`Encoder::new`],
/// [`Encoder::with_threads`]); [`Encoder::finish`] ends the stream and gives the inner
/// writer back. gzip and Zstandard are compressed on several threads, and their bytes
/// do not depend on how many: the same input gives the same file with 1 thread or 8.
pub enum Encoder<W: std::io::Write> {
    /// No compression.
    Plain(W),
    /// gzip, default level, in independent members ([`GzipMembers`]).
    Gzip(GzipMembers<W>),
    /// Zstandard, level 3, compressed by worker threads (zstd's multithreaded mode,
    /// whose output is the same for any number of workers).
    Zstd(zstd::stream::write::Encoder<'static, W>),
    /// bzip2, default level.
    Bzip2(bzip2::write::BzEncoder<W>),
    /// xz, level 6.
    Xz(liblzma::write::XzEncoder<W>),
}

impl<W: std::io::Write> Encoder<W> {
    /// Compresses into `w` with `c`, on one thread.
    pub fn new(c: Compression, w: W) -> std::io::Result<Self> {
        Self::with_threads(c, w, 1)
    }

    /// Compresses into `w` with `c`; gzip and Zstandard on `threads` threads (at least
    /// 1), with the same bytes whatever their number.
    pub fn with_threads(c: Compression, w: W, threads: usize) -> std::io::Result<Self> {
        let threads = threads.max(1);
        Ok(match c {
            Compression::None => Encoder::Plain(w),
            Compression::Gzip => Encoder::Gzip(GzipMembers::new(w, threads)),
            Compression::Zstd => {
                let mut e = zstd::stream::write::Encoder::new(w, 3)?;
                // One worker or more: zstd's multithreaded format, the same bytes for
                // any number of workers (0 would be its single-threaded one).
                e.multithread(u32::try_from(threads).unwrap_or(u32::MAX))?;
                Encoder::Zstd(e)
            }
            Compression::Bzip2 => Encoder::Bzip2(bzip2::write::BzEncoder::new(
                w,
                bzip2::Compression::default(),
            )),
            Compression::Xz => Encoder::Xz(liblzma::write::XzEncoder::new(w, 6)),
        })
    }

    /// Ends the compressed stream; returns the inner writer.
    pub fn finish(self) -> std::io::Result<W> {
        match self {
            Encoder::Plain(w) => Ok(w),
            Encoder::Gzip(e) => e.finish(),
            Encoder::Zstd(e) => e.finish(),
            Encoder::Bzip2(e) => e.finish(),
            Encoder::Xz(e) => e.finish(),
        }
    }
}

impl<W: std::io::Write> std::io::Write for Encoder<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        match self {
            Encoder::Plain(w) => w.write(buf),
            Encoder::Gzip(e) => e.write(buf),
            Encoder::Zstd(e) => e.write(buf),
            Encoder::Bzip2(e) => e.write(buf),
            Encoder::Xz(e) => e.write(buf),
        }
    }

    fn flush(&mut self) -> std::io::Result<()> {
        match self {
            Encoder::Plain(w) => w.flush(),
            Encoder::Gzip(e) => e.flush(),
            Encoder::Zstd(e) => e.flush(),
            Encoder::Bzip2(e) => e.flush(),
            Encoder::Xz(e) => e.flush(),
        }
    }
}

/// Bytes of a reader decoded on a thread of its own, in blocks sent ahead through a
/// bounded channel (so memory stays at a few blocks); an error ends the stream with
/// that error, in its place.
struct Decompressing {
    rx: std::sync::mpsc::Receiver<std::io::Result<Vec<u8>>>,
    block: Vec<u8>,
    at: usize,
}

impl Decompressing {
    /// Bytes per block.
    const BLOCK: usize = 1 << 20;
    /// Blocks decoded ahead.
    const AHEAD: usize = 4;

    fn spawn(mut r: Box<dyn Read + Send>) -> Self {
        let (tx, rx) = std::sync::mpsc::sync_channel(Self::AHEAD);
        std::thread::spawn(move || loop {
            let mut block = vec![0u8; Self::BLOCK];
            let mut n = 0;
            let result = loop {
                match r.read(&mut block[n..]) {
                    Ok(0) => break Ok(true),
                    Ok(k) => {
                        n += k;
                        if n == block.len() {
                            break Ok(false);
                        }
                    }
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                    Err(e) => break Err(e),
                }
            };
            block.truncate(n);
            // A reader that stopped listening (the input was abandoned) ends the thread.
            if n > 0 && tx.send(Ok(block)).is_err() {
                return;
            }
            match result {
                Ok(false) => {}
                Ok(true) => return,
                Err(e) => {
                    let _ = tx.send(Err(e));
                    return;
                }
            }
        });
        Decompressing {
            rx,
            block: Vec::new(),
            at: 0,
        }
    }
}

impl Read for Decompressing {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        while self.at == self.block.len() {
            match self.rx.recv() {
                Ok(Ok(b)) => {
                    self.block = b;
                    self.at = 0;
                }
                Ok(Err(e)) => return Err(e),
                // The thread is done: the end of the stream.
                Err(_) => return Ok(0),
            }
        }
        let n = buf.len().min(self.block.len() - self.at);
        buf[..n].copy_from_slice(&self.block[self.at..self.at + n]);
        self.at += n;
        Ok(n)
    }
}

/// Input bytes per gzip member of [`GzipMembers`].
pub const GZIP_MEMBER_BYTES: usize = 4 << 20;

/// One gzip member of `input`, default level.
fn gzip_member(input: &[u8]) -> std::io::Result<Vec<u8>> {
    use std::io::Write;
    let mut e = flate2::write::GzEncoder::new(
        Vec::with_capacity(input.len() / 3 + 64),
        flate2::Compression::default(),
    );
    e.write_all(input)?;
    e.finish()
}

/// Starts compressing `input` into a gzip member on a thread of its own; an error when
/// the system cannot start one.
fn spawn_member(
    input: Vec<u8>,
) -> std::io::Result<std::thread::JoinHandle<std::io::Result<Vec<u8>>>> {
    std::thread::Builder::new()
        .name("gzip member".into())
        .spawn(move || gzip_member(&input))
}

/// gzip written as independent members of [`GZIP_MEMBER_BYTES`] of input each (the last
/// one shorter), compressed on up to `threads` threads beside the writer's, which goes on
/// filling the next one: a multi-member gzip file, which gzip, zcat, Python's `gzip`
/// and this crate's readers read as one stream (as they read pigz's or bgzip's).
/// Members start at fixed offsets of the input and are written in order, so the file's
/// bytes do not depend on the number of threads or on how the writes were cut. Each
/// member starts without the previous one's 32 KiB window: a file is about 0.1 %
/// bigger than one member would be. An empty input is one empty member. Memory: the
/// member being filled and up to `threads` being compressed, 4 MiB of input each.
pub struct GzipMembers<W: std::io::Write> {
    inner: W,
    /// The member being filled.
    block: Vec<u8>,
    /// Members being compressed, oldest first, each on a thread of its own.
    pending: std::collections::VecDeque<std::thread::JoinHandle<std::io::Result<Vec<u8>>>>,
    threads: usize,
    /// Whether any member was written.
    wrote: bool,
}

impl<W: std::io::Write> GzipMembers<W> {
    /// Compresses into `w` on `threads` threads (at least 1).
    pub fn new(w: W, threads: usize) -> Self {
        GzipMembers {
            inner: w,
            block: Vec::new(),
            pending: std::collections::VecDeque::new(),
            threads: threads.max(1),
            wrote: false,
        }
    }

    /// Starts compressing the member `input` on a thread of its own, after waiting for
    /// (and writing) the oldest when `threads` are at work.
    fn start(&mut self, input: Vec<u8>) -> std::io::Result<()> {
        while self.pending.len() >= self.threads {
            self.write_oldest()?;
        }
        self.pending.push_back(spawn_member(input)?);
        Ok(())
    }

    /// Waits for the oldest member being compressed and writes it.
    fn write_oldest(&mut self) -> std::io::Result<()> {
        if let Some(h) = self.pending.pop_front() {
            let m = h.join().unwrap_or_else(|p| std::panic::resume_unwind(p))?;
            self.inner.write_all(&m)?;
            self.wrote = true;
        }
        Ok(())
    }

    /// Writes every member started, in order.
    fn write_pending(&mut self) -> std::io::Result<()> {
        while !self.pending.is_empty() {
            self.write_oldest()?;
        }
        Ok(())
    }

    /// Writes what is left (the last member) and gives the inner writer back.
    pub fn finish(mut self) -> std::io::Result<W> {
        if !self.block.is_empty() || !self.wrote && self.pending.is_empty() {
            let last = std::mem::take(&mut self.block);
            self.start(last)?;
        }
        self.write_pending()?;
        self.inner.flush()?;
        Ok(self.inner)
    }
}

impl<W: std::io::Write> std::io::Write for GzipMembers<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if self.block.capacity() == 0 {
            self.block.reserve_exact(GZIP_MEMBER_BYTES);
        }
        let n = buf.len().min(GZIP_MEMBER_BYTES - self.block.len());
        self.block.extend_from_slice(&buf[..n]);
        if self.block.len() == GZIP_MEMBER_BYTES {
            let full = std::mem::take(&mut self.block);
            self.start(full)?;
        }
        Ok(n)
    }

    /// Writes the members filled so far; the one being filled waits for more input (or
    /// [`finish`](GzipMembers::finish)), so that members keep their fixed offsets.
    fn flush(&mut self) -> std::io::Result<()> {
        self.write_pending()?;
        self.inner.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::{Compression, Encoder, GZIP_MEMBER_BYTES};
    use std::io::{Read, Write};

    /// A borrowed writer works too: the members' threads take only their input.
    #[test]
    fn gzip_into_a_borrowed_writer() {
        let data = text(2 * GZIP_MEMBER_BYTES + 5);
        let mut out = Vec::new();
        let mut e = Encoder::with_threads(Compression::Gzip, &mut out, 2).unwrap();
        e.write_all(&data).unwrap();
        e.finish().unwrap();
        let mut back = Vec::new();
        flate2::read::MultiGzDecoder::new(&out[..])
            .read_to_end(&mut back)
            .unwrap();
        assert!(back == data);
    }

    /// `data` written through the encoder in pieces of `piece` bytes.
    fn encode(c: Compression, data: &[u8], threads: usize, piece: usize) -> Vec<u8> {
        let mut e = Encoder::with_threads(c, Vec::new(), threads).unwrap();
        for p in data.chunks(piece.max(1)) {
            e.write_all(p).unwrap();
        }
        e.finish().unwrap()
    }

    /// Text that compresses like text, of `n` bytes.
    fn text(n: usize) -> Vec<u8> {
        let mut x = 1u64;
        let mut out = Vec::with_capacity(n);
        while out.len() < n {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let word = [
                "the",
                "near",
                "duplicate",
                "page",
                "of",
                "a",
                "crawl",
                "shingle",
            ][(x >> 61) as usize];
            out.extend_from_slice(word.as_bytes());
            out.push(if (x >> 20).is_multiple_of(13) {
                b'\n'
            } else {
                b' '
            });
        }
        out.truncate(n);
        out
    }

    #[test]
    fn compressed_outputs_are_the_same_for_any_threads_and_read_back_whole() {
        // Sizes around the member size: empty, short, one member exactly, a member and
        // a byte, several members; written whole and in odd pieces.
        for n in [
            0,
            1000,
            GZIP_MEMBER_BYTES,
            GZIP_MEMBER_BYTES + 1,
            3 * GZIP_MEMBER_BYTES + 12345,
        ] {
            let data = text(n);
            for c in [Compression::Gzip, Compression::Zstd] {
                let one = encode(c, &data, 1, usize::MAX);
                for (threads, piece) in [(1, 7777), (2, usize::MAX), (3, 1 << 20), (8, 65536)] {
                    assert_eq!(
                        encode(c, &data, threads, piece),
                        one,
                        "{c:?}, {n} bytes, {threads} threads, pieces of {piece}"
                    );
                }
                let mut back = Vec::new();
                match c {
                    Compression::Gzip => {
                        flate2::read::MultiGzDecoder::new(&one[..])
                            .read_to_end(&mut back)
                            .unwrap();
                    }
                    _ => {
                        zstd::stream::read::Decoder::new(&one[..])
                            .unwrap()
                            .read_to_end(&mut back)
                            .unwrap();
                    }
                }
                assert!(back == data, "{c:?}, {n} bytes: read back differs");
            }
        }
    }

    #[test]
    fn gzip_members_start_at_fixed_offsets() {
        // Each member, decoded alone, is the next GZIP_MEMBER_BYTES of the input.
        let data = text(2 * GZIP_MEMBER_BYTES + 100);
        let out = encode(Compression::Gzip, &data, 2, 12345);
        let mut rest = &out[..];
        let mut members = Vec::new();
        while !rest.is_empty() {
            let mut d = flate2::bufread::GzDecoder::new(rest);
            let mut m = Vec::new();
            d.read_to_end(&mut m).unwrap();
            rest = d.into_inner();
            members.push(m.len());
        }
        assert_eq!(members, [GZIP_MEMBER_BYTES, GZIP_MEMBER_BYTES, 100]);
    }
}
