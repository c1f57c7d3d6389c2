//! Compression by content: gzip or zstd recognized by a file's first bytes, never by
//! its name, and the decoder that reads it.

use super::Input;
use crate::error::{Error, Result};
use std::fs::File;
use std::io::{BufRead, BufReader, Read};
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
}

/// gzip or zstd by the file's first bytes (`1f 8b`, `28 b5 2f fd`), whatever its name;
/// `None` for anything else, a directory or an unreadable file (the error comes when it
/// is opened).
pub(super) fn sniff_compression(path: &Path) -> Compression {
    let mut head = [0u8; 4];
    let n = File::open(path)
        .and_then(|mut f| {
            let mut n = 0;
            while n < 4 {
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
        [0x28, 0xb5, 0x2f, 0xfd] => Compression::Zstd,
        _ => Compression::None,
    }
}

pub(super) fn open_decoded(input: &Input) -> Result<Box<dyn BufRead + Send>> {
    let f = File::open(&input.path).map_err(|e| Error::io(&input.path, e))?;
    let r: Box<dyn Read + Send> = match input.compression {
        Compression::None => Box::new(f),
        Compression::Gzip => Box::new(flate2::read::MultiGzDecoder::new(BufReader::new(f))),
        Compression::Zstd => {
            Box::new(zstd::stream::read::Decoder::new(f).map_err(|e| Error::io(&input.path, e))?)
        }
    };
    Ok(Box::new(BufReader::with_capacity(1 << 20, r)))
}
