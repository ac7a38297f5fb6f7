//! A topic's pool of message boxes: the allocations of `Arc<T>`s whose callbacks are done
//! with them, handed back to the next publish of that topic, or to the next message of it
//! that arrives from another process (the transport's receiving thread boxes it here).
//!
//! Why: a publish allocates the `Arc<T>` it delivers on the publishing thread and the last
//! callback frees it on an executor thread. glibc's malloc then never finds the freed block
//! in the publisher's thread cache and takes its slow path on every message (19 % of all
//! samples of `kairos bench pubsub` when this landed; a message from another process, boxed
//! on zenoh's thread, did the same). Recycling the block through a
//! bounded lock-free queue keeps the allocator out of a steady stream of messages.
//!
//! What this module promises:
//! - A message's value is dropped exactly once, when its last `Arc` goes, as without the
//!   pool: a box is recycled only if the subscription holds the only reference after the
//!   callback returned (no other `Arc`, no `Weak`), and the value is dropped before the box
//!   enters the pool. A callback that keeps its `Arc` keeps the message, untouched.
//! - Bounded memory: the pool keeps at most [`MAX_BOXES`] boxes and at most
//!   [`MAX_BYTES`] of them; a box that does not fit is freed. The value's own heap parts
//!   (a `Vec`'s buffer) are freed with the value; only the `Arc`'s block is kept.
//! - Nothing blocks and nothing is lost: an empty pool falls back to `Arc::new`.
//!
//! # Ground rules
//! - A box in the pool is an `Arc<MaybeUninit<T>>` holding the only reference to its block
//!   and no value; only the thread that pops it from the queue touches it, and it leaves
//!   the pool initialized, as an `Arc<T>`.
//! - The queue is crossbeam's `ArrayQueue` (its push releases, its pop acquires), so the
//!   drop of a value on a worker happens before the next write into the same box on a
//!   publisher. No atomic of this module's own.

// Re-typing an `Arc`'s block between `T` and `MaybeUninit<T>` needs `unsafe`; each block
// says why it holds.
#![allow(unsafe_code)]

use crossbeam_queue::ArrayQueue;
use std::mem::{MaybeUninit, size_of};
use std::sync::Arc;

/// The most boxes a topic keeps.
pub(crate) const MAX_BOXES: usize = 1024;
/// The most bytes of boxes a topic keeps (a box is its value's inline size plus the two
/// reference counts).
pub(crate) const MAX_BYTES: usize = 256 * 1024;

/// The free boxes of one topic.
pub(crate) struct MessagePool<T> {
    free: Option<ArrayQueue<Arc<MaybeUninit<T>>>>,
}

impl<T: Send + Sync + 'static> MessagePool<T> {
    pub(crate) fn new() -> Self {
        let block = size_of::<T>() + 2 * size_of::<usize>();
        let boxes = (MAX_BYTES / block).min(MAX_BOXES);
        Self {
            // A value larger than the byte budget is never pooled.
            free: (boxes > 0).then(|| ArrayQueue::new(boxes)),
        }
    }

    /// `message` in a shared box: a recycled one if the pool has one, else a new one.
    pub(crate) fn boxed(&self, message: T) -> Arc<T> {
        let Some(slot) = self.free.as_ref().and_then(ArrayQueue::pop) else {
            return Arc::new(message);
        };
        let raw = Arc::into_raw(slot).cast_mut();
        // SAFETY: a pooled box holds the only reference to its block (see `recycle`) and
        // this thread took it from the queue, so nothing else reads or writes it. Its value
        // is uninitialized and written here once. `MaybeUninit<T>` has `T`'s size and
        // alignment, so the block may be taken back as an `Arc<T>` (`Arc::from_raw`'s rule
        // for a pointer from `Arc<U>::into_raw`) once the value is written.
        unsafe {
            (*raw).write(message);
            Arc::from_raw(raw.cast::<T>())
        }
    }

    /// A subscription is done with `message`: if it holds the only reference, drop the
    /// value and keep the block for a later publish; otherwise just let this reference go.
    /// False if the pool was full (or keeps nothing of this size): the caller may stop
    /// offering boxes for a while.
    pub(crate) fn recycle(&self, mut message: Arc<T>) -> bool {
        // (No look at whether the queue is full first: that reads the line publishers write
        // on every pop; a full queue only frees the box below.)
        let Some(free) = &self.free else {
            return false;
        };
        // No other `Arc` and no `Weak`: none can appear now, nobody else can reach it.
        let Some(value) = Arc::get_mut(&mut message) else {
            return true;
        };
        let value: *mut T = value;
        // SAFETY: `MaybeUninit<T>` has `T`'s size and alignment (`Arc::from_raw`'s rule).
        // The box is re-typed before the value is dropped, so if that drop panics the block
        // is freed as an empty box and the value is not dropped a second time.
        let slot = unsafe { Arc::from_raw(Arc::into_raw(message).cast::<MaybeUninit<T>>()) };
        // SAFETY: `value` points into the block `slot` now owns alone (checked unique
        // above); the value is initialized and dropped only here, after which the box is
        // an uninitialized `MaybeUninit<T>` as the pool requires.
        unsafe { value.drop_in_place() };
        // Full: the box is freed.
        free.push(slot).is_ok()
    }

    /// How many boxes wait in the pool now.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.free.as_ref().map_or(0, ArrayQueue::len)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    /// Counts how often values were dropped.
    struct Counted(Arc<AtomicUsize>, #[allow(dead_code)] u64);

    impl Drop for Counted {
        fn drop(&mut self) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }

    #[test]
    fn a_recycled_box_carries_the_next_message_and_each_value_drops_once() {
        let drops = Arc::new(AtomicUsize::new(0));
        let pool = MessagePool::new();
        let first = pool.boxed(Counted(drops.clone(), 1));
        let block = Arc::as_ptr(&first) as usize;
        pool.recycle(first);
        assert_eq!(drops.load(Ordering::SeqCst), 1, "recycling drops the value");
        assert_eq!(pool.len(), 1);
        let second = pool.boxed(Counted(drops.clone(), 2));
        assert_eq!(Arc::as_ptr(&second) as usize, block, "the block was reused");
        assert_eq!(second.1, 2);
        assert_eq!(pool.len(), 0);
        drop(second);
        assert_eq!(drops.load(Ordering::SeqCst), 2);
        drop(pool);
        assert_eq!(
            drops.load(Ordering::SeqCst),
            2,
            "a pooled box holds no value"
        );
    }

    #[test]
    fn a_message_someone_still_holds_is_never_recycled() {
        let drops = Arc::new(AtomicUsize::new(0));
        let pool = MessagePool::new();
        let message = pool.boxed(Counted(drops.clone(), 7));
        let kept = message.clone();
        pool.recycle(message);
        let weak_held = pool.boxed(Counted(drops.clone(), 8));
        let weak = Arc::downgrade(&weak_held);
        pool.recycle(weak_held);
        assert_eq!(pool.len(), 0, "neither box may be reused");
        assert_eq!(
            drops.load(Ordering::SeqCst),
            1,
            "only the weakly held value dropped"
        );
        assert!(weak.upgrade().is_none());
        // A publish now must not write into the box `kept` still reads.
        let next = pool.boxed(Counted(drops.clone(), 9));
        assert_ne!(Arc::as_ptr(&next) as usize, Arc::as_ptr(&kept) as usize);
        assert_eq!(kept.1, 7);
    }

    /// Offers `bound + 10` boxes to `pool`: it keeps `bound`, and then says it is full.
    fn fill<T: Send + Sync + 'static>(pool: &MessagePool<T>, bound: usize, value: fn(u64) -> T) {
        let boxes: Vec<_> = (0..bound as u64 + 10)
            .map(|i| pool.boxed(value(i)))
            .collect();
        for message in boxes {
            pool.recycle(message);
        }
        assert_eq!(pool.len(), bound);
        assert!(!pool.recycle(Arc::new(value(0))), "a full pool says so");
    }

    #[test]
    fn the_pool_is_bounded() {
        // By count (small values) and by bytes (4 KiB values: 63 boxes). Miri checks the
        // second only, the same code: its checks grow with the queue, and 1,034 boxes took
        // it 85 s.
        if !cfg!(miri) {
            fill(&MessagePool::<u64>::new(), MAX_BOXES, |i| i);
        }
        fill(
            &MessagePool::<[u64; 512]>::new(),
            MAX_BYTES / (4096 + 16),
            |i| [i; 512],
        );
        let huge = MessagePool::<[u8; MAX_BYTES]>::new();
        assert!(!huge.recycle(Arc::new([0; MAX_BYTES])));
        assert_eq!(huge.len(), 0, "a value over the byte budget is not pooled");
    }
}
