//! An open-addressing table of stored slots that holds no keys: 4 bytes per cell, a
//! slot in the low `slot_bits` bits and a tag of the key's hash in the others, so an
//! entry costs about 7.5 bytes at the table's average load. The key of an entry lives
//! with the stored document (its id, exact fingerprint or supershingle), so the caller
//! decides equality: lookups visit the slots whose tag matches, and a tag mismatch
//! costs no look at the document.
//!
//! The slot width starts at 24 bits (8-bit tags: 254 in 255 of the other keys are told
//! apart by the tag alone) and grows with the slots stored, a bit at a time (each bit
//! taken from the tag, so from 16.8 M slots on more tag matches need a look at the
//! document), up to [`MAX_SLOT_BITS`]. The cell 0 is empty and 1 a tombstone (tag 0
//! marks neither as live).
//!
//! The table is 8 shards: the top 3 bits of a key's hash choose its shard, which is an
//! open-addressing table of its own. Linear probing over cells `0..cap` from
//! `(hash << 3) × cap / 2⁶⁴`; several slots may share a key (a posting list is the set
//! of its matching slots). Removed cells become tombstones; a shard is rebuilt when
//! live cells and tombstones reach 7/8 of it, to 2.5 times its size when it is full of
//! live cells (so a run of occupied cells always ends). Each shard's sizes are its own
//! base grown 2.5× at a time ([`GROWTH`]), and the bases are spread evenly through one
//! such step ([`BASES`]), so:
//!
//! * the shards grow at different moments: a rebuild moves an 8th of the table, not
//!   all of it (a check waiting behind an insert waits for that, not for the whole
//!   table to be moved), and the
//!   deduper's seven tables are turned against one another by their phases
//!   ([`SlotTable::new`]);
//! * memory does not jump at a rebuild: whatever the number of entries, the shards'
//!   loads are spread between 7/20 and 7/8, `4 × 8/7 × 1.5 / ln 2.5 ≈ 7.5` bytes per
//!   live entry on average (one table grown 1.5× at a time held 4.6 to 6.9, by where
//!   the count fell between two rebuilds);
//! * each entry is moved about 2/3 of a time as the table grows (once when shards
//!   doubled, twice when one table grew 1.5×).
//!
//! Why 2.5×: shards grown 2.5× at a time move a quarter fewer entries than shards
//! that double, and their lower average load shortens the runs of cells, for a few
//! bytes more per stored document (3× reaches the memory target's limit; the figures
//! are in docs/online.md).
//!
//! More shards make shorter waits and cost speed: with 32, a rebuild reads the keys
//! of every 32nd stored document (a cache miss each, where 8 read nearby ones) and the
//! shards' blocks fall below the size that gets huge pages (more TLB misses): 8 is
//! the compromise between the waits of one table and the speed lost to 32.
//!
//! The cells and a rebuild's buffers are mapped blocks ([`super::mapped`]), not the
//! allocator's; the buffers are kept from one rebuild to the next ([`Scratch`], one
//! for all of a deduper's tables).

use super::mapped::{counting_pass, radix_sort_by, Zeroed};
use std::io;

/// A free cell: a mapped block starts with every cell free.
const EMPTY: u32 = 0;
const DEAD: u32 = 1;

/// The slot width a table starts with.
const MIN_SLOT_BITS: u32 = 24;
/// The widest slots (2-bit tags): slots are below `2^MAX_SLOT_BITS`.
pub(super) const MAX_SLOT_BITS: u32 = 30;

/// The `(hash, slot)` entries of `slots`, made in slot order (keys read in the order
/// the stored documents lie in) and sorted by hash, entries of one hash in slot order:
/// a radix sort on the hash's top 32 bits, then the few entries that share them sorted
/// by the whole hash. Holds 32 bytes per entry while sorting.
pub(super) fn sorted_entries(
    slots: std::ops::Range<u32>,
    hash: impl Keys,
) -> io::Result<Zeroed<[u64; 2]>> {
    let mut e = Zeroed::<[u64; 2]>::new(slots.len())?;
    for (x, slot) in e.iter_mut().zip(slots) {
        *x = [hash.hash(slot), slot as u64];
    }
    radix_sort_by(&mut e, 32, |x| x[0] >> 32)?;
    for run in e.chunk_by_mut(|a, b| a[0] >> 32 == b[0] >> 32) {
        if run.len() > 1 {
            run.sort_unstable();
        }
    }
    Ok(e)
}

/// Starts loading the first cache line of `bytes` into the cache (a hint, no effect on
/// results).
#[inline]
#[allow(unsafe_code)]
pub(super) fn prefetch_bytes(bytes: &[u8]) {
    #[cfg(target_arch = "x86_64")]
    if !bytes.is_empty() {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        // SAFETY: a prefetch has no effect on memory; the address is in bounds.
        unsafe { _mm_prefetch::<_MM_HINT_T0>(bytes.as_ptr().cast()) };
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = bytes;
}

/// Starts loading every cache line `bytes` touches (a hint, no effect on results): one
/// request per 64-byte line, the first one the line of the first byte.
#[inline]
#[allow(unsafe_code)]
pub(super) fn prefetch_lines(bytes: &[u8]) {
    #[cfg(target_arch = "x86_64")]
    for line in line_starts(bytes) {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        // SAFETY: a prefetch has no effect on memory and does not fault.
        unsafe { _mm_prefetch::<_MM_HINT_T0>(line.cast()) };
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = bytes;
}

/// The start of each 64-byte cache line that `bytes` touches, in order (none when
/// empty). The first may lie before `bytes`: the addresses are only prefetched, never
/// read, so `wrapping_*` keeps them well defined.
#[inline]
fn line_starts(bytes: &[u8]) -> impl Iterator<Item = *const u8> {
    let first = bytes.as_ptr();
    let skew = first as usize % 64;
    let lines = if bytes.is_empty() {
        0
    } else {
        (skew + bytes.len()).div_ceil(64)
    };
    (0..lines).map(move |k| first.wrapping_sub(skew).wrapping_add(64 * k))
}

/// The keys of a table's stored slots, as a rebuild reads them: the hash of a slot's
/// key, and a hint to start loading the key of a slot asked for soon (a rebuild reads
/// the keys of thousands of slots in slot order, each in a cache line of its own; asked
/// for [`KEYS_AHEAD`] slots ahead, the loads overlap). A closure `Fn(u32) -> u64` is
/// keys without the hint.
pub(super) trait Keys {
    /// The hash of the key of the stored `slot`.
    fn hash(&self, slot: u32) -> u64;
    /// Starts loading what [`hash`](Self::hash) of `slot` reads (a hint, no effect on
    /// results).
    #[inline]
    fn prefetch(&self, slot: u32) {
        let _ = slot;
    }
}

impl<F: Fn(u32) -> u64> Keys for F {
    #[inline]
    fn hash(&self, slot: u32) -> u64 {
        self(slot)
    }
}

/// Keys with the hint: `hash` and `prefetch` closures.
pub(super) struct Prefetched<H, P>(pub(super) H, pub(super) P);

impl<H: Fn(u32) -> u64, P: Fn(u32)> Keys for Prefetched<H, P> {
    #[inline]
    fn hash(&self, slot: u32) -> u64 {
        (self.0)(slot)
    }
    #[inline]
    fn prefetch(&self, slot: u32) {
        (self.1)(slot)
    }
}

/// How many slots ahead a rebuild asks for the keys it reads ([`Keys::prefetch`]).
const KEYS_AHEAD: usize = 16;

/// Cells a run scan compares at once.
const SCAN: usize = 8;

/// Of the [`SCAN`] cells from `cells[0]`: the bit mask of the free ones and of those
/// whose high bits (`high` set) are `want`, bit `k` for cell `k`. SSE2 (part of every
/// x86-64 CPU) compares four cells per instruction; elsewhere a loop gives the same
/// masks.
#[inline]
#[allow(unsafe_code)]
fn scan8(cells: &[u32], high: u32, want: u32) -> (u32, u32) {
    let cells: &[u32; SCAN] = cells[..SCAN].try_into().expect("SCAN cells");
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{
            __m128i, _mm_and_si128, _mm_castsi128_ps, _mm_cmpeq_epi32, _mm_loadu_si128,
            _mm_movemask_ps, _mm_set1_epi32, _mm_setzero_si128,
        };
        // SAFETY: SSE2 is part of x86-64; the two loads read the array's 8 cells.
        unsafe {
            let p = cells.as_ptr().cast::<__m128i>();
            let (a, b) = (_mm_loadu_si128(p), _mm_loadu_si128(p.add(1)));
            let zero = _mm_setzero_si128();
            let (high, want) = (_mm_set1_epi32(high as i32), _mm_set1_epi32(want as i32));
            let mask = |x: __m128i| _mm_movemask_ps(_mm_castsi128_ps(x)) as u32;
            let free = mask(_mm_cmpeq_epi32(a, zero)) | mask(_mm_cmpeq_epi32(b, zero)) << 4;
            let hit = mask(_mm_cmpeq_epi32(_mm_and_si128(a, high), want))
                | mask(_mm_cmpeq_epi32(_mm_and_si128(b, high), want)) << 4;
            (free, hit)
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    scan8_scalar(cells, high, want)
}

/// [`scan8`] by a loop (the reference of the tests, and the code elsewhere than on
/// x86-64).
#[cfg_attr(target_arch = "x86_64", allow(dead_code))]
fn scan8_scalar(cells: &[u32], high: u32, want: u32) -> (u32, u32) {
    let (mut free, mut hit) = (0, 0);
    for (k, &c) in cells[..SCAN].iter().enumerate() {
        free |= u32::from(c == EMPTY) << k;
        hit |= u32::from(c & high == want) << k;
    }
    (free, hit)
}

/// Shards of a table (the top [`SHARD_BITS`] bits of a key's hash choose its shard).
const SHARD_BITS: u32 = 3;
const SHARDS: usize = 1 << SHARD_BITS;

/// How a full shard grows: its cell count times `GROWTH.0 / GROWTH.1` (2.5×; see the
/// module docs for why).
const GROWTH: (usize, usize) = (5, 2);

/// The smallest cell counts of the shards, `⌊32 · 2.5^(s/8)⌋`: a shard's sizes are its
/// base grown by [`GROWTH`] step by step, so the shards' sizes, and the moments they
/// grow, are spread evenly through each step.
const BASES: [usize; SHARDS] = [32, 35, 40, 45, 50, 56, 63, 71];

/// See the module docs.
#[derive(Debug)]
pub(super) struct SlotTable {
    shards: Vec<Shard>,
}

/// One shard: an open-addressing table of the keys whose hashes start with its number.
#[derive(Debug)]
struct Shard {
    cells: Zeroed<u32>,
    slot_bits: u32,
    live: usize,
    dead: usize,
    /// Counts the cell blocks the shard has had (a rebuild moves every cell).
    epoch: u32,
    /// Its smallest size: its sizes are this grown by [`GROWTH`] step by step.
    base: usize,
}

impl Default for SlotTable {
    fn default() -> Self {
        SlotTable::new(0)
    }
}

/// Where a lookup's walk of a run ended: its first free cell, in the table as it was
/// then. An insert of the same key right after goes there without walking the run
/// again ([`SlotTable::insert_at`]).
#[derive(Debug, Clone, Copy)]
pub(super) struct RunEnd {
    pub(super) at: usize,
    epoch: u32,
}

/// The entries each shard is sized for when a table is sized for `n`: its share, and
/// room for the share to run six standard deviations over (hashes spread the entries
/// binomially).
fn per_shard(n: usize) -> usize {
    let share = n / SHARDS;
    share + 6 * (share as f64).sqrt() as usize + 16
}

/// The smallest size of shard `s` of a table of `phase`: phases 0, 1, 2, … turn the
/// bases by 3 shards each (3 and 8 have no common divisor, so the first eight phases
/// all differ: the deduper's seven tables turn them by 0, 3, 6, 1, 4, 7 and 2).
fn base(s: usize, phase: usize) -> usize {
    BASES[(s + 3 * phase) % SHARDS]
}

/// The shard number of the hash `h`.
#[inline]
fn shard_of(h: u64) -> usize {
    (h >> (64 - SHARD_BITS)) as usize
}

impl SlotTable {
    /// An empty table. Its `phase` (tables of one deduper are given 0, 1, 2, …) turns
    /// which of its shards grows first ([`base`]), so that tables that grow together
    /// rebuild their shards at different moments: a rebuild moves an 8th of one table,
    /// not an 8th of each.
    pub(super) fn new(phase: usize) -> Self {
        SlotTable {
            shards: (0..SHARDS).map(|s| Shard::new(base(s, phase))).collect(),
        }
    }

    /// An empty table sized for `n` entries without a rebuild (as hashes spread them;
    /// see [`per_shard`]).
    pub(super) fn with_capacity(n: usize, phase: usize) -> io::Result<Self> {
        let mut t = SlotTable::new(phase);
        if n > 0 {
            let each = per_shard(n);
            for sh in &mut t.shards {
                let cap = sh.cap_for(each);
                sh.alloc(cap)?;
            }
        }
        Ok(t)
    }

    /// A table of `entries`, `(hash, slot)` pairs sorted by hash ([`sorted_entries`]),
    /// sized for `capacity` entries without a rebuild and for slots up to `max_slot`.
    /// Each shard's entries are a stretch of them, placed in their order: by home cell,
    /// the cells are written in memory order rather than at random (a cache miss each
    /// in a big state). The same lookups as inserting the entries one by one.
    pub(super) fn from_entries(
        capacity: usize,
        max_slot: u32,
        entries: &[[u64; 2]],
        phase: usize,
    ) -> io::Result<Self> {
        debug_assert!(entries.is_sorted_by_key(|e| e[0]), "entries sorted by hash");
        let each = per_shard(capacity.max(entries.len()));
        let mut rest = entries;
        let shards = (0..SHARDS)
            .map(|s| {
                let n = rest.partition_point(|e| shard_of(e[0]) == s);
                let (mine, after) = rest.split_at(n);
                rest = after;
                Shard::from_entries(base(s, phase), each, max_slot, mine)
            })
            .collect::<io::Result<_>>()?;
        Ok(SlotTable { shards })
    }

    /// An empty table whose slots start `bits` wide (tests: widening, narrow tags).
    #[cfg(test)]
    fn with_slot_bits(bits: u32) -> Self {
        let mut t = SlotTable::new(0);
        for sh in &mut t.shards {
            sh.slot_bits = bits;
        }
        t
    }

    /// The widest slots of its shards (tests).
    #[cfg(test)]
    fn slot_bits(&self) -> u32 {
        self.shards.iter().map(|s| s.slot_bits).max().unwrap_or(0)
    }

    /// The cells of its shards, one count per shard: a rebuild changes them (tests).
    #[cfg(test)]
    fn sizes(&self) -> Vec<usize> {
        self.shards.iter().map(|s| s.cells.len()).collect()
    }

    /// Live entries.
    #[cfg(test)]
    pub(super) fn len(&self) -> usize {
        self.shards.iter().map(|s| s.live).sum()
    }

    /// Bytes held.
    pub(super) fn bytes(&self) -> usize {
        self.shards.iter().map(|s| 4 * s.cells.len()).sum()
    }

    /// Starts loading the cells a lookup of the hash `h` scans first into the cache (a
    /// hint, no effect on results): a check touches seven tables at random places, and
    /// the loads overlap when they are all asked for first. The first scan reads
    /// [`SCAN`] cells from the home cell, 32 bytes that lie across two cache lines
    /// when the home is past the middle of its line (7 homes in 16), so the line of
    /// the last one is asked for too (it helps a big state; a small one is in the
    /// cache anyway).
    #[inline]
    pub(super) fn prefetch(&self, h: u64) {
        self.shards[shard_of(h)].prefetch(h);
    }

    /// Calls `visit` with every live slot whose key may hash to `h` (its tag matches),
    /// in the order of their cells; the caller checks the key. Returns where the walk
    /// ended, for [`insert_at`](Self::insert_at). The run is scanned eight cells at a
    /// time ([`scan8`]): a lookup of an absent key in a table of 1 M / 3 M / 6 M
    /// entries, not in the cache, took 11 / 25 / 47 ns against 23 / 50 / 100 ns one
    /// cell at a time ([`candidates_scalar`](Self::candidates_scalar)).
    #[inline]
    pub(super) fn candidates(&self, h: u64, visit: impl FnMut(u32)) -> RunEnd {
        self.shards[shard_of(h)].walk::<true>(h, visit)
    }

    /// [`candidates`](Self::candidates) one cell at a time: the reference of the
    /// tests and the baseline of the `online-table` bench.
    pub(super) fn candidates_scalar(&self, h: u64, visit: impl FnMut(u32)) -> RunEnd {
        self.shards[shard_of(h)].walk::<false>(h, visit)
    }

    /// Makes room for `total` live entries with slots up to `max_slot`, so that inserting
    /// up to there rebuilds nothing (as hashes spread the entries over the shards; see
    /// [`per_shard`]): a shard that would grow or widen its slots before is rebuilt
    /// now, once, to the smallest of its sizes that holds its share. `hash_of` and
    /// `scratch` as for [`insert`](Self::insert).
    pub(super) fn reserve(
        &mut self,
        total: usize,
        max_slot: u32,
        hash_of: impl Keys,
        scratch: &mut Scratch,
    ) -> io::Result<()> {
        let each = per_shard(total);
        for sh in &mut self.shards {
            sh.reserve(each, max_slot, &hash_of, scratch)?;
        }
        Ok(())
    }

    /// Adds `slot` under the hash `h`; `hash_of` gives the hash of any stored slot, for
    /// a rebuild (of the shard of `h`: only its slots are asked for), which works in
    /// `scratch`.
    pub(super) fn insert(
        &mut self,
        h: u64,
        slot: u32,
        hash_of: impl Keys,
        scratch: &mut Scratch,
    ) -> io::Result<()> {
        self.shards[shard_of(h)].insert(h, slot, hash_of, scratch)
    }

    /// Adds `slot` under the hash `h`, as [`insert`](Self::insert) does, at `end`, where
    /// a lookup of `h` ([`candidates`](Self::candidates)) ended, when nothing has been
    /// added since and no rebuild is due: the run is not walked again. Otherwise (the
    /// cell at `end` taken, the shard rebuilt, or one due), the same as `insert`.
    ///
    /// Where the entry goes does not change a lookup: the cells from the home of `h` to
    /// `end` were taken at the lookup, a cell once taken is never free again but through
    /// a rebuild (a removal leaves a tombstone), and the shard's epoch tells a rebuild;
    /// so a free cell at `end` is still the first free cell of the run, where `insert`
    /// would put the entry.
    pub(super) fn insert_at(
        &mut self,
        end: RunEnd,
        h: u64,
        slot: u32,
        hash_of: impl Keys,
        scratch: &mut Scratch,
    ) -> io::Result<()> {
        self.shards[shard_of(h)].insert_at(end, h, slot, hash_of, scratch)
    }

    /// Adds `slot` under the hash `h` unless `max` slots of its key are there already
    /// (`is_same` tells them among the slots whose tag matches); true when added. One
    /// walk of the run does both.
    pub(super) fn insert_below(
        &mut self,
        h: u64,
        slot: u32,
        max: usize,
        is_same: impl FnMut(u32) -> bool,
        hash_of: impl Keys,
        scratch: &mut Scratch,
    ) -> io::Result<bool> {
        self.shards[shard_of(h)].insert_below(h, slot, max, is_same, hash_of, scratch)
    }

    /// Makes room in the shard of `h` for one more entry and for `slot` (a rebuild when
    /// it is due), so that the next insert there rebuilds nothing. On an error, the
    /// table is as it was.
    pub(super) fn make_room(
        &mut self,
        h: u64,
        slot: u32,
        hash_of: impl Keys,
        scratch: &mut Scratch,
    ) -> io::Result<()> {
        self.shards[shard_of(h)].make_room(slot, &hash_of, scratch)
    }

    /// Takes `slot` (stored under the hash `h`) out; false when it is not there.
    pub(super) fn remove(&mut self, h: u64, slot: u32) -> bool {
        self.shards[shard_of(h)].remove(h, slot)
    }

    /// The live slots of every shard, in slot order, read off the cells (see
    /// [`live_slots`]). Holds 8 bytes per entry.
    pub(super) fn live_slots(&self) -> io::Result<Zeroed<u64>> {
        live_slots(&self.shards)
    }
}

impl Shard {
    /// An empty shard whose sizes are `base` grown by [`GROWTH`] step by step.
    fn new(base: usize) -> Self {
        Shard {
            cells: Zeroed::default(),
            slot_bits: MIN_SLOT_BITS,
            live: 0,
            dead: 0,
            epoch: 0,
            base,
        }
    }

    /// The smallest of the shard's sizes that holds `entries` without a rebuild (at
    /// most 7/8 full).
    fn cap_for(&self, entries: usize) -> usize {
        let want = entries.saturating_mul(8) / 7 + 2;
        let mut cap = self.base;
        while cap < want {
            cap = cap * GROWTH.0 / GROWTH.1;
        }
        cap
    }

    /// The size a growing shard takes: room for half as many entries again as it
    /// holds (its size grows by [`GROWTH`] when it grows full).
    fn grown(&self) -> usize {
        self.cap_for((self.live + 1).saturating_mul(3) / 2)
    }

    /// Empties the shard into `cap` new cells; on an error, the shard is unchanged.
    fn alloc(&mut self, cap: usize) -> io::Result<()> {
        self.cells = Zeroed::new(cap)?;
        self.live = 0;
        self.dead = 0;
        self.epoch = self.epoch.wrapping_add(1);
        Ok(())
    }

    /// The home cell of the hash `h`: from the bits after the shard's.
    #[inline]
    fn home(&self, h: u64) -> usize {
        (((h << SHARD_BITS) as u128 * self.cells.len() as u128) >> 64) as usize
    }

    /// The tag of the hash `h`: 1 ..= 2^(32 − slot_bits) − 1, from its low bits (the
    /// home cell uses its high bits).
    #[inline]
    fn tag_of(&self, h: u64) -> u32 {
        let bits = 32 - self.slot_bits;
        ((h as u32) & ((1 << bits) - 1)).max(1)
    }

    /// A shard of `entries` (its stretch of [`SlotTable::from_entries`]'s), sized for
    /// `capacity` entries.
    fn from_entries(
        base: usize,
        capacity: usize,
        max_slot: u32,
        entries: &[[u64; 2]],
    ) -> io::Result<Self> {
        let mut t = Shard::new(base);
        let cap = t.cap_for(capacity.max(entries.len()));
        t.alloc(cap)?;
        t.slot_bits = (32 - max_slot.leading_zeros()).max(MIN_SLOT_BITS);
        for &[h, slot] in entries {
            t.put(t.home(h), t.cell(h, slot as u32));
        }
        Ok(t)
    }

    /// See [`SlotTable::prefetch`].
    #[inline]
    fn prefetch(&self, h: u64) {
        if !self.cells.is_empty() {
            let i = self.home(h);
            let last = (i + SCAN - 1).min(self.cells.len() - 1);
            prefetch_lines(bytemuck::cast_slice(&self.cells[i..=last]));
        }
    }

    /// The walk of [`SlotTable::candidates`], eight cells at a time when `WIDE` and
    /// they do not wrap around the shard's end, else one at a time.
    #[inline]
    fn walk<const WIDE: bool>(&self, h: u64, mut visit: impl FnMut(u32)) -> RunEnd {
        let cap = self.cells.len();
        let epoch = self.epoch;
        if cap == 0 {
            return RunEnd { at: 0, epoch };
        }
        let (tag, bits) = (self.tag_of(h), self.slot_bits);
        let mask = (1u32 << bits) - 1;
        let mut i = self.home(h);
        loop {
            // Eight cells: the tag matches before the first free cell, in order, then
            // the free cell ends the run. (Free and tombstone cells have tag 0, and a
            // tag is never 0.)
            if WIDE && i + SCAN <= cap {
                let (free, hit) = scan8(&self.cells[i..], !mask, tag << bits);
                let end = free.trailing_zeros();
                let mut m = hit & ((1u32 << end.min(SCAN as u32)) - 1);
                while m != 0 {
                    visit(self.cells[i + m.trailing_zeros() as usize] & mask);
                    m &= m - 1;
                }
                if free != 0 {
                    return RunEnd {
                        at: i + end as usize,
                        epoch,
                    };
                }
                i += SCAN;
                if i == cap {
                    i = 0;
                }
                continue;
            }
            let c = self.cells[i];
            if c == EMPTY {
                return RunEnd { at: i, epoch };
            }
            if c >> bits == tag {
                visit(c & mask);
            }
            i += 1;
            if i == cap {
                i = 0;
            }
        }
    }

    /// Makes room for one more entry and for `slot`: a rebuild when the table is full
    /// or `slot` is wider than its slots.
    fn make_room(
        &mut self,
        slot: u32,
        hash_of: &impl Keys,
        scratch: &mut Scratch,
    ) -> io::Result<()> {
        let bits = 32 - slot.leading_zeros();
        debug_assert!(bits <= MAX_SLOT_BITS, "slot {slot} past the table's widest");
        if bits > self.slot_bits {
            self.rebuild(self.grown(), bits, hash_of, scratch)
        } else if (self.live + self.dead + 1) * 8 > self.cells.len() * 7 {
            self.rebuild(self.grown(), self.slot_bits, hash_of, scratch)
        } else {
            Ok(())
        }
    }

    /// The cell of `slot` under the hash `h` (its slots are wide enough).
    #[inline]
    fn cell(&self, h: u64, slot: u32) -> u32 {
        self.tag_of(h) << self.slot_bits | slot
    }

    /// Makes room for `total` live entries with slots up to `max_slot` (see
    /// [`SlotTable::reserve`]).
    fn reserve(
        &mut self,
        total: usize,
        max_slot: u32,
        hash_of: &impl Keys,
        scratch: &mut Scratch,
    ) -> io::Result<()> {
        let bits = (32 - max_slot.leading_zeros()).max(self.slot_bits);
        let total = total.max(self.live);
        if bits > self.slot_bits || (total + self.dead + 1) * 8 > self.cells.len() * 7 {
            self.rebuild(self.cap_for(total), bits, hash_of, scratch)?;
        }
        Ok(())
    }

    /// See [`SlotTable::insert`].
    fn insert(
        &mut self,
        h: u64,
        slot: u32,
        hash_of: impl Keys,
        scratch: &mut Scratch,
    ) -> io::Result<()> {
        self.make_room(slot, &hash_of, scratch)?;
        self.put(self.home(h), self.cell(h, slot));
        Ok(())
    }

    /// See [`SlotTable::insert_at`].
    fn insert_at(
        &mut self,
        end: RunEnd,
        h: u64,
        slot: u32,
        hash_of: impl Keys,
        scratch: &mut Scratch,
    ) -> io::Result<()> {
        let room =
            slot >> self.slot_bits == 0 && (self.live + self.dead + 1) * 8 <= self.cells.len() * 7;
        if room
            && end.epoch == self.epoch
            && end.at < self.cells.len()
            && self.cells[end.at] == EMPTY
        {
            self.cells[end.at] = self.cell(h, slot);
            self.live += 1;
            Ok(())
        } else {
            self.insert(h, slot, hash_of, scratch)
        }
    }

    /// See [`SlotTable::insert_below`].
    fn insert_below(
        &mut self,
        h: u64,
        slot: u32,
        max: usize,
        mut is_same: impl FnMut(u32) -> bool,
        hash_of: impl Keys,
        scratch: &mut Scratch,
    ) -> io::Result<bool> {
        self.make_room(slot, &hash_of, scratch)?;
        let cap = self.cells.len();
        let (tag, bits) = (self.tag_of(h), self.slot_bits);
        let mask = (1u32 << bits) - 1;
        let cell = self.cell(h, slot);
        let mut i = self.home(h);
        let mut same = 0;
        loop {
            let c = self.cells[i];
            if c == EMPTY {
                if same >= max {
                    return Ok(false);
                }
                self.cells[i] = cell;
                self.live += 1;
                return Ok(true);
            }
            if c >> bits == tag && is_same(c & mask) {
                same += 1;
            }
            i += 1;
            if i == cap {
                i = 0;
            }
        }
    }

    /// Puts `cell` in the first free cell of the run from `home` (the table has room).
    fn put(&mut self, home: usize, cell: u32) {
        let cap = self.cells.len();
        let mut i = home;
        loop {
            if i + SCAN <= cap {
                let (free, _) = scan8(&self.cells[i..], 0, 1);
                if free != 0 {
                    self.cells[i + free.trailing_zeros() as usize] = cell;
                    self.live += 1;
                    return;
                }
                i += SCAN;
                if i == cap {
                    i = 0;
                }
                continue;
            }
            if self.cells[i] == EMPTY {
                self.cells[i] = cell;
                self.live += 1;
                return;
            }
            i += 1;
            if i == cap {
                i = 0;
            }
        }
    }

    /// See [`SlotTable::remove`].
    fn remove(&mut self, h: u64, slot: u32) -> bool {
        let cap = self.cells.len();
        if cap == 0 || slot >> self.slot_bits != 0 {
            return false;
        }
        let cell = self.cell(h, slot);
        let mut i = self.home(h);
        loop {
            let c = self.cells[i];
            if c == EMPTY {
                return false;
            }
            if c == cell {
                self.cells[i] = DEAD;
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

    /// Rebuilds the shard with `cap` cells and slots of `bits` bits (tombstones
    /// dropped).
    ///
    /// Both the reads of the keys and the writes of the cells are made in memory order
    /// rather than at random (in a big state, a cache miss each): the live slots are
    /// put in order (through a bitmap of the slots, or a radix sort when the slots are
    /// sparse), their keys hashed in that order (the order the stored documents lie
    /// in), the new cells put in order of the top 8 bits of their home cell (one
    /// counting pass) and placed in that order. It works in `scratch`, 8 bytes per
    /// entry twice (the bitmap lies in the second block until the sorted cells take
    /// it); the bitmap and the short sort keep rebuilds a small part of
    /// `check_and_insert`'s work. The keys, one in a cache line of its own (the slots
    /// of one shard are an 8th of all), are asked for [`KEYS_AHEAD`] slots before they
    /// are read ([`Keys::prefetch`]), so that a rebuild waits on them once, not once
    /// per key.
    ///
    /// Every block it needs is taken before the shard changes: when the system refuses
    /// one, the error is returned and the shard is as it was.
    fn rebuild(
        &mut self,
        cap: usize,
        bits: u32,
        hash_of: &impl Keys,
        scratch: &mut Scratch,
    ) -> io::Result<()> {
        let n = self.live;
        let (todo, placed) = scratch.blocks(n)?;
        // The live slots in slot order: their keys are then read in memory order.
        live_slots_into(std::slice::from_ref(self), todo, Some(placed))?;
        let todo = &mut todo[..n];
        let cells = Zeroed::new(cap)?;
        self.cells = cells;
        self.live = 0;
        self.dead = 0;
        self.epoch = self.epoch.wrapping_add(1);
        self.slot_bits = bits;
        for i in 0..n {
            if let Some(&ahead) = todo.get(i + KEYS_AHEAD) {
                hash_of.prefetch(ahead as u32);
            }
            let s = todo[i] as u32;
            let h = hash_of.hash(s);
            todo[i] = (self.home(h) as u64) << 32 | self.cell(h, s) as u64;
        }
        // Placed in order of the home cell's top 8 bits, put there by one counting
        // pass: the writes go through memory in order, within a window of 1/256 of the
        // table at a time (the order within a run of cells does not change a lookup).
        // 256 ways scatter faster than 4,096 (fewer write streams at once: 0.61 → 0.52 s
        // of counting at 3 M stored; end to end at 10 M within the noise), and the
        // placing is no slower (a window of the table stays in the cache: 266 KB at
        // 10 M).
        let home_bits = usize::BITS - (self.cells.len() - 1).leading_zeros();
        let skip = 32 + home_bits.saturating_sub(PLACE_BITS);
        let placed = &mut placed[..n];
        counting_pass(todo, placed, 1 << home_bits.min(PLACE_BITS), |&x| {
            (x >> skip) as usize
        });
        for &x in placed.iter() {
            self.put((x >> 32) as usize, x as u32);
        }
        Ok(())
    }
}

/// The blocks a rebuild works in, 8 bytes per entry twice, kept between rebuilds by the
/// tables' owner (one for all its tables: one rebuild runs at a time). A block mapped
/// afresh for each rebuild had its pages faulted in and zeroed by the system every
/// time. A block grows to twice the entries of the biggest rebuild yet; the
/// pages past what a rebuild touched are never resident. What a block holds between
/// rebuilds means nothing.
#[derive(Debug, Default)]
pub(super) struct Scratch {
    todo: Zeroed<u64>,
    placed: Zeroed<u64>,
}

impl Scratch {
    /// Two blocks of at least `n + 1` values each.
    fn blocks(&mut self, n: usize) -> io::Result<(&mut [u64], &mut [u64])> {
        if self.todo.len() <= n {
            let (todo, placed) = (Zeroed::new(2 * n + 1)?, Zeroed::new(2 * n + 1)?);
            (self.todo, self.placed) = (todo, placed);
        }
        Ok((&mut self.todo, &mut self.placed))
    }

    /// Bytes held (at capacity).
    pub(super) fn bytes(&self) -> usize {
        8 * (self.todo.len() + self.placed.len())
    }
}

/// The live slots of `shards`, in slot order, read off their cells (two sequential
/// passes, no key looked at): through a bitmap of the slots when it is no bigger than
/// the entries, else a radix sort. Holds 8 bytes per entry.
fn live_slots(shards: &[Shard]) -> io::Result<Zeroed<u64>> {
    let mut todo = Zeroed::<u64>::new(shards.iter().map(|sh| sh.live).sum())?;
    live_slots_into(shards, &mut todo, None)?;
    Ok(todo)
}

/// [`live_slots`] into the first entries of `todo` (as many as the live entries or
/// more); the bitmap in `spare` if given (one longer than the live entries or more,
/// its values overwritten), else in a block of its own.
fn live_slots_into(
    shards: &[Shard],
    todo: &mut [u64],
    spare: Option<&mut [u64]>,
) -> io::Result<()> {
    let live = || {
        shards.iter().flat_map(|sh| {
            let (bits, mask) = (sh.slot_bits, (1u32 << sh.slot_bits) - 1);
            sh.cells
                .iter()
                .filter(move |&&c| c >> bits != 0)
                .map(move |&c| c & mask)
        })
    };
    let count: usize = shards.iter().map(|sh| sh.live).sum();
    let bits = shards
        .iter()
        .map(|sh| sh.slot_bits)
        .max()
        .unwrap_or(MIN_SLOT_BITS);
    let max = live().max().unwrap_or(0) as usize;
    let mut n = 0;
    if max / 64 <= count {
        let mut own;
        let bitmap = match spare {
            Some(spare) => {
                let b = &mut spare[..max / 64 + 1];
                b.fill(0);
                b
            }
            None => {
                own = Zeroed::<u64>::new(max / 64 + 1)?;
                &mut own[..]
            }
        };
        for s in live() {
            bitmap[s as usize / 64] |= 1 << (s % 64);
        }
        for (w, &b) in bitmap.iter().enumerate() {
            let mut b = b;
            while b != 0 {
                todo[n] = (w * 64) as u64 + b.trailing_zeros() as u64;
                n += 1;
                b &= b - 1;
            }
        }
    } else {
        for s in live() {
            todo[n] = s as u64;
            n += 1;
        }
        radix_sort_by(&mut todo[..n], bits, |&x| x)?;
    }
    debug_assert_eq!(n, count, "the live count is the live cells'");
    Ok(())
}

/// The leading bits of the home cell a rebuild orders the new cells by.
const PLACE_BITS: u32 = 8;

#[cfg(test)]
mod tests {
    use super::{
        scan8, scan8_scalar, sorted_entries, Scratch, SlotTable, BASES, EMPTY, GROWTH, SCAN, SHARDS,
    };
    use crate::sketch::hash::mix64;

    /// `line_starts` against the lines of each byte, one by one, for every offset in a
    /// line and lengths from 0 to 300.
    #[test]
    fn line_starts_are_the_lines_of_the_bytes() {
        let buf = vec![0u8; 512];
        for from in 0..64 {
            for len in 0..300 {
                let bytes = &buf[from..from + len];
                let got: Vec<usize> = super::line_starts(bytes).map(|p| p as usize).collect();
                let mut want: Vec<usize> = bytes
                    .iter()
                    .map(|b| b as *const u8 as usize & !63)
                    .collect();
                want.dedup();
                assert_eq!(got, want, "offset {from}, {len} bytes");
            }
        }
    }

    /// `scan8` against its loop, on cells free, dead, matching in their high bits or
    /// not, for several slot widths.
    /// The bases are written out (a `const fn` cannot take a fractional power): they
    /// must be `⌊32 · g^(s/8)⌋` for the growth factor `g`, spread evenly through one
    /// step, or shards grow together.
    #[test]
    fn the_bases_spread_through_one_growth_step() {
        let g = GROWTH.0 as f64 / GROWTH.1 as f64;
        let want: Vec<usize> = (0..SHARDS)
            .map(|s| (32.0 * g.powf(s as f64 / SHARDS as f64)).floor() as usize)
            .collect();
        assert_eq!(BASES.to_vec(), want);
    }

    #[test]
    fn scan8_equals_its_loop() {
        let mut state = 5u64;
        for bits in [24u32, 27, 30] {
            for _ in 0..20_000 {
                let tag = 1 + (mix64(state) % ((1 << (32 - bits)) - 1)) as u32;
                let cells: Vec<u32> = (0..SCAN)
                    .map(|_| {
                        state = mix64(state);
                        match state % 5 {
                            0 => EMPTY,
                            1 => 1,
                            2 => tag << bits | (state >> 40) as u32 & ((1 << bits) - 1),
                            _ => (state >> 20) as u32,
                        }
                    })
                    .collect();
                let (high, want) = (!((1u32 << bits) - 1), tag << bits);
                assert_eq!(
                    scan8(&cells, high, want),
                    scan8_scalar(&cells, high, want),
                    "{cells:?}"
                );
            }
        }
    }

    /// Lookups eight cells at a time visit the slots the one-cell loop visits, in the
    /// same order, and end where it ends: tables small enough that runs wrap around
    /// the end, with tombstones, several slots per key, narrow tags (so that other
    /// keys' cells match), at low and high load.
    #[test]
    fn lookups_equal_the_one_cell_loop() {
        let mut sc = Scratch::default();
        for (keys, slots, bits) in [(50u64, 60u32, 24u32), (7, 300, 24), (1000, 5000, 30)] {
            let key = |s: u32| mix64(s as u64 * 31 + 1) % keys;
            let hash = |k: u64| mix64(k ^ 0xabc);
            let mut t = SlotTable::with_slot_bits(bits);
            for slot in 0..slots {
                t.insert(hash(key(slot)), slot, |s| hash(key(s)), &mut sc)
                    .unwrap();
                if slot % 3 == 2 {
                    let victim = slot - 1 - (mix64(slot as u64) % 2) as u32;
                    t.remove(hash(key(victim)), victim);
                }
                for k in [key(slot), mix64(slot as u64) % (2 * keys)] {
                    let (mut a, mut b) = (Vec::new(), Vec::new());
                    let ea = t.candidates(hash(k), |s| a.push(s));
                    let eb = t.candidates_scalar(hash(k), |s| b.push(s));
                    assert_eq!((a, ea.at), (b, eb.at), "key {k} after slot {slot}");
                }
            }
        }
    }

    /// `sorted_entries` against a plain sort of `(hash, slot)`, with hashes that share
    /// their top 32 bits in long runs (only the low bits tell them apart), repeated
    /// hashes, and slots that do not start at 0.
    #[test]
    fn sorted_entries_equal_a_plain_sort() {
        for (top_values, low_values) in [(1u64, 1000u64), (5, 97), (1 << 32, 3), (3, 1)] {
            let hash = |slot: u32| {
                let m = mix64(slot as u64);
                ((m % top_values) << 32) | (mix64(m) % low_values)
            };
            let slots = 17..4017u32;
            let mut want: Vec<[u64; 2]> = slots.clone().map(|s| [hash(s), s as u64]).collect();
            want.sort_unstable();
            let got = sorted_entries(slots, hash).unwrap();
            assert_eq!(&got[..], &want[..], "{top_values} {low_values}");
        }
    }

    /// Rebuilds of a table whose few live slots lie spread over a wide range (the rest
    /// removed), so that they are sorted rather than read from a bitmap: lookups
    /// against the live slots kept aside.
    #[test]
    fn lookups_equal_a_scan_with_sparse_slots() {
        let mut sc = Scratch::default();
        let key = |s: u32| (s % 37) as u64;
        let hash = |k: u64| mix64(k);
        let mut t = SlotTable::default();
        let mut live: Vec<u32> = Vec::new();
        for slot in 0..20_000u32 {
            t.insert(hash(key(slot)), slot, |s| hash(key(s)), &mut sc)
                .unwrap();
            live.push(slot);
            if live.len() > 40 {
                let victim = live.swap_remove((mix64(slot as u64) % 40) as usize);
                assert!(t.remove(hash(key(victim)), victim));
            }
            if slot % 997 == 0 || slot == 19_999 {
                for k in 0..37u64 {
                    let mut got = Vec::new();
                    t.candidates(hash(k), |s| {
                        if key(s) == k {
                            got.push(s)
                        }
                    });
                    got.sort_unstable();
                    let mut want: Vec<u32> =
                        live.iter().copied().filter(|&s| key(s) == k).collect();
                    want.sort_unstable();
                    assert_eq!(got, want, "key {k} after slot {slot}");
                }
            }
        }
    }

    /// A reserve makes room once: inserting up to the reserved count (slots wider than
    /// the table had) moves no cell, and every entry is found, those from before the
    /// reserve too. (Keys of one or two slots each: the reserve sizes the shards for
    /// entries that hashes spread.)
    #[test]
    fn a_reserve_rebuilds_once_and_loses_nothing() {
        let mut sc = Scratch::default();
        let key = |s: u32| (s % 40_000) as u64;
        let hash = |k: u64| mix64(k);
        let mut t = SlotTable::with_slot_bits(4);
        for slot in 0..100u32 {
            t.insert(hash(key(slot)), slot, |s| hash(key(s)), &mut sc)
                .unwrap();
        }
        t.reserve(50_000, 49_999, |s| hash(key(s)), &mut sc)
            .unwrap();
        let (cells, bits) = (t.sizes(), t.slot_bits());
        assert!(bits >= 16, "slots widened for 49,999: {bits} bits");
        for slot in 100..50_000u32 {
            t.insert(hash(key(slot)), slot, |s| hash(key(s)), &mut sc)
                .unwrap();
            assert_eq!(t.sizes(), cells, "rebuilt at slot {slot}");
        }
        assert_eq!(t.slot_bits(), bits);
        // A smaller reserve does nothing.
        t.reserve(10, 9, |s| hash(key(s)), &mut sc).unwrap();
        assert_eq!(t.sizes(), cells);
        for k in (0..40_000u64).step_by(7) {
            let mut got = Vec::new();
            t.candidates(hash(k), |s| {
                if key(s) == k {
                    got.push(s)
                }
            });
            got.sort_unstable();
            let want: Vec<u32> = [k as u32, k as u32 + 40_000]
                .into_iter()
                .filter(|&s| s < 50_000)
                .collect();
            assert_eq!(got, want, "key {k}");
        }
    }

    /// A growing table: its shards rebuild at moments spread through each 2.5× step
    /// (one at a time, never two close together), each shard stays between
    /// 7/20 and 7/8 full, the table averages about 7.5 bytes per entry whatever its
    /// count, and every entry is found.
    #[test]
    fn shards_grow_one_at_a_time_and_lose_nothing() {
        let mut sc = Scratch::default();
        let hash = |s: u32| mix64(s as u64 ^ 0x5eed);
        let mut t = SlotTable::new(3);
        let n = 400_000u32;
        let mut sizes = t.sizes();
        // The inserts at which some shard was rebuilt, in the last growth step.
        let step_start = n / GROWTH.0 as u32 * GROWTH.1 as u32;
        let mut rebuilt: Vec<u32> = Vec::new();
        let mut bytes_per_entry: Vec<f64> = Vec::new();
        for slot in 0..n {
            t.insert(hash(slot), slot, hash, &mut sc).unwrap();
            let now = t.sizes();
            if now != sizes {
                let changed = now.iter().zip(&sizes).filter(|(a, b)| a != b).count();
                assert_eq!(changed, 1, "one shard rebuilt at a time (insert {slot})");
                if slot >= step_start {
                    rebuilt.push(slot);
                }
                sizes = now;
            }
            if slot > 50_000 && slot % 10_007 == 0 {
                bytes_per_entry.push(t.bytes() as f64 / t.len() as f64);
            }
        }
        // Each shard grows once from n / 2.5 to n, at its own moment: no two rebuilds
        // within half the stretch an even spread would put between them.
        assert_eq!(
            rebuilt.len(),
            SHARDS,
            "rebuilds in the last 2.5× step: {rebuilt:?}"
        );
        let even = (n - step_start) / SHARDS as u32;
        for w in rebuilt.windows(2) {
            assert!(
                w[1] - w[0] >= even / 2,
                "two rebuilds close together: {rebuilt:?}"
            );
        }
        for sh in &t.shards {
            let load = sh.live as f64 / sh.cells.len() as f64;
            assert!((0.34..=0.875).contains(&load), "a shard {load:.3} full");
        }
        let (lo, hi) = bytes_per_entry
            .iter()
            .fold((f64::MAX, 0f64), |(lo, hi), &b| (lo.min(b), hi.max(b)));
        assert!(
            lo > 6.8 && hi < 8.2,
            "bytes per entry from {lo:.2} to {hi:.2}"
        );
        for slot in (0..n).step_by(97) {
            let mut got = Vec::new();
            t.candidates(hash(slot), |s| got.push(s));
            assert!(got.contains(&slot), "slot {slot} found");
        }
        assert_eq!(t.len(), n as usize);
        // The deduper's seven tables (phases 0 to 6) start their shards at seven
        // different bases.
        for s in 0..SHARDS {
            let mut bases: Vec<usize> = (0..7).map(|p| super::base(s, p)).collect();
            bases.sort_unstable();
            bases.dedup();
            assert_eq!(bases.len(), 7, "shard {s}");
        }
    }

    /// Rebuilds in blocks left over from other rebuilds (and from other tables) make
    /// the same cells as rebuilds in fresh, zeroed blocks: whatever a kept block holds
    /// is overwritten before it is read. One table is grown with a scratch whose
    /// blocks are filled with ones before every insert, sparse slots among them (the
    /// radix sort's way), the other with a fresh scratch each time.
    #[test]
    fn a_kept_scratch_makes_the_same_tables_as_fresh_blocks() {
        let hash = |s: u32| mix64(s as u64 ^ 0xb10c);
        // Dense slots, then sparse ones (every 97th: the bitmap is then larger than
        // the entries and the live slots are radix-sorted).
        let slots: Vec<u32> = (0..30_000).chain((30_000..3_000_000).step_by(97)).collect();
        let (mut kept, mut fresh) = (SlotTable::new(1), SlotTable::new(1));
        let mut sc = Scratch::default();
        for (i, &slot) in slots.iter().enumerate() {
            if i % 1000 == 0 {
                sc.todo.fill(u64::MAX);
                sc.placed.fill(u64::MAX);
            }
            kept.insert(hash(slot), slot, hash, &mut sc).unwrap();
            fresh
                .insert(hash(slot), slot, hash, &mut Scratch::default())
                .unwrap();
        }
        assert!(sc.bytes() > 0, "the rebuilds worked in the kept scratch");
        for (a, b) in kept.shards.iter().zip(&fresh.shards) {
            assert_eq!(a.cells[..], b.cells[..]);
            assert_eq!((a.live, a.slot_bits), (b.live, b.slot_bits));
        }
    }

    /// A rebuild asks for each key it reads `KEYS_AHEAD` keys before (all but the
    /// first ones): the hint is given, for the slots read, in the order they are read.
    #[test]
    fn a_rebuild_asks_for_its_keys_ahead() {
        use super::{Keys, KEYS_AHEAD};
        use std::cell::RefCell;
        let mut sc = Scratch::default();
        /// Keys that note what was asked for and what was read.
        struct Noted {
            asked: RefCell<Vec<u32>>,
            read: RefCell<Vec<u32>>,
        }
        impl Keys for &Noted {
            fn hash(&self, slot: u32) -> u64 {
                self.read.borrow_mut().push(slot);
                mix64(slot as u64)
            }
            fn prefetch(&self, slot: u32) {
                self.asked.borrow_mut().push(slot);
            }
        }
        let keys = Noted {
            asked: RefCell::new(Vec::new()),
            read: RefCell::new(Vec::new()),
        };
        let mut t = SlotTable::new(0);
        let mut rebuilds = 0;
        let mut sizes = t.sizes();
        for slot in 0..5_000u32 {
            keys.asked.borrow_mut().clear();
            keys.read.borrow_mut().clear();
            t.insert(mix64(slot as u64), slot, &keys, &mut sc).unwrap();
            let (asked, read) = (keys.asked.borrow(), keys.read.borrow());
            if t.sizes() == sizes {
                assert!(
                    read.is_empty() && asked.is_empty(),
                    "no rebuild, no key read"
                );
                continue;
            }
            sizes = t.sizes();
            // The rebuilt shard's live slots (all but the one being inserted), read
            // in slot order, each asked for before, `KEYS_AHEAD` reads ahead (a
            // shard's first block reads none).
            assert!(read.is_sorted(), "keys read in slot order");
            let ahead = read.get(KEYS_AHEAD..).unwrap_or_default();
            assert_eq!(ahead, &asked[..], "asked for ahead");
            if !ahead.is_empty() {
                rebuilds += 1;
            }
        }
        assert!(rebuilds >= 3 * SHARDS, "{rebuilds} rebuilds of many keys");
    }

    /// The table against a vector of (key, slot), through inserts, removals and
    /// rebuilds, with keys shared by many slots and a hash that maps many keys to few
    /// home cells; with slots that start 4 bits wide (widened as slots grow), 24 (the
    /// default) and 30 (2-bit tags: most tag checks match).
    #[test]
    fn lookups_equal_a_scan() {
        for bits in [4, 24, 30] {
            lookups_equal_a_scan_with(bits);
        }
    }

    fn lookups_equal_a_scan_with(bits: u32) {
        let mut sc = Scratch::default();
        let mut state = 11u64;
        let mut rnd = |n: u64| {
            state = mix64(state.wrapping_add(1));
            state % n
        };
        for buckets in [7u64, 1 << 20] {
            let mut key_of: Vec<u64> = Vec::new();
            let mut live: Vec<bool> = Vec::new();
            let mut t = SlotTable::with_slot_bits(bits);
            let hash = |k: u64| mix64(k % buckets);
            for slot in 0..5000u32 {
                let k = rnd(300);
                key_of.push(k);
                live.push(true);
                let keys = key_of.clone();
                if slot % 2 == 0 {
                    t.insert(hash(k), slot, |s| hash(keys[s as usize]), &mut sc)
                        .unwrap();
                } else {
                    // A lookup, then the insert at its end; between them sometimes a
                    // removal (a tombstone in the run) or a rebuild (the end is stale).
                    let end = t.candidates(hash(k), |_| {});
                    if rnd(5) == 0 {
                        let victim = rnd(slot as u64) as u32;
                        let was = live[victim as usize];
                        assert_eq!(t.remove(hash(key_of[victim as usize]), victim), was);
                        live[victim as usize] = false;
                    }
                    if rnd(7) == 0 {
                        t.reserve(2 * t.len() + 64, slot, |s| hash(keys[s as usize]), &mut sc)
                            .unwrap();
                    }
                    t.insert_at(end, hash(k), slot, |s| hash(keys[s as usize]), &mut sc)
                        .unwrap();
                }
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
                        assert_eq!(got, want, "key {k} after slot {slot}, {bits} bits");
                    }
                    assert_eq!(t.len(), live.iter().filter(|&&l| l).count());
                }
            }
            // Slots up to 4,999 need 13 bits.
            assert_eq!(t.slot_bits(), bits.max(13));
        }
    }
}
