//! The saved index: the design and the `(id, fingerprint)` entries in the shared
//! container format (tables are rebuilt on load).

use super::{Design, SimhashIndex};
use crate::error::{Error, Result};
use crate::persist::container::{self, Kind, Parts};
use std::path::Path;

impl SimhashIndex {
    /// Writes the index atomically: magic `NDSIMIDX`, version 1, the design as JSON,
    /// the `(id, fingerprint)` pairs, CRC-32, end magic. Tables are rebuilt on load.
    pub fn save(&self, path: &Path) -> Result<()> {
        let entries = self.entries();
        let design = serde_json::to_vec(&self.design).map_err(|e| Error::Config(e.to_string()))?;
        container::write(path, &INDEX_KIND, &design, entries.len() as u64, |put| {
            let mut buf = Vec::with_capacity(16 * 4096);
            for chunk in entries.chunks(4096) {
                buf.clear();
                for (id, fp) in chunk {
                    buf.extend_from_slice(&id.to_le_bytes());
                    buf.extend_from_slice(&fp.to_le_bytes());
                }
                put(&buf)?;
            }
            Ok(())
        })
    }

    /// Loads a saved index; a damaged, truncated or foreign file is [`Error::Corrupt`].
    pub fn load(path: &Path) -> Result<SimhashIndex> {
        container::load(path, Self::from_bytes)
    }

    /// Parses the bytes of a saved index; a damaged, truncated or foreign one is
    /// [`Error::Corrupt`] (with the path `(bytes)`).
    pub fn from_bytes(data: &[u8]) -> Result<SimhashIndex> {
        let Parts {
            header,
            count,
            version: _,
            records: mut r,
        } = container::read(data, &INDEX_KIND)?;
        let design: Design =
            serde_json::from_slice(header).map_err(|e| r.error(format!("bad design: {e}")))?;
        design
            .validate()
            .map_err(|e| r.error(format!("bad design: {e}")))?;
        let rest = r.remaining();
        if count.checked_mul(16) != Some(rest as u64) {
            return Err(r.error(format!(
                "{count} entries do not match the {rest} bytes present"
            )));
        }
        let mut entries = Vec::with_capacity(count as usize);
        for _ in 0..count {
            entries.push((r.u64()?, r.u64()?));
        }
        let idx = SimhashIndex::new(design)?;
        idx.extend(entries);
        Ok(idx)
    }
}

/// Magic bytes of a saved index.
pub const INDEX_MAGIC: &[u8; 8] = b"NDSIMIDX";
/// End magic of a saved index.
pub const INDEX_END: &[u8; 8] = b"NDSIEND1";
/// Saved index format version.
pub const INDEX_VERSION: u32 = 1;

const INDEX_KIND: Kind = Kind {
    name: "simhash index",
    magic: INDEX_MAGIC,
    end: INDEX_END,
    version: INDEX_VERSION,
    readable: &[],
    refused: &[],
};
