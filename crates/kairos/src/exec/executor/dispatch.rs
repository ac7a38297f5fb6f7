//! Running one item of ready work: the gate of its callback group, the guarded call,
//! batches of a subscription's messages, and handing the group on (see the walk-through
//! in `executor.rs`: "Run one item").

use super::*;

impl ExecShared {
    /// Runs one item of ready work (up to `batch` callbacks of a batching entity, see
    /// [`run_batch`](Self::run_batch)); true if a callback ran.
    pub(super) fn run_ready(
        self: &Arc<Self>,
        item: Ready,
        slot: &WorkerSlot,
        batch: usize,
    ) -> bool {
        match item {
            Ready::Entity(entity) => self.run_entity(entity, slot, batch) == Run::Ran,
            Ready::Task(task) => {
                // The flag first, then the mark (see `settle`'s handshake).
                let ticket = task.begin_poll();
                in_step_scope(ticket, || self.poll_task(&task, slot));
                true
            }
        }
    }

    pub(super) fn run_entity(
        self: &Arc<Self>,
        entity: Arc<dyn Entity>,
        slot: &WorkerSlot,
        batch: usize,
    ) -> Run {
        if let Err(not_now) = self.admit(&entity) {
            return not_now;
        }
        let core = entity.core();
        // A step's mark is run plainly: the flag released before the run, so the mark is
        // the step's alone (see `EntityCore::requeue_held`).
        if batch > 0
            && entity.batches()
            && (core.group.shared.gate.is_exclusive() || self.workers == 1)
            && !core.settle().is_marked()
        {
            return self.run_batch(entity, slot, batch);
        }
        self.run_admitted(entity, slot)
    }

    /// Lets `entity` through its callback group's gate, or says why it does not run now:
    /// destroyed or detached (`Skipped`), or waiting in the gate (`Parked`).
    pub(super) fn admit(self: &Arc<Self>, entity: &Arc<dyn Entity>) -> Result<(), Run> {
        let core = entity.core();
        let group = &core.group;
        if core.is_destroyed() || !core.is_attached_to(self) {
            // This item may have been handed the group by a release: hand it on, or work
            // parked behind it would wait for a release that never comes.
            if let Some(next) = group.shared.gate.kick() {
                hand_on(next);
            }
            return Err(Run::Skipped);
        }
        // Only a parked item needs a reference of its own; entering keeps this one.
        if !group
            .shared
            .gate
            .enter_or_park_with(|| Ready::Entity(entity.clone()))
        {
            // A parked entity keeps a step's mark until it runs, unless what holds its
            // group is an async callback suspended at an `.await` (see `settle`).
            if group.shared.is_held_by_suspended() {
                core.settle().release();
            }
            return Err(Run::Parked);
        }
        Ok(())
    }

    /// Runs one callback of `entity`, which [`admit`](Self::admit) let through its gate.
    pub(super) fn run_admitted(
        self: &Arc<Self>,
        entity: Arc<dyn Entity>,
        slot: &WorkerSlot,
    ) -> Run {
        let core = entity.core();
        core.taken();
        // After the flag: a step that marked the entity before this point is seen here,
        // one that marks it later finds the flag clear and queues it again.
        let ticket = core.settle().take();
        in_step_scope(ticket, || self.run_taken(entity, slot))
    }

    /// The rest of [`run_entity`](Self::run_entity), once the entity is taken.
    pub(super) fn run_taken(self: &Arc<Self>, entity: Arc<dyn Entity>, slot: &WorkerSlot) -> Run {
        let core = entity.core();
        let group = &core.group;
        let Some(outcome) = self.guarded(&entity, slot, || {
            crate::trace::tp::rclcpp_executor_execute(core.id(), self.id);
            entity.execute()
        }) else {
            // Shut down after this item was taken: it must not start.
            self.leave(group);
            return Run::Skipped;
        };
        match outcome {
            Ok(Execution::Idle) => {
                self.leave(group);
                Run::Skipped
            }
            Ok(Execution::Pending(future)) => {
                slot.count_callback();
                self.start_task(*future, &entity, slot);
                Run::Ran
            }
            Ok(Execution::Done) | Err(Panicked) => {
                slot.count_callback();
                self.finish(entity, outcome.is_err());
                Run::Ran
            }
        }
    }

    /// Runs consecutive units of work of `entity`, which has entered its group's gate, in
    /// one dispatch: up to `limit` callbacks (1 for `spin_once` and `spin_some`, which
    /// promise one callback per item; [`BATCH`] under `spin`), each started, traced,
    /// shown in `slot` and guarded like a single one, for as long as nothing else could
    /// run instead (see [`more_for_batch`](Self::more_for_batch), which under `spin` also
    /// waits a moment for the next message, as an idle worker would anyway). The batch
    /// ends as soon as other work is queued on this executor or parked behind the group
    /// (so fairness between entities is that of one callback per dispatch), the spin is
    /// cancelled or the executor shut down (no further callback starts), or a simulated
    /// step marks the entity (it then runs again in the step's scope).
    ///
    /// The entity's schedule flag stays set for the whole batch, so a publisher meanwhile
    /// pays one swap and no queue push, and the entity never overlaps itself (a reentrant
    /// group batches only on a single-threaded executor). At the end the worker queues the
    /// entity again with the flag it still holds, or releases the flag and looks again
    /// (`EntityCore::requeue_held`): a dispatch of one callback costs two read-modify-writes
    /// less than a plain one, which releases the flag before and sets it after.
    pub(super) fn run_batch(
        self: &Arc<Self>,
        entity: Arc<dyn Entity>,
        slot: &WorkerSlot,
        limit: usize,
    ) -> Run {
        let core = entity.core();
        let group = &core.group;
        let epoch = self.epoch.load(Ordering::Acquire);
        let mut ran = 0;
        // One deadlock frame for the whole batch (only this thread reads it), left before
        // the group is: `leave` and the re-queue run outside any callback.
        let suspended = deadlock::in_frame(self, &entity, || {
            loop {
                let Some(outcome) = self.guarded_in_frame(core, slot, || {
                    crate::trace::tp::rclcpp_executor_execute(core.id(), self.id);
                    entity.execute()
                }) else {
                    // Shut down: no further callback starts.
                    return None;
                };
                match outcome {
                    Ok(Execution::Done) => {}
                    Ok(Execution::Idle) => return None,
                    Ok(Execution::Pending(future)) => return Some(*future),
                    Err(Panicked) => {
                        slot.count_callback();
                        self.panicked.fetch_add(1, Ordering::Relaxed);
                        ran += 1;
                        return None;
                    }
                }
                slot.count_callback();
                ran += 1;
                if ran >= limit || !self.more_for_batch(&entity, core, epoch, limit > 1, ran) {
                    return None;
                }
            }
        });
        if let Some(future) = suspended {
            // Not a batching callback after all: run it as a task, the flag released.
            slot.count_callback();
            core.taken();
            self.start_task(future, &entity, slot);
            return Run::Ran;
        }
        self.leave(group);
        // A timer that ended the batch goes ahead of the subscription's next turn.
        self.fire_due_timers();
        EntityCore::requeue_held(entity, self);
        if ran > 0 { Run::Ran } else { Run::Skipped }
    }

    /// Whether the batch of `entity` goes on: it has more work and nothing else could run
    /// instead (nothing queued on this executor or parked behind its group, no cancel or
    /// shutdown, no simulated step waiting for it). With `wait`, an entity that has no
    /// work yet is given the backoff a worker spins for before it sleeps (the one `pop`
    /// spins for otherwise), still yielding at once to anything else: a publisher that is
    /// only a little slower than its callback then keeps paying one swap per message, not
    /// a ready-queue push, and the worker is not woken again for each.
    pub(super) fn more_for_batch(
        &self,
        entity: &Arc<dyn Entity>,
        core: &EntityCore,
        epoch: u64,
        wait: bool,
        ran: usize,
    ) -> bool {
        let backoff = crossbeam_utils::Backoff::new();
        // A due timer of this executor is other work too; asked every few callbacks and
        // while waiting (it costs a clock read once a timer is registered).
        let mut timers = ran % TIMER_LOOK_EVERY == 0;
        loop {
            let others = self.ready.has_queued()
                || (timers
                    && self
                        .timekeeper
                        .as_ref()
                        .is_some_and(|keeper| keeper.any_due()))
                || core.group.shared.gate.has_parked()
                || self.epoch.load(Ordering::Acquire) != epoch
                || self.shut_down.load(Ordering::Acquire)
                || core.settle().is_marked();
            if others {
                return false;
            }
            if entity.has_work() {
                return true;
            }
            if !wait || backoff.is_completed() {
                return false;
            }
            backoff.snooze();
            timers = true;
        }
    }

    /// A callback ended: release its group and queue the entity again if it has more work.
    pub(super) fn finish(self: &Arc<Self>, entity: Arc<dyn Entity>, panicked: bool) {
        if panicked {
            self.panicked.fetch_add(1, Ordering::Relaxed);
        }
        self.leave(&entity.core().group);
        if entity.has_work() {
            EntityCore::requeue(entity, self);
        }
    }

    pub(super) fn leave(&self, group: &CallbackGroup) {
        if let Some(next) = group.shared.gate.leave() {
            hand_on(next);
        }
    }

    /// Runs `f` as the callback of `entity`: shown in `slot` for shutdown
    /// reports, recorded for deadlock checks, its panic caught. `None` (and `f` not run)
    /// once the executor is shut down (see `running`'s ground rules: a callback either
    /// shows in the report or never starts).
    #[inline]
    pub(super) fn guarded<R>(
        self: &Arc<Self>,
        entity: &Arc<dyn Entity>,
        slot: &WorkerSlot,
        f: impl FnOnce() -> R,
    ) -> Option<Result<R, Panicked>> {
        self.guarded_in_frame(entity.core(), slot, || deadlock::in_frame(self, entity, f))
    }

    /// [`guarded`](Self::guarded) for a caller that has entered the deadlock frame of the
    /// entity with `core` already (a batch enters it once for all its callbacks).
    #[inline]
    pub(super) fn guarded_in_frame<R>(
        &self,
        core: &EntityCore,
        slot: &WorkerSlot,
        f: impl FnOnce() -> R,
    ) -> Option<Result<R, Panicked>> {
        if !slot.start(core.id(), coarse_now_ns(), &self.shut_down) {
            self.idle_notify();
            return None;
        }
        // The payload is dropped here: a panic is counted, and the executor goes on.
        let result = catch_unwind(AssertUnwindSafe(f)).map_err(|_| Panicked);
        if slot.end(&self.shut_down) {
            self.idle_notify();
        }
        Some(result)
    }

    /// Tells a `shutdown` waiting for running callbacks that one ended (or never started).
    pub(super) fn idle_notify(&self) {
        let _running = self.running.lock();
        self.idle.notify_all();
    }
}

/// The most callbacks of one entity a worker runs in one dispatch (see
/// [`ExecShared::run_batch`]): bounds how long it keeps its group's gate and its own
/// schedule flag, and how late it notices work that a stale queue-length hint hides.
pub(super) const BATCH: usize = 32;

/// How often a batch asks whether one of the executor's timers is due: a due timer waits
/// for at most this many of a subscription's callbacks.
pub(super) const TIMER_LOOK_EVERY: usize = 4;

/// A callback panicked; the executor caught the panic (and dropped its payload).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Panicked;

/// How running one ready entity ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Run {
    /// Its callback ran.
    Ran,
    /// Nothing ran (destroyed, detached, shut down, or no work after all).
    Skipped,
    /// It waits in its callback group's gate.
    Parked,
}

/// Runs `run` in the scope of the step whose mark `ticket` is (taken from the item about to
/// run), then releases that mark; without one, in the caller's scope.
pub(super) fn in_step_scope<R>(ticket: Option<Arc<settle::Ticket>>, run: impl FnOnce() -> R) -> R {
    match ticket {
        Some(ticket) => {
            let result = settle::scope(Some(ticket.clone()), run);
            ticket.release();
            result
        }
        None => run(),
    }
}

/// Wakes a single-threaded executor's due timers (see `timekeeper`) outside any
/// simulated step's scope: a spin made inside a step-marked callback of another executor
/// must not mark them for that step (the time driver's thread never had a scope either).
pub(super) fn wake_timers(due: &mut Vec<Waker>) {
    settle::scope(None, || due.drain(..).for_each(Waker::wake));
}

/// Queues work released by a callback group on the executor its entity is attached to
/// (none: it is dropped; the entity is queued again when it is attached and notified).
pub(super) fn hand_on(next: Ready) {
    let exec = match &next {
        Ready::Entity(entity) => entity.core().executor(),
        Ready::Task(task) => task.executor(),
    };
    if let Some(exec) = exec {
        exec.push_ready_front(next);
    }
}
