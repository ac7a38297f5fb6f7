//! Which stream holds the earliest event: a tournament (loser) tree over the streams'
//! head timestamps, ties going to the stream opened first.
//!
//! Only the winner's key ever changes (the merge delivers its head and decodes the
//! next), and replaying one stream climbs the same path of the tree each time: one
//! comparison per level, whose outcome moves values but decides no branch, and whose
//! loads do not wait for the comparison before them. A binary heap's sift-down instead
//! picks each next load by the comparison before it and ends on a mispredicted branch;
//! with a hundred streams that was a fifth of reading a trace.

/// A stream's key: its head's timestamp, then its index; a stream with no head sorts
/// after every other.
type Key = u128;

const ENDED: Key = Key::MAX;

fn key(lane: usize, ts: Option<i64>) -> Key {
    match ts {
        // Flipping the sign bit orders the timestamps as unsigned numbers.
        Some(ts) => (Key::from((ts as u64) ^ (1 << 63)) << 64) | lane as Key,
        None => ENDED,
    }
}

#[derive(Debug)]
pub(crate) struct Tournament {
    /// Per leaf (a power of two of them, the streams first): its key.
    keys: Vec<Key>,
    /// `tree[0]` is the winner's leaf; `tree[n]` (n >= 1) the leaf that lost at node n,
    /// whose children are nodes 2n and 2n + 1 (leaves are nodes `leaves..2 * leaves`).
    tree: Vec<u32>,
}

impl Tournament {
    /// A tournament of streams whose heads are at `heads` (`None`: the stream has none).
    pub(crate) fn new(heads: impl IntoIterator<Item = Option<i64>>) -> Self {
        let mut keys: Vec<Key> = heads
            .into_iter()
            .enumerate()
            .map(|(lane, ts)| key(lane, ts))
            .collect();
        let leaves = keys.len().next_power_of_two();
        keys.resize(leaves, ENDED);
        // The winner of each node, bottom up; the loser stays at the node.
        let mut winner: Vec<u32> = vec![0; 2 * leaves];
        for (leaf, w) in winner[leaves..].iter_mut().enumerate() {
            *w = leaf as u32;
        }
        let mut tree = vec![0u32; leaves];
        for node in (1..leaves).rev() {
            let (a, b) = (winner[2 * node], winner[2 * node + 1]);
            let (win, lose) = if keys[b as usize] < keys[a as usize] {
                (b, a)
            } else {
                (a, b)
            };
            winner[node] = win;
            tree[node] = lose;
        }
        tree[0] = winner[1];
        Self { keys, tree }
    }

    /// The stream with the earliest head, `None` once no stream has one.
    #[inline]
    pub(crate) fn winner(&self) -> Option<usize> {
        let w = self.tree[0] as usize;
        (self.keys[w] != ENDED).then_some(w)
    }

    /// The winner's head is now at `ts` (`None`: it has no more): plays its path again.
    #[inline]
    pub(crate) fn replace_winner(&mut self, ts: Option<i64>) {
        let mut lane = self.tree[0];
        let mut k = key(lane as usize, ts);
        self.keys[lane as usize] = k;
        let mut node = (self.keys.len() + lane as usize) / 2;
        while node >= 1 {
            let other = self.tree[node];
            let ko = self.keys[other as usize];
            // Both outcomes are taken as data, not as a branch.
            let swap = ko < k;
            self.tree[node] = if swap { lane } else { other };
            lane = if swap { other } else { lane };
            k = if swap { ko } else { k };
            node /= 2;
        }
        self.tree[0] = lane;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cmp::Reverse;
    use std::collections::BinaryHeap;

    /// Random streams of sorted timestamps (many ties, negative ones, i64's ends),
    /// merged by the tournament and by a binary heap keyed (timestamp, stream): the
    /// same order.
    #[test]
    fn merges_as_a_heap_of_timestamp_then_stream() {
        let mut rng = fastrand::Rng::with_seed(7);
        for round in 0..300 {
            let n = rng.usize(0..40);
            let streams: Vec<Vec<i64>> = (0..n)
                .map(|_| {
                    let mut v: Vec<i64> = (0..rng.usize(0..30))
                        .map(|_| match rng.u8(..10) {
                            0 => i64::MIN,
                            1 => i64::MAX,
                            _ => rng.i64(-5..5),
                        })
                        .collect();
                    v.sort();
                    v
                })
                .collect();
            let mut pos = vec![0usize; n];
            let mut t = Tournament::new(streams.iter().map(|s| s.first().copied()));
            let mut ours = Vec::new();
            while let Some(w) = t.winner() {
                ours.push((streams[w][pos[w]], w));
                pos[w] += 1;
                t.replace_winner(streams[w].get(pos[w]).copied());
            }
            let mut heap: BinaryHeap<Reverse<(i64, usize)>> = streams
                .iter()
                .enumerate()
                .filter_map(|(i, s)| Some(Reverse((*s.first()?, i))))
                .collect();
            let mut pos = vec![0usize; n];
            let mut theirs = Vec::new();
            while let Some(Reverse((ts, i))) = heap.pop() {
                theirs.push((ts, i));
                pos[i] += 1;
                if let Some(&next) = streams[i].get(pos[i]) {
                    heap.push(Reverse((next, i)));
                }
            }
            assert_eq!(ours, theirs, "round {round}");
        }
    }
}
