//! What the readers produced, counted by the readers themselves: the reference of every
//! run's accounting.

/// What a [`Reader`](super::Reader) produced, counted by the reader itself as it yields records
/// (rejections included), independently of what is later done with them: the reference
/// a run's outputs are checked against ([`crate::pipeline::Dedup::reconcile`]). Cheap to
/// clone; clones share the counts, so the counter can be kept while the reader moves
/// to another thread.
#[derive(Debug, Clone)]
pub struct ReadCounter(std::sync::Arc<Vec<[std::sync::atomic::AtomicU64; 2]>>);

impl ReadCounter {
    pub(super) fn new(inputs: usize) -> Self {
        ReadCounter(std::sync::Arc::new(
            (0..inputs.max(1)).map(|_| Default::default()).collect(),
        ))
    }

    pub(super) fn count(&self, input: usize, bytes: u64) {
        use std::sync::atomic::Ordering::Relaxed;
        if let Some(c) = self.0.get(input) {
            c[0].fetch_add(1, Relaxed);
            c[1].fetch_add(bytes, Relaxed);
        }
    }

    /// Records yielded so far, per input: `(records, bytes)` (bytes of the JSONL line,
    /// or of the document body for WARC and directory records).
    pub fn per_input(&self) -> Vec<(u64, u64)> {
        use std::sync::atomic::Ordering::Relaxed;
        self.0
            .iter()
            .map(|c| (c[0].load(Relaxed), c[1].load(Relaxed)))
            .collect()
    }

    /// Records yielded so far, over all inputs.
    pub fn records(&self) -> u64 {
        self.per_input().iter().map(|c| c.0).sum()
    }
}
