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

/// A writer that compresses what it is given ([`Encoder::new`]); [`Encoder::finish`]
/// ends the stream and gives the inner writer back.
pub enum Encoder<W: std::io::Write> {
    /// No compression.
    Plain(W),
    /// gzip, default level.
    Gzip(flate2::write::GzEncoder<W>),
    /// Zstandard, level 3.
    Zstd(zstd::stream::write::Encoder<'static, W>),
    /// bzip2, default level.
    Bzip2(bzip2::write::BzEncoder<W>),
    /// xz, level 6.
    Xz(liblzma::write::XzEncoder<W>),
}

impl<W: std::io::Write> Encoder<W> {
    /// Compresses into `w` with `c`.
    pub fn new(c: Compression, w: W) -> std::io::Result<Self> {
        Ok(match c {
            Compression::None => Encoder::Plain(w),
            Compression::Gzip => Encoder::Gzip(flate2::write::GzEncoder::new(
                w,
                flate2::Compression::default(),
            )),
            Compression::Zstd => Encoder::Zstd(zstd::stream::write::Encoder::new(w, 3)?),
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
