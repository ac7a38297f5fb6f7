//! Spin sessions: one spin in progress, its helper threads, and how it ends (see the
//! walk-through in `executor.rs`: "Spin" and "Cancel").

use super::*;

thread_local! {
    /// The id of the executor this thread is a worker of (0: none).
    pub(super) static HELPER_OF: Cell<u64> = const { Cell::new(0) };
}

/// The executors this thread runs: the one it helps spin, and those whose callbacks it is
/// in. Work queued on them cannot run while this thread waits (see `time::settle`).
pub(crate) fn executors_of_this_thread() -> Vec<u64> {
    let mut ids = super::super::deadlock::running_here();
    let helper_of = HELPER_OF.with(Cell::get);
    if helper_of != 0 {
        ids.push(helper_of);
    }
    ids
}

/// One spin in progress; ending it stops the workers it started.
pub(super) struct SpinSession<'a> {
    exec: &'a Arc<ExecShared>,
    /// What the spinning thread runs, for `shutdown` to see.
    slot: Arc<WorkerSlot>,
    epoch: u64,
    helpers: bool,
}

impl SpinSession<'_> {
    /// The spinning thread's slot: what it runs, for `shutdown` to see.
    pub(super) fn slot(&self) -> &WorkerSlot {
        &self.slot
    }

    pub(super) fn should_stop(&self) -> bool {
        self.exec.should_stop(self.epoch)
    }

    /// Runs one item of ready work on the spinning thread; true if a callback ran.
    pub(super) fn run(&self, item: Ready) -> bool {
        self.exec.run_ready(item, &self.slot, 1)
    }

    /// Like [`run`](Self::run), but a subscription may run a batch of its queued messages
    /// while nothing else is ready (`spin` only: `spin_once` and `spin_some` promise one
    /// callback per item).
    pub(super) fn run_batched(&self, item: Ready) {
        self.exec.run_ready(item, &self.slot, BATCH);
    }

    /// Starts the other workers of a multi-threaded executor for this spin.
    pub(super) fn start_helpers(&mut self) -> Result<(), ExecError> {
        let exec = self.exec;
        if exec.workers < 2 {
            return Ok(());
        }
        exec.reap_helpers();
        self.helpers = true;
        let mut helpers = exec.helpers.lock();
        for index in 1..exec.workers {
            let worker = exec.clone();
            let epoch = self.epoch;
            exec.live_helpers.fetch_add(1, Ordering::AcqRel);
            let spawned = thread::Builder::new()
                .name(format!("kairos-exec{}-w{index}", exec.id))
                .spawn(move || worker.helper_loop(epoch));
            match spawned {
                Ok(handle) => helpers.push(handle),
                Err(err) => {
                    exec.live_helpers.fetch_sub(1, Ordering::AcqRel);
                    return Err(ExecError::Spawn(err.to_string()));
                }
            }
        }
        Ok(())
    }
}

impl Drop for SpinSession<'_> {
    fn drop(&mut self) {
        self.exec.retire(&self.slot);
        let mut spin = self.exec.spin.lock();
        spin.spinning = false;
        self.exec.epoch.fetch_add(1, Ordering::AcqRel);
        drop(spin);
        if self.helpers {
            self.exec.ready.interrupt();
        }
    }
}

impl ExecShared {
    pub(super) fn begin_spin(
        self: &Arc<Self>,
        operation: &str,
    ) -> Result<Option<SpinSession<'_>>, ExecError> {
        check_not_nested(self, operation)?;
        if self.shut_down.load(Ordering::Acquire) {
            return Err(ExecError::ShutDown);
        }
        let mut spin = self.spin.lock();
        if spin.spinning {
            return Err(ExecError::AlreadySpinning);
        }
        if std::mem::take(&mut spin.cancel_pending) {
            return Ok(None);
        }
        spin.spinning = true;
        spin.spun = true;
        self.spin_started.notify_all();
        Ok(Some(SpinSession {
            slot: self.new_slot(),
            exec: self,
            epoch: self.epoch.load(Ordering::Acquire),
            helpers: false,
        }))
    }

    /// The next item of ready work, as [`ReadyQueue::pop`]; the thread that spins a
    /// single-threaded executor also keeps its timers here (see `timekeeper`).
    pub(crate) fn next_item(&self, seen: &mut u64, deadline: Option<Instant>) -> Popped<Ready> {
        match &self.timekeeper {
            Some(keeper) => keeper.next_item(&self.ready, seen, deadline, wake_timers),
            None => self.ready.pop(seen, deadline),
        }
    }

    /// Wakes this executor's timers that are due (a single-threaded executor keeps them
    /// itself); true if any was.
    pub(crate) fn fire_due_timers(&self) -> bool {
        self.timekeeper
            .as_ref()
            .is_some_and(|keeper| keeper.look(wake_timers).woke)
    }

    pub(super) fn should_stop(&self, epoch: u64) -> bool {
        self.epoch.load(Ordering::Acquire) != epoch || self.shut_down.load(Ordering::Acquire)
    }

    pub(super) fn helper_loop(self: Arc<Self>, epoch: u64) {
        HELPER_OF.with(|helper_of| helper_of.set(self.id));
        let slot = self.new_slot();
        let mut seen = self.ready.interrupts();
        loop {
            if self.should_stop(epoch) {
                break;
            }
            if let Popped::Item(item) = self.ready.pop(&mut seen, None) {
                self.run_ready(item, &slot, BATCH);
            }
        }
        self.retire(&slot);
        drop(slot);
        let _running = self.running.lock();
        self.live_helpers.fetch_sub(1, Ordering::AcqRel);
        self.idle.notify_all();
    }

    /// Joins the worker threads that have finished; the others are left to finish alone.
    pub(super) fn reap_helpers(&self) {
        let mut helpers = self.helpers.lock();
        let (finished, alive): (Vec<_>, Vec<_>) =
            helpers.drain(..).partition(JoinHandle::is_finished);
        *helpers = alive;
        drop(helpers);
        for handle in finished {
            // A finished thread joins at once; its callbacks' panics were already caught.
            let _ = handle.join();
        }
    }
}

/// Wakes a `spin_until_future_complete` when its future can make progress.
pub(super) struct FutureWake {
    pub(super) woken: AtomicBool,
    pub(super) exec: Weak<ExecShared>,
}

impl Wake for FutureWake {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        self.woken.store(true, Ordering::Release);
        if let Some(exec) = self.exec.upgrade() {
            exec.ready.interrupt();
        }
    }
}
