//! Posting lists in 24 bytes per distinct key plus 4 bytes per member: a hash map from
//! a 32-bit key to the list's first and last slot and length, and, per slot, the slot
//! inserted before it in the same list. Keys are 64-bit bucket keys folded to 32 bits:
//! two keys that fold alike share a list, which only adds candidates (every candidate
//! is judged by the rule on its sketches), never loses one.

use std::collections::HashMap;

const NIL: u32 = u32::MAX;

#[derive(Debug, Clone, Copy)]
struct Head {
    first: u32,
    last: u32,
    len: u32,
}

/// One pass's posting lists (every slot is in at most one list).
#[derive(Debug, Default, Clone)]
pub(super) struct Lists {
    heads: HashMap<u32, Head>,
    prev: Vec<u32>,
}

/// A 64-bit key folded to the 32 bits the lists are keyed by.
pub(super) fn fold(key: u64) -> u32 {
    (key ^ (key >> 32)) as u32
}

impl Lists {
    /// Appends `slot` to the list of `key`.
    pub(super) fn push(&mut self, key: u32, slot: u32) {
        let s = slot as usize;
        if self.prev.len() <= s {
            self.prev.resize(s + 1, NIL);
        }
        match self.heads.get_mut(&key) {
            Some(h) => {
                self.prev[s] = h.last;
                h.last = slot;
                h.len += 1;
            }
            None => {
                self.prev[s] = NIL;
                self.heads.insert(
                    key,
                    Head {
                        first: slot,
                        last: slot,
                        len: 1,
                    },
                );
            }
        }
    }

    /// Takes `slot` out of the list of `key` (a walk from the list's end).
    pub(super) fn remove(&mut self, key: u32, slot: u32) {
        let Some(h) = self.heads.get_mut(&key) else {
            return;
        };
        if h.last == slot {
            if h.len == 1 {
                self.heads.remove(&key);
            } else {
                h.last = self.prev[slot as usize];
                h.len -= 1;
            }
        } else {
            // The member inserted just after `slot`.
            let mut t = h.last;
            while t != NIL && self.prev[t as usize] != slot {
                t = self.prev[t as usize];
            }
            if t == NIL {
                return;
            }
            self.prev[t as usize] = self.prev[slot as usize];
            if h.first == slot {
                h.first = t;
            }
            h.len -= 1;
        }
        self.prev[slot as usize] = NIL;
    }

    /// The members of `key`'s list: all of them when it has at most `max_bucket`, else
    /// its first member and its last `window` members.
    pub(super) fn members(&self, key: u32, max_bucket: usize, window: usize, out: &mut Vec<u32>) {
        let Some(h) = self.heads.get(&key) else {
            return;
        };
        let take = if h.len as usize <= max_bucket {
            h.len as usize
        } else {
            out.push(h.first);
            window
        };
        let mut t = h.last;
        for _ in 0..take {
            if t == NIL {
                break;
            }
            out.push(t);
            t = self.prev[t as usize];
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Lists;

    /// The lists against vectors, through random pushes and removals.
    #[test]
    fn lists_equal_vectors() {
        let mut state = 7u64;
        let mut rnd = |n: u64| {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (state >> 33) % n
        };
        let mut lists = Lists::default();
        let mut want: Vec<Vec<u32>> = vec![Vec::new(); 5];
        let mut key_of = Vec::new();
        for slot in 0..3000u32 {
            let k = rnd(5) as u32;
            lists.push(k, slot);
            want[k as usize].push(slot);
            key_of.push(k);
            if rnd(3) == 0 {
                let victim = rnd(slot as u64 + 1) as u32;
                let k = key_of[victim as usize];
                if let Some(i) = want[k as usize].iter().position(|&x| x == victim) {
                    want[k as usize].remove(i);
                    lists.remove(k, victim);
                }
            }
            if slot % 97 == 0 {
                for k in 0..5u32 {
                    let mut got = Vec::new();
                    lists.members(k, usize::MAX, 0, &mut got);
                    got.reverse();
                    assert_eq!(got, want[k as usize], "key {k} after slot {slot}");
                    let w = &want[k as usize];
                    if w.len() > 10 {
                        let mut big = Vec::new();
                        lists.members(k, 10, 3, &mut big);
                        let mut expect = vec![w[0]];
                        expect.extend(w.iter().rev().take(3));
                        assert_eq!(big, expect);
                    }
                }
            }
        }
    }
}
