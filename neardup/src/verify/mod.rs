//! Stage two and the verdict: is a pair a near-duplicate?
//!
//! * [`rule`]: the [`Rule`] — the one place that decides, for a pair of sketches and
//!   the class of the pair, whether it is a near-duplicate under a configuration
//!   (stage one's candidate definition, the filter per class, the high-recall union).
//! * [`filter`]: the [`PairFilter`] extension point and its verifiers of one pair
//!   (Charikar agreement, shared supershingles, simhash distance).
//! * [`site`]: sites of pages and classes of pairs (same / cross / unknown site).

pub mod filter;
pub mod rule;
pub mod site;

pub use filter::PairFilter;
pub use rule::{Judgement, Rule, Strategy};
pub use site::{site_of, PairClass, SiteMode, SiteRule};
