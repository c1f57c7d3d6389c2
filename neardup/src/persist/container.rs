//! The one container format of every saved file (sketch files, simhash indexes).
//!
//! All integers little-endian:
//!
//! ```text
//! magic        8 bytes  the file kind ("NDSKETCH", "NDSIMIDX")
//! version      u32      the kind's format version
//! header_len   u32      length of the JSON header below
//! header       bytes    JSON: the settings the records are valid under
//! count        u64      number of records
//! records      bytes    the kind's records
//! crc32        u32      CRC-32 (IEEE) of every byte above
//! end magic    8 bytes  the kind's end marker ("NDSKEND1", "NDSIEND1")
//! ```
//!
//! `write` writes atomically ([`AtomicFile`]); `read` checks magic, end marker,
//! checksum and version before anything is parsed, and `Cursor` reads the records with
//! a bounds check on every field, so a damaged, truncated, foreign or outdated file is
//! an [`Error::Corrupt`] naming what is wrong — never a panic, never wrong values.

use crate::error::{Error, Result};
use crate::persist::AtomicFile;
use std::io::Write;
use std::path::{Path, PathBuf};

/// A kind of saved file.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Kind {
    /// What it is called in error messages.
    pub name: &'static str,
    /// Magic bytes at the start.
    pub magic: &'static [u8; 8],
    /// Marker at the end.
    pub end: &'static [u8; 8],
    /// The version this build writes.
    pub version: u32,
    /// Older versions this build still reads (the parser sees [`Parts::version`]).
    pub readable: &'static [u32],
    /// Why each older version is refused (index = version); empty: never written.
    pub refused: &'static [&'static str],
}

/// The parts of a checked file.
pub(crate) struct Parts<'a> {
    /// The file's format version: [`Kind::version`] or one of [`Kind::readable`].
    pub version: u32,
    /// The JSON header.
    pub header: &'a [u8],
    /// The record count.
    pub count: u64,
    /// The records.
    pub records: Cursor<'a>,
}

/// The placeholder path of errors about bytes not read from a file.
pub(crate) fn bytes_path() -> PathBuf {
    PathBuf::from("(bytes)")
}

fn corrupt(reason: impl Into<String>) -> Error {
    Error::Corrupt {
        path: bytes_path(),
        reason: reason.into(),
    }
}

/// Writes a file of `kind` atomically: header, `count`, then `records` (called with a
/// sink that also feeds the checksum).
pub(crate) fn write(
    path: &Path,
    kind: &Kind,
    header: &[u8],
    count: u64,
    records: impl FnOnce(&mut dyn FnMut(&[u8]) -> Result<()>) -> Result<()>,
) -> Result<()> {
    let mut f = AtomicFile::create(path)?;
    let mut crc = crc32fast::Hasher::new();
    {
        let mut put = |bytes: &[u8]| -> Result<()> {
            crc.update(bytes);
            f.write_all(bytes).map_err(|e| Error::io(path, e))
        };
        put(kind.magic)?;
        put(&kind.version.to_le_bytes())?;
        put(&(header.len() as u32).to_le_bytes())?;
        put(header)?;
        put(&count.to_le_bytes())?;
        records(&mut put)?;
    }
    f.write_all(&crc.finalize().to_le_bytes())
        .map_err(|e| Error::io(path, e))?;
    f.write_all(kind.end).map_err(|e| Error::io(path, e))?;
    f.commit()
}

/// Checks the bytes of a file of `kind` and splits them into their parts.
pub(crate) fn read<'a>(data: &'a [u8], kind: &Kind) -> Result<Parts<'a>> {
    if data.len() < 8 || &data[..8] != kind.magic {
        return Err(corrupt(format!("not a neardup {} (bad magic)", kind.name)));
    }
    if data.len() < 8 + 4 + 4 + 8 + 12 {
        return Err(corrupt(format!("truncated: {} bytes", data.len())));
    }
    if &data[data.len() - 8..] != kind.end {
        return Err(corrupt("truncated or damaged: end marker missing"));
    }
    let body_end = data.len() - 12;
    let mut sum = [0u8; 4];
    sum.copy_from_slice(&data[body_end..body_end + 4]);
    if crc32fast::hash(&data[..body_end]) != u32::from_le_bytes(sum) {
        return Err(corrupt("checksum mismatch: the file is damaged"));
    }
    let mut r = Cursor {
        data: &data[..body_end],
        at: 8,
    };
    let version = r.u32()?;
    if version != kind.version && !kind.readable.contains(&version) {
        let why = kind
            .refused
            .get(version as usize)
            .filter(|s| !s.is_empty())
            .map(|s| format!(": {s}"))
            .unwrap_or_default();
        return Err(corrupt(format!(
            "unsupported {} format version {version} (this build reads version {}){why}",
            kind.name, kind.version
        )));
    }
    let hlen = r.u32()? as usize;
    let header = r.bytes(hlen)?;
    let count = r.u64()?;
    Ok(Parts {
        version,
        header,
        count,
        records: r,
    })
}

/// Reads a file and checks it with `parse`; errors name the file.
///
/// A regular file is mapped for the parse rather than read into memory: a deduper's
/// snapshot at 10 M documents is 1.6 GB, and reading it copied every byte into memory
/// the system had to hand over and clear first (a third of `open`'s time, with the
/// copy another fifth). As for inputs ([`crate::io::Mapped`]), the file must not be
/// truncated while it is parsed; neardup itself only ever replaces these files whole
/// (a new file renamed over the old one, whose mapping stays intact). An empty or
/// special file is read.
pub(crate) fn load<T>(path: &Path, parse: impl FnOnce(&[u8]) -> Result<T>) -> Result<T> {
    let mapped = crate::io::Mapped::open(path)?;
    let read;
    let data: &[u8] = match &mapped {
        Some(m) => m,
        None => {
            read = std::fs::read(path).map_err(|e| Error::io(path, e))?;
            &read
        }
    };
    parse(data).map_err(|e| match e {
        Error::Corrupt { reason, .. } => Error::Corrupt {
            path: path.to_path_buf(),
            reason,
        },
        other => other,
    })
}

/// Bounds-checked reading of little-endian fields.
pub(crate) struct Cursor<'a> {
    data: &'a [u8],
    at: usize,
}

impl<'a> Cursor<'a> {
    /// A cursor over `data` from its start.
    pub fn new(data: &'a [u8]) -> Cursor<'a> {
        Cursor { data, at: 0 }
    }

    /// Bytes left.
    pub fn remaining(&self) -> usize {
        self.data.len() - self.at
    }
    /// The next `n` bytes.
    pub fn bytes(&mut self, n: usize) -> Result<&'a [u8]> {
        if n > self.remaining() {
            return Err(corrupt(format!("truncated at byte {}", self.at)));
        }
        let b = &self.data[self.at..self.at + n];
        self.at += n;
        Ok(b)
    }
    fn array<const N: usize>(&mut self) -> Result<[u8; N]> {
        let mut a = [0u8; N];
        a.copy_from_slice(self.bytes(N)?);
        Ok(a)
    }
    /// A `u32`.
    pub fn u32(&mut self) -> Result<u32> {
        Ok(u32::from_le_bytes(self.array()?))
    }
    /// A `u64`.
    pub fn u64(&mut self) -> Result<u64> {
        Ok(u64::from_le_bytes(self.array()?))
    }
    /// A `u128`.
    pub fn u128(&mut self) -> Result<u128> {
        Ok(u128::from_le_bytes(self.array()?))
    }
    /// An error about the data at the current position.
    pub fn error(&self, reason: impl Into<String>) -> Error {
        corrupt(reason)
    }
}
