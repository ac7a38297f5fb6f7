//! Queueing ready work and the workers' slots (who runs what, for `shutdown`).

use super::*;

impl ExecShared {
    /// Queues ready work.
    #[inline]
    pub(crate) fn push_ready(self: &Arc<Self>, item: Ready) {
        if self.shut_down.load(Ordering::Acquire) {
            // Nothing runs any more; a late wake must not keep what it holds alive.
            return;
        }
        self.ready.push(item);
    }

    /// Queues work that was already waiting (released by a callback group) at the front.
    pub(super) fn push_ready_front(self: &Arc<Self>, item: Ready) {
        if self.shut_down.load(Ordering::Acquire) {
            return;
        }
        self.ready.push_front(item);
    }

    /// Whether a simulated step should wait for work queued here (see `settle`): yes
    /// while a thread spins it, and before its first spin (a `spin()` on a thread just
    /// started has not begun yet); not when it cannot run the work meanwhile: shut down,
    /// spun before and not now (its caller spins it between steps), or run by the thread
    /// that waits for the step (`waiter_runs`: the executors that thread runs).
    pub(crate) fn settles_for(&self, waiter_runs: &[u64]) -> bool {
        if self.shut_down.load(Ordering::Acquire) || waiter_runs.contains(&self.id) {
            return false;
        }
        let spin = self.spin.lock();
        spin.spinning || !spin.spun
    }

    /// A slot for the calling thread's callbacks, registered for `shutdown` to read.
    pub(super) fn new_slot(&self) -> Arc<WorkerSlot> {
        let slot = Arc::new(WorkerSlot::new());
        let mut slots = self.running.lock();
        slots.retain(|slot| slot.strong_count() > 0);
        slots.push(Arc::downgrade(&slot));
        slot
    }

    /// The calling thread is done with its `slot`: its count joins the executor's total.
    pub(super) fn retire(&self, slot: &WorkerSlot) {
        let _running = self.running.lock();
        self.callbacks
            .fetch_add(slot.take_callbacks(), Ordering::Relaxed);
    }
}
