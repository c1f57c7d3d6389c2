//! Files that outlive a run: outputs written atomically, saved sketches.
//!
//! * [`atomic`]: output files that are wholly written or not at all (and devices,
//!   FIFOs and symbolic links handled as users expect).
//! * [`sketches`]: saved sketch files for incremental runs.

pub mod atomic;
pub mod sketches;

pub use atomic::AtomicFile;
