//! The one registry of keyed wakers in `time`: the waits registered on a cancel token, the
//! system-clock sleepers the wall monitor wakes on a step, and the waits a node clock wakes
//! when it switches source. Each registration gets a key; updating or removing it is O(1),
//! so a thousand timers arming and re-arming never scan each other's entries.
//!
//! The registry is a plain value: its owner keeps it under the lock that also guards what
//! the wake-up is about (a cancel token's flag, say), and wakes what [`Wakers::take`] or
//! [`Wakers::snapshot`] returned after releasing that lock.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::task::Waker;

/// A map keyed by the sequential registration keys handed out here and by the deadline
/// queue. The keys are counters, not input from outside, so a multiplicative hash is
/// enough; SipHash cost a few percent of a 1,000-timer run.
pub(crate) type KeyMap<V> = HashMap<u64, V, BuildHasherDefault<KeyHasher>>;

/// The hasher of [`KeyMap`]: a key times an odd constant (Fibonacci hashing).
#[derive(Debug, Default)]
pub(crate) struct KeyHasher(u64);

impl Hasher for KeyHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(u64::from(b));
        }
    }

    fn write_u64(&mut self, key: u64) {
        self.0 = (self.0.rotate_left(5) ^ key).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }
}

#[derive(Debug, Default)]
pub(crate) struct Wakers {
    next_key: u64,
    entries: KeyMap<Waker>,
}

impl Wakers {
    /// Registers `waker`; the key updates or removes it.
    pub(crate) fn add(&mut self, waker: &Waker) -> u64 {
        let key = self.next_key;
        self.next_key += 1;
        self.entries.insert(key, waker.clone());
        key
    }

    /// Replaces the waker of `key` (if still registered) unless it would wake the same task.
    pub(crate) fn update(&mut self, key: u64, waker: &Waker) {
        if let Some(entry) = self.entries.get_mut(&key)
            && !entry.will_wake(waker)
        {
            *entry = waker.clone();
        }
    }

    pub(crate) fn remove(&mut self, key: u64) {
        self.entries.remove(&key);
    }

    pub(crate) fn len(&self) -> usize {
        self.entries.len()
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Clones of every registered waker, which stay registered.
    pub(crate) fn snapshot(&self) -> Vec<Waker> {
        self.entries.values().cloned().collect()
    }

    /// Every registered waker, removed.
    pub(crate) fn take(&mut self) -> Vec<Waker> {
        self.entries.drain().map(|(_, waker)| waker).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::task::Wake;

    struct Count(AtomicUsize);
    impl Wake for Count {
        fn wake(self: Arc<Self>) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }

    #[test]
    fn removed_and_taken_wakers_are_not_woken_again() {
        let count = Arc::new(Count(AtomicUsize::new(0)));
        let waker = Waker::from(count.clone());
        let mut wakers = Wakers::default();
        let (a, b) = (wakers.add(&waker), wakers.add(&waker));
        assert_ne!(a, b);
        wakers.remove(a);
        assert_eq!(wakers.len(), 1);
        wakers.snapshot().into_iter().for_each(Waker::wake);
        assert_eq!(count.0.load(Ordering::SeqCst), 1);
        wakers.take().into_iter().for_each(Waker::wake);
        assert_eq!(count.0.load(Ordering::SeqCst), 2);
        assert!(wakers.is_empty());
        wakers.update(b, &waker);
        assert!(
            wakers.is_empty(),
            "an update does not bring back a removed key"
        );
    }
}
