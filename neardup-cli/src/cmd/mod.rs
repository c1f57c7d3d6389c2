//! One module per subcommand.

pub mod dedup;
pub mod eval;
pub mod index;
pub mod pair;
pub mod presets;
pub mod report;
pub mod serve;
pub mod sketch;
pub mod stream;
pub mod synth;
