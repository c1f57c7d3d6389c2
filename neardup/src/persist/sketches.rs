//! Saved sketches: write the sketches of a snapshot once, dedup later snapshots against
//! them without re-reading the old records.
//!
//! # File format (version 1)
//!
//! All integers little-endian.
//!
//! ```text
//! magic        8 bytes  "NDSKETCH"
//! version      u32      1
//! config_len   u32      length of the JSON below
//! config       bytes    the SketchConfig as JSON (sketches are comparable only under it)
//! count        u64      number of records
//! records      count ×  { id_len u32, id bytes (UTF-8),
//!                         supershingles m' × u64, charikar b/64 × u64,
//!                         simhash u64, exact u128, terms u32,
//!                         pugh R·L × u64 (only when the settings have Pugh checksums) }
//! crc32        u32      CRC-32 (IEEE) of every byte above
//! end magic    8 bytes  "NDSKEND1"
//! ```
//!
//! Files are written atomically (temporary file, fsync, rename). Loading checks magic,
//! version, lengths and the checksum before using anything, and reports a damaged,
//! truncated or foreign file as [`Error::Corrupt`] — never a panic, never wrong sketches.

use crate::error::{Error, Result};
use crate::persist::AtomicFile;
use crate::sketch::{Sketch, SketchConfig, Sketches};
use std::io::Write;
use std::path::Path;

/// Magic bytes at the start of a sketch file.
pub const MAGIC: &[u8; 8] = b"NDSKETCH";
/// Magic bytes at the end of a sketch file.
pub const END_MAGIC: &[u8; 8] = b"NDSKEND1";
/// The format version written.
pub const VERSION: u32 = 1;

/// Sketches of a snapshot with their ids and settings.
#[derive(Debug, Clone)]
pub struct SavedSketches {
    /// The settings the sketches were made with.
    pub config: SketchConfig,
    /// Record ids, by position.
    pub ids: Vec<String>,
    /// The sketches, by position.
    pub sketches: Sketches,
}

impl SavedSketches {
    /// Number of records.
    pub fn len(&self) -> usize {
        self.ids.len()
    }

    /// True when empty.
    pub fn is_empty(&self) -> bool {
        self.ids.is_empty()
    }

    /// Writes the file atomically.
    pub fn save(&self, path: &Path) -> Result<()> {
        let mut f = AtomicFile::create(path)?;
        let mut crc = crc32fast::Hasher::new();
        let mut put = |f: &mut AtomicFile, bytes: &[u8]| -> Result<()> {
            crc.update(bytes);
            f.write_all(bytes).map_err(|e| Error::io(path, e))
        };
        let config = serde_json::to_vec(&self.config).map_err(|e| Error::Config(e.to_string()))?;
        put(&mut f, MAGIC)?;
        put(&mut f, &VERSION.to_le_bytes())?;
        put(&mut f, &(config.len() as u32).to_le_bytes())?;
        put(&mut f, &config)?;
        put(&mut f, &(self.ids.len() as u64).to_le_bytes())?;
        let mut buf = Vec::with_capacity(256);
        for (i, id) in self.ids.iter().enumerate() {
            let s = self.sketches.get(i);
            buf.clear();
            buf.extend_from_slice(&(id.len() as u32).to_le_bytes());
            buf.extend_from_slice(id.as_bytes());
            for v in s.supershingles.iter().chain(s.charikar) {
                buf.extend_from_slice(&v.to_le_bytes());
            }
            buf.extend_from_slice(&s.simhash.to_le_bytes());
            buf.extend_from_slice(&s.exact.to_le_bytes());
            buf.extend_from_slice(&s.terms.to_le_bytes());
            for v in s.pugh {
                buf.extend_from_slice(&v.to_le_bytes());
            }
            put(&mut f, &buf)?;
        }
        let sum = crc.finalize();
        f.write_all(&sum.to_le_bytes())
            .map_err(|e| Error::io(path, e))?;
        f.write_all(END_MAGIC).map_err(|e| Error::io(path, e))?;
        f.commit()
    }

    /// Loads and checks a file.
    pub fn load(path: &Path) -> Result<SavedSketches> {
        let data = std::fs::read(path).map_err(|e| Error::io(path, e))?;
        Self::from_bytes(&data).map_err(|reason| Error::Corrupt {
            path: path.to_path_buf(),
            reason,
        })
    }

    /// Parses the bytes of a file; the error says what is wrong.
    pub fn from_bytes(data: &[u8]) -> std::result::Result<SavedSketches, String> {
        if data.len() < 8 || &data[..8] != MAGIC {
            return Err("not a neardup sketch file (bad magic)".into());
        }
        if data.len() < 8 + 4 + 4 + 8 + 12 {
            return Err(format!("truncated: {} bytes", data.len()));
        }
        let body_end = data.len() - 12;
        if &data[data.len() - 8..] != END_MAGIC {
            return Err("truncated or damaged: end marker missing".into());
        }
        let stored = u32::from_le_bytes(
            data[body_end..body_end + 4]
                .try_into()
                .map_err(|_| "short checksum")?,
        );
        if crc32fast::hash(&data[..body_end]) != stored {
            return Err("checksum mismatch: the file is damaged".into());
        }
        let mut r = Cursor {
            data: &data[..body_end],
            at: 8,
        };
        let version = r.u32()?;
        if version != VERSION {
            return Err(format!(
                "unsupported format version {version} (this build reads {VERSION})"
            ));
        }
        let clen = r.u32()? as usize;
        let config: SketchConfig =
            serde_json::from_slice(r.bytes(clen)?).map_err(|e| format!("bad settings: {e}"))?;
        config
            .validate()
            .map_err(|e| format!("bad settings: {e}"))?;
        let count = r.u64()?;
        let ss = config.supershingles;
        let words = config.charikar_bits / 64;
        let pw = config.pugh.map_or(0, |p| p.width());
        let min_record = 4 + 8 * (ss + words + 1) + 16 + 4 + 8 * pw;
        if count > (r.remaining() / min_record) as u64 {
            return Err(format!("record count {count} does not fit the file"));
        }
        let mut ids = Vec::with_capacity(count as usize);
        let mut sketches = Sketches::new(&config);
        for i in 0..count {
            let idlen = r.u32()? as usize;
            let id = std::str::from_utf8(r.bytes(idlen)?)
                .map_err(|_| format!("record {i}: id is not UTF-8"))?
                .to_string();
            let mut vals = Vec::with_capacity(ss + words);
            for _ in 0..ss + words {
                vals.push(r.u64()?);
            }
            let simhash = r.u64()?;
            let exact = u128::from_le_bytes(r.bytes(16)?.try_into().map_err(|_| "short record")?);
            let terms = r.u32()?;
            let mut pugh = Vec::with_capacity(pw);
            for _ in 0..pw {
                pugh.push(r.u64()?);
            }
            let charikar = vals.split_off(ss);
            sketches.push(&Sketch {
                supershingles: vals,
                charikar,
                simhash,
                exact,
                terms,
                pugh,
            });
            ids.push(id);
        }
        if r.remaining() != 0 {
            return Err(format!(
                "{} unexpected bytes after the records",
                r.remaining()
            ));
        }
        Ok(SavedSketches {
            config,
            ids,
            sketches,
        })
    }
}

struct Cursor<'a> {
    data: &'a [u8],
    at: usize,
}

impl<'a> Cursor<'a> {
    fn remaining(&self) -> usize {
        self.data.len() - self.at
    }
    fn bytes(&mut self, n: usize) -> std::result::Result<&'a [u8], String> {
        if n > self.remaining() {
            return Err(format!("truncated at byte {}", self.at));
        }
        let b = &self.data[self.at..self.at + n];
        self.at += n;
        Ok(b)
    }
    fn u32(&mut self) -> std::result::Result<u32, String> {
        Ok(u32::from_le_bytes(
            self.bytes(4)?.try_into().map_err(|_| "short")?,
        ))
    }
    fn u64(&mut self) -> std::result::Result<u64, String> {
        Ok(u64::from_le_bytes(
            self.bytes(8)?.try_into().map_err(|_| "short")?,
        ))
    }
}
