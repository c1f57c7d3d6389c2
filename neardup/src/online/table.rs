//! An open-addressing table of stored slots that holds no keys: 5 bytes per cell (a
//! 32-bit slot and an 8-bit tag of the key's hash), so an entry costs about 7 bytes at
//! the table's average load. The key of an entry lives with the stored document (its
//! id, exact fingerprint or supershingle), so the caller decides equality: lookups
//! visit the slots whose tag matches, and a tag mismatch (253 in 254 of the other keys)
//! costs no look at the document.
//!
//! Linear probing over cells `0..cap` from `hash × cap / 2⁶⁴`; several slots may share
//! a key (a posting list is the set of its matching slots). Removed cells become
//! tombstones; the table is rebuilt at 7/12 load when live cells and tombstones reach
//! 7/8 of it, so a run of occupied cells always ends and memory stays within
//! `5 × 12/7 ≈ 8.6` bytes per live entry.

/// Cell tags: 0 is empty, 1 a tombstone, 2..=255 a live slot's tag.
const EMPTY: u8 = 0;
const DEAD: u8 = 1;

/// See the module docs.
#[derive(Debug, Default, Clone)]
pub(super) struct SlotTable {
    tags: Vec<u8>,
    slots: Vec<u32>,
    live: usize,
    dead: usize,
}

fn tag_of(h: u64) -> u8 {
    // 254 live tags from the hash's low byte (the home cell uses its high bits).
    2 + ((h & 0xff) % 254) as u8
}

impl SlotTable {
    /// An empty table sized for `n` entries without a rebuild.
    pub(super) fn with_capacity(n: usize) -> Self {
        let mut t = SlotTable::default();
        if n > 0 {
            t.alloc(n.saturating_mul(8) / 7 + 2);
        }
        t
    }

    fn alloc(&mut self, cap: usize) {
        self.tags = vec![EMPTY; cap];
        self.slots = vec![0; cap];
        self.live = 0;
        self.dead = 0;
    }

    fn home(&self, h: u64) -> usize {
        ((h as u128 * self.tags.len() as u128) >> 64) as usize
    }

    /// Live entries.
    #[cfg(test)]
    pub(super) fn len(&self) -> usize {
        self.live
    }

    /// Bytes held.
    pub(super) fn bytes(&self) -> usize {
        self.tags.capacity() + 4 * self.slots.capacity()
    }

    /// Starts loading the home cell of the hash `h` into the cache (a hint, no effect
    /// on results): a check touches seven tables at random places, and the loads
    /// overlap when they are all asked for first.
    #[inline]
    #[allow(unsafe_code)]
    pub(super) fn prefetch(&self, h: u64) {
        #[cfg(target_arch = "x86_64")]
        if !self.tags.is_empty() {
            use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
            let i = self.home(h);
            // SAFETY: a prefetch has no effect on memory; both addresses are in bounds.
            unsafe {
                _mm_prefetch::<_MM_HINT_T0>(self.tags.as_ptr().add(i).cast());
                _mm_prefetch::<_MM_HINT_T0>(self.slots.as_ptr().add(i).cast());
            }
        }
        #[cfg(not(target_arch = "x86_64"))]
        let _ = h;
    }

    /// Calls `visit` with every live slot whose key may hash to `h` (its tag matches);
    /// the caller checks the key.
    #[inline]
    pub(super) fn candidates(&self, h: u64, mut visit: impl FnMut(u32)) {
        let cap = self.tags.len();
        if cap == 0 {
            return;
        }
        let tag = tag_of(h);
        let mut i = self.home(h);
        loop {
            let t = self.tags[i];
            if t == EMPTY {
                return;
            }
            if t == tag {
                visit(self.slots[i]);
            }
            i += 1;
            if i == cap {
                i = 0;
            }
        }
    }

    /// Adds `slot` under the hash `h`; `hash_of` gives the hash of any stored slot, for
    /// a rebuild.
    pub(super) fn insert(&mut self, h: u64, slot: u32, hash_of: impl Fn(u32) -> u64) {
        if (self.live + self.dead + 1) * 8 > self.tags.len() * 7 {
            self.rebuild(self.live + 1, &hash_of);
        }
        self.place(h, slot);
    }

    /// Adds `slot` under the hash `h` unless `max` slots of its key are there already
    /// (`is_same` tells them among the slots whose tag matches); true when added. One
    /// walk of the run does both.
    pub(super) fn insert_below(
        &mut self,
        h: u64,
        slot: u32,
        max: usize,
        mut is_same: impl FnMut(u32) -> bool,
        hash_of: impl Fn(u32) -> u64,
    ) -> bool {
        if (self.live + self.dead + 1) * 8 > self.tags.len() * 7 {
            self.rebuild(self.live + 1, &hash_of);
        }
        let cap = self.tags.len();
        let tag = tag_of(h);
        let mut i = self.home(h);
        let mut same = 0;
        loop {
            let t = self.tags[i];
            if t == EMPTY {
                if same >= max {
                    return false;
                }
                self.tags[i] = tag;
                self.slots[i] = slot;
                self.live += 1;
                return true;
            }
            if t == tag && is_same(self.slots[i]) {
                same += 1;
            }
            i += 1;
            if i == cap {
                i = 0;
            }
        }
    }

    /// Puts `slot` in the first free cell of its run (the table has room).
    fn place(&mut self, h: u64, slot: u32) {
        let cap = self.tags.len();
        let mut i = self.home(h);
        loop {
            let t = self.tags[i];
            if t == EMPTY {
                self.tags[i] = tag_of(h);
                self.slots[i] = slot;
                self.live += 1;
                return;
            }
            i += 1;
            if i == cap {
                i = 0;
            }
        }
    }

    /// Takes `slot` (stored under the hash `h`) out; false when it is not there.
    pub(super) fn remove(&mut self, h: u64, slot: u32) -> bool {
        let cap = self.tags.len();
        if cap == 0 {
            return false;
        }
        let tag = tag_of(h);
        let mut i = self.home(h);
        loop {
            let t = self.tags[i];
            if t == EMPTY {
                return false;
            }
            if t == tag && self.slots[i] == slot {
                self.tags[i] = DEAD;
                self.live -= 1;
                self.dead += 1;
                return true;
            }
            i += 1;
            if i == cap {
                i = 0;
            }
        }
    }

    /// Rebuilds the table for `need` live entries at 7/12 load (tombstones dropped).
    fn rebuild(&mut self, need: usize, hash_of: &impl Fn(u32) -> u64) {
        let old_tags = std::mem::take(&mut self.tags);
        let old_slots = std::mem::take(&mut self.slots);
        // The keys are read in slot order, the order the stored documents lie in
        // memory, rather than at random (a cache miss each in a big state).
        let mut live: Vec<u32> = old_tags
            .iter()
            .zip(&old_slots)
            .filter(|(&t, _)| t > DEAD)
            .map(|(_, &s)| s)
            .collect();
        drop((old_tags, old_slots));
        live.sort_unstable();
        self.alloc((need.saturating_mul(12) / 7).max(16));
        for s in live {
            self.place(hash_of(s), s);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::SlotTable;
    use crate::sketch::hash::mix64;

    /// The table against a vector of (key, slot), through inserts, removals and
    /// rebuilds, with keys shared by many slots and a hash that maps many keys to few
    /// home cells.
    #[test]
    fn lookups_equal_a_scan() {
        let mut state = 11u64;
        let mut rnd = |n: u64| {
            state = mix64(state.wrapping_add(1));
            state % n
        };
        for buckets in [7u64, 1 << 20] {
            let mut key_of: Vec<u64> = Vec::new();
            let mut live: Vec<bool> = Vec::new();
            let mut t = SlotTable::with_capacity(0);
            let hash = |k: u64| mix64(k % buckets);
            for slot in 0..5000u32 {
                let k = rnd(300);
                key_of.push(k);
                live.push(true);
                let keys = key_of.clone();
                t.insert(hash(k), slot, |s| hash(keys[s as usize]));
                if rnd(3) == 0 {
                    let victim = rnd(slot as u64 + 1) as u32;
                    let was = live[victim as usize];
                    assert_eq!(t.remove(hash(key_of[victim as usize]), victim), was);
                    live[victim as usize] = false;
                }
                if slot % 101 == 0 {
                    for k in 0..300u64 {
                        let mut got = Vec::new();
                        t.candidates(hash(k), |s| {
                            if key_of[s as usize] == k {
                                got.push(s)
                            }
                        });
                        got.sort_unstable();
                        let want: Vec<u32> = (0..=slot)
                            .filter(|&s| live[s as usize] && key_of[s as usize] == k)
                            .collect();
                        assert_eq!(got, want, "key {k} after slot {slot}");
                    }
                    assert_eq!(t.len(), live.iter().filter(|&&l| l).count());
                }
            }
        }
    }
}
