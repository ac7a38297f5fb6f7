//! Ready work handed out to run elsewhere: a program that schedules callbacks itself
//! (rclpy's custom executors: `wait_for_ready_callbacks`, then the handler run on a thread
//! pool of the program's choosing) takes one ready callback at a time and runs it where it
//! likes.
//!
//! What holds for a handed-out callback, as for any other:
//! - it has entered its callback group's gate when it is handed out, so a mutually
//!   exclusive group still runs one callback at a time wherever they run;
//! - it runs shown in a worker slot (shutdown reports name it, and a shutdown that comes
//!   first keeps it from starting) and in the running thread's deadlock frames;
//! - only callbacks with work are handed out (an entity queued just to look for work, as
//!   at attach, is not);
//! - nothing is lost: a handle dropped without running gives its group back and queues
//!   its work again.

use super::dispatch::Run;
use super::*;

/// One ready callback, taken from its executor by [`Executor::wait_for_ready`] and not run
/// yet: [`run`](Self::run) runs it on the calling thread.
pub struct ReadyCallback {
    exec: Arc<ExecShared>,
    /// Taken by `run`; queued again by `drop` if still here.
    item: Option<Ready>,
}

impl ReadyCallback {
    fn entity(&self) -> &Arc<dyn Entity> {
        match self.item.as_ref().expect("present until run or dropped") {
            Ready::Entity(entity) => entity,
            Ready::Task(task) => &task.origin,
        }
    }

    /// The callback group it runs in (it holds the group's gate until it has run).
    pub fn group(&self) -> CallbackGroup {
        self.entity().core().group.clone()
    }

    /// The timer, subscription, service, client or guard condition whose callback this
    /// is, and its node, as shutdown reports name them ("guard condition a (node /n)").
    pub fn name(&self) -> &str {
        &self.entity().core().name
    }

    /// Runs the callback on this thread, then lets the next work of its group go on;
    /// true if a callback ran (false: destroyed, detached or shut down since, or it had
    /// no work after all).
    pub fn run(mut self) -> bool {
        let Some(item) = self.item.take() else {
            return false;
        };
        let slot = self.exec.new_slot();
        let ran = match item {
            Ready::Entity(entity) => self.exec.run_admitted(entity, &slot) == Run::Ran,
            task => self.exec.run_ready(task, &slot, 1),
        };
        self.exec.retire(&slot);
        ran
    }
}

impl Drop for ReadyCallback {
    fn drop(&mut self) {
        match self.item.take() {
            Some(Ready::Entity(entity)) => {
                // It still holds its schedule flag: queued again as it was.
                self.exec.leave(&entity.core().group);
                self.exec.push_ready_front(Ready::Entity(entity));
            }
            Some(task) => self.exec.push_ready_front(task),
            None => {}
        }
    }
}

impl fmt::Debug for ReadyCallback {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut s = f.debug_struct("ReadyCallback");
        if self.item.is_some() {
            s.field("name", &self.name())
                .field("group", &self.entity().core().group.name());
        }
        s.finish_non_exhaustive()
    }
}

impl ExecShared {
    /// `item` as a handed-out callback, if it may run now (see `admit`); a task is
    /// already inside its group. An entity queued only to look (as at attach) is run
    /// here, on `slot`, as any spin runs it: it finds nothing to call back, and a timer
    /// arms its next deadline.
    pub(super) fn hand_out(
        self: &Arc<Self>,
        item: Ready,
        slot: &WorkerSlot,
    ) -> Option<ReadyCallback> {
        if let Ready::Entity(entity) = &item {
            if self.admit(entity).is_err() {
                return None;
            }
            if !entity.has_work() {
                self.run_admitted(entity.clone(), slot);
                return None;
            }
        }
        Some(ReadyCallback {
            exec: self.clone(),
            item: Some(item),
        })
    }
}
