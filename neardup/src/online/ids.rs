//! The stored documents' ids, back to back in one string: 4 bytes per id beside its
//! text (where it ends, as a 32-bit offset from the start of its segment; a new segment
//! starts whenever the text outgrows 32 bits from the last one), instead of a string
//! and its allocation each.

/// See the module docs.
#[derive(Debug, Clone)]
pub(super) struct Ids {
    text: String,
    /// Where each id ends, from its segment's base.
    ends: Vec<u32>,
    /// Segments: the first slot and the base offset (`(0, 0)` first).
    segments: Vec<(u32, u64)>,
    /// The most bytes a segment spans (`u32::MAX`; smaller in tests).
    span: u64,
}

impl Default for Ids {
    fn default() -> Self {
        Ids::with_span(u32::MAX as u64)
    }
}

impl Ids {
    fn with_span(span: u64) -> Self {
        Ids {
            text: String::new(),
            ends: Vec::new(),
            segments: vec![(0, 0)],
            span,
        }
    }

    /// Ids stored (slots).
    pub(super) fn len(&self) -> usize {
        self.ends.len()
    }

    /// Makes room for `n` more ids.
    pub(super) fn reserve(&mut self, n: usize) {
        self.ends.reserve(n);
    }

    /// Bytes held (at capacity).
    pub(super) fn bytes(&self) -> usize {
        self.text.capacity() + 4 * self.ends.capacity() + 12 * self.segments.capacity()
    }

    /// The longest id [`push`](Self::push) takes.
    pub(super) fn max_len(&self) -> usize {
        self.span as usize
    }

    /// Appends the id of the next slot (at most [`max_len`](Self::max_len) bytes).
    pub(super) fn push(&mut self, id: &str) {
        let slot = self.ends.len() as u32;
        let mut base = self.segments.last().map_or(0, |s| s.1);
        if (self.text.len() + id.len()) as u64 - base > self.span {
            base = self.text.len() as u64;
            self.segments.push((slot, base));
        }
        self.text.push_str(id);
        self.ends.push((self.text.len() as u64 - base) as u32);
    }

    /// Where the id of `slot` ends in the text.
    #[inline]
    fn end(&self, slot: usize) -> usize {
        let base = if self.segments.len() == 1 {
            0
        } else {
            let i = self.segments.partition_point(|s| s.0 as usize <= slot);
            self.segments[i - 1].1
        };
        (base + self.ends[slot] as u64) as usize
    }

    /// The id of `slot`.
    #[inline]
    pub(super) fn get(&self, slot: u32) -> &str {
        let s = slot as usize;
        let start = if s == 0 { 0 } else { self.end(s - 1) };
        &self.text[start..self.end(s)]
    }

    /// Starts loading the first bytes of the id of `slot` (a hint, no effect on
    /// results; its end is read now).
    #[inline]
    pub(super) fn prefetch(&self, slot: u32) {
        let s = slot as usize;
        if s < self.len() {
            let start = if s == 0 { 0 } else { self.end(s - 1) };
            super::table::prefetch_bytes(&self.text.as_bytes()[start..]);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Ids;

    /// Ids read back as pushed, across many segments (a span of 20 bytes) and with the
    /// real span.
    #[test]
    fn ids_read_back_across_segments() {
        for span in [20u64, u32::MAX as u64] {
            let mut ids = Ids::with_span(span);
            let mut want = Vec::new();
            for i in 0..5000u32 {
                let id = "x".repeat((i % 13) as usize) + &i.to_string();
                let id = if i % 7 == 0 { String::new() } else { id };
                ids.push(&id);
                want.push(id);
            }
            if span == 20 {
                assert!(ids.segments.len() > 1000);
            }
            for (slot, w) in want.iter().enumerate() {
                assert_eq!(ids.get(slot as u32), w, "slot {slot}");
            }
            assert_eq!(ids.len(), want.len());
        }
    }
}
