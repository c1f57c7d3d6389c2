//! Blocks of memory taken from the system directly (an anonymous mapping), not from the
//! allocator's heap, and a radix sort that sorts in them.
//!
//! The tables' cells and a rebuild's buffers are the deduper's biggest blocks, made
//! and freed as the tables grow. From the allocator, they would change what the rest of
//! the process gets: glibc raises its threshold for mapped blocks to the biggest one
//! freed, after which blocks of that size come from its heap, where a vector's unused
//! capacity sits on pages already touched and stays resident. Mapped here, a block's
//! pages are the kernel's zero pages until written, and freed, they go back at once
//! (1 M stored documents: 205 → 187 bytes resident per stored document).

use bytemuck::Pod;
use memmap2::{MmapMut, MmapOptions};

/// A fixed-length block of `T`s, zero at first, in an anonymous mapping (none when
/// empty).
pub(super) struct Zeroed<T: Pod> {
    map: Option<MmapMut>,
    /// Where the values start in the mapping: 0, or the first huge-page boundary of a
    /// big block's mapping.
    offset: usize,
    len: usize,
    _t: std::marker::PhantomData<T>,
}

/// Blocks of at least this many bytes ask for transparent huge pages.
const HUGE_BLOCK: usize = 4 << 20;
/// The huge page's size (x86-64 and most other 64-bit platforms: 2 MiB).
const HUGE_PAGE: usize = 2 << 20;

impl<T: Pod> Zeroed<T> {
    /// No values (no mapping).
    pub(super) fn empty() -> Self {
        Zeroed {
            map: None,
            offset: 0,
            len: 0,
            _t: std::marker::PhantomData,
        }
    }

    /// `len` zero values, or the error of a system that refuses the memory (an
    /// `OutOfMemory` error when the size overflows): never a panic, so a table that
    /// cannot grow is an error of the call that grows it, not an unwinding thread.
    pub(super) fn new(len: usize) -> std::io::Result<Self> {
        let bytes = len.checked_mul(std::mem::size_of::<T>()).ok_or_else(|| {
            std::io::Error::new(
                std::io::ErrorKind::OutOfMemory,
                format!("a block of {len} values overflows the address space"),
            )
        })?;
        if bytes == 0 {
            return Ok(Zeroed::empty());
        }
        super::fault::check(std::path::Path::new(MEMORY), super::fault::Op::Map)?;
        // Big blocks ask for transparent huge pages: a lookup in a big table then
        // misses the TLB less. The kernel backs with a huge page only a 2 MiB range
        // aligned to 2 MiB, and places a mapping whose length is not a multiple of
        // 2 MiB anywhere: a big block is mapped 2 MiB longer and starts at the first
        // boundary (the pages around it are never touched, so never resident). A hint:
        // refused, the block has ordinary pages.
        let huge = cfg!(target_os = "linux") && bytes >= HUGE_BLOCK;
        let mapped = if huge { bytes + HUGE_PAGE } else { bytes };
        let map = MmapOptions::new().len(mapped).map_anon().map_err(|e| {
            std::io::Error::new(
                e.kind(),
                format!("cannot map {mapped} bytes of memory: {e}"),
            )
        })?;
        let offset = if huge {
            let offset =
                (map.as_ptr() as usize).next_multiple_of(HUGE_PAGE) - map.as_ptr() as usize;
            #[cfg(target_os = "linux")]
            let _ = map.advise_range(memmap2::Advice::HugePage, offset, bytes);
            offset
        } else {
            0
        };
        Ok(Zeroed {
            map: Some(map),
            offset,
            len,
            _t: std::marker::PhantomData,
        })
    }
}

/// The name under which the fault seam ([`super::fault`]) knows the deduper's memory
/// blocks: a test arms `Op::Map` on it to make the next blocks fail.
pub(crate) const MEMORY: &str = "<memory>";

impl<T: Pod> Default for Zeroed<T> {
    fn default() -> Self {
        Zeroed::empty()
    }
}

// The slices are made from the mapping's pointer directly: `bytemuck::cast_slice`
// checks alignment and length on every call, and the tables index cells in their
// innermost loops.
#[allow(unsafe_code)]
impl<T: Pod> std::ops::Deref for Zeroed<T> {
    type Target = [T];
    #[inline]
    fn deref(&self) -> &[T] {
        match &self.map {
            // SAFETY: the mapping holds `len` values of `T` from `offset` (its length is
            // `offset + len × size_of::<T>()` or more), is page-aligned and `offset` a
            // multiple of the page, so aligned for any `T`; it lives as long as `self`,
            // and any bytes are a valid `T` (`Pod`).
            Some(m) => unsafe {
                std::slice::from_raw_parts(m.as_ptr().add(self.offset).cast::<T>(), self.len)
            },
            None => &[],
        }
    }
}

#[allow(unsafe_code)]
impl<T: Pod> std::ops::DerefMut for Zeroed<T> {
    #[inline]
    fn deref_mut(&mut self) -> &mut [T] {
        match &mut self.map {
            // SAFETY: as in `deref`; `&mut self` makes the borrow unique.
            Some(m) => unsafe {
                std::slice::from_raw_parts_mut(
                    m.as_mut_ptr().add(self.offset).cast::<T>(),
                    self.len,
                )
            },
            None => &mut [],
        }
    }
}

impl<T: Pod> Zeroed<T> {
    /// A copy (tests).
    #[cfg(test)]
    fn copied(&self) -> Self {
        let mut c = Zeroed::new(self.len).unwrap();
        c.copy_from_slice(self);
        c
    }
}

impl<T: Pod> std::fmt::Debug for Zeroed<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Zeroed").field("len", &self.len).finish()
    }
}

/// One stable counting pass: `from`'s values written to `to` in order of `digit(x)`,
/// a digit below `buckets` (values of one digit in their order in `from`).
pub(super) fn counting_pass<T: Pod>(
    from: &[T],
    to: &mut [T],
    buckets: usize,
    digit: impl Fn(&T) -> usize,
) {
    let mut at = vec![0usize; buckets + 1];
    for x in from {
        at[digit(x) + 1] += 1;
    }
    for b in 1..at.len() {
        at[b] += at[b - 1];
    }
    for x in from {
        let d = digit(x);
        to[at[d]] = *x;
        at[d] += 1;
    }
}

/// Sorts `v` by `key(x)`, a key below `2^key_bits`, stably: a least-significant-digit
/// radix sort, a byte per pass ([`counting_pass`]), with its scratch block mapped like
/// `v`'s.
pub(super) fn radix_sort_by<T: Pod>(
    v: &mut [T],
    key_bits: u32,
    key: impl Fn(&T) -> u64,
) -> std::io::Result<()> {
    let passes = key_bits.div_ceil(8);
    if v.len() < 2 || passes == 0 {
        return Ok(());
    }
    let mut scratch = Zeroed::<T>::new(v.len())?;
    let (mut from, mut to): (&mut [T], &mut [T]) = (v, &mut scratch);
    for pass in 0..passes {
        let shift = 8 * pass;
        counting_pass(from, to, 256, |x| (key(x) >> shift) as usize & 255);
        std::mem::swap(&mut from, &mut to);
    }
    // After an odd number of passes the sorted values are in the scratch block.
    if passes % 2 == 1 {
        to.copy_from_slice(from);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::{radix_sort_by, Zeroed};
    use crate::sketch::hash::mix64;

    #[test]
    fn a_block_starts_zero_and_holds_what_is_written() {
        let mut z = Zeroed::<u32>::new(10_000).unwrap();
        assert!(z.iter().all(|&x| x == 0));
        z[9_999] = 7;
        let c = z.copied();
        assert_eq!(c[9_999], 7);
        assert_eq!(c.len(), 10_000);
        assert!(Zeroed::<u64>::new(0).unwrap().is_empty());
    }

    /// A big block starts on a huge-page boundary (the kernel backs only aligned
    /// 2 MiB ranges with huge pages) and holds its values like a small one: its writes
    /// and reads go to the same place past the mapping's start. (Some kernels place
    /// these mappings on a boundary themselves, so there the alignment part passes
    /// without the block's own offset.)
    #[test]
    fn a_big_block_starts_on_a_huge_page() {
        // Blocks of several lengths, each mapped right after a one-page mapping (the
        // system then tends to place it next to that page, off any boundary).
        let mut pages = Vec::new();
        let blocks: Vec<(usize, Zeroed<u32>)> = (0..8)
            .map(|k| {
                pages.push(Zeroed::<u8>::new(4096 * (k + 1)).unwrap());
                let n = super::HUGE_BLOCK / 4 + 12_345 + 7_777 * k;
                (n, Zeroed::<u32>::new(n).unwrap())
            })
            .collect();
        for (n, mut z) in blocks {
            if cfg!(target_os = "linux") {
                assert_eq!(z.as_ptr() as usize % super::HUGE_PAGE, 0, "{n} values");
            }
            assert_eq!(z.len(), n);
            z[n - 1] = 9;
            z[0] = 8;
            let c = z.copied();
            assert_eq!((c[0], c[n - 1], c[n / 2]), (8, 9, 0));
        }
    }

    /// Against the standard library's stable sort, for key widths with an odd and an
    /// even number of passes, and keys that are part of the value (ties keep order).
    #[test]
    fn radix_sort_equals_a_stable_sort() {
        for (n, bits) in [
            (0usize, 8u32),
            (1, 8),
            (1000, 8),
            (5000, 20),
            (5000, 30),
            (300, 0),
        ] {
            let v0: Vec<u64> = (0..n as u64).map(|i| mix64(i + 3)).collect();
            let key = |x: &u64| (*x >> 7) & ((1u64 << bits) - 1);
            let mut want = v0.clone();
            want.sort_by_key(key);
            let mut got = v0.clone();
            radix_sort_by(&mut got, bits, key).unwrap();
            assert_eq!(got, want, "{n} values, {bits}-bit keys");
        }
    }
}
