//! Files that outlive a run: outputs written atomically, saved sketches.
//!
//! * [`atomic`]: output files that are wholly written or not at all (and devices,
//!   FIFOs and symbolic links handled as users expect).
//! * `behind` (crate-private): the buffered writer behind them, whose buffers a thread of its own
//!   writes to the file.
//! * [`container`]: the one file format every saved file uses (magic, version, JSON
//!   header, records, CRC-32, end marker).
//! * [`sketches`]: saved sketch files for incremental runs.

pub mod atomic;
pub(crate) mod behind;
pub mod container;
pub mod sketches;

pub use atomic::AtomicFile;
