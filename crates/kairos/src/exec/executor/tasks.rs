//! Async callbacks: started, polled, and swept once at shutdown (see `TaskSet`).

use super::dispatch::Panicked;
use super::*;

/// The live tasks of an executor. Shutdown *sweeps* them once (abandoning each one not
/// being polled, under this lock); a task being polled then is abandoned by its worker when
/// the poll returns, which it learns from `swept` under the same lock, so every task is
/// abandoned exactly once and none is missed.
#[derive(Debug, Default)]
pub(super) struct TaskSet {
    pub(super) live: HashMap<u64, Arc<Task>>,
    pub(super) swept: bool,
}

impl ExecShared {
    /// An async callback of `entity` suspended for the first time: its future becomes a
    /// live task, polled now. If shutdown swept the live tasks since the callback started,
    /// nobody would ever poll or drop it (an async service's future answers its caller when
    /// dropped), so it is abandoned at once and the group released.
    pub(super) fn start_task(
        self: &Arc<Self>,
        future: BoxFuture,
        entity: &Arc<dyn Entity>,
        slot: &WorkerSlot,
    ) {
        let task = Task::new(future, entity.clone(), self);
        let mut tasks = self.tasks.lock();
        if tasks.swept {
            drop(tasks);
            task.abandon();
            self.leave(&entity.core().group);
            return;
        }
        tasks.live.insert(task.id, task.clone());
        drop(tasks);
        task.begin_poll();
        self.poll_task(&task, slot);
    }

    pub(super) fn poll_task(self: &Arc<Self>, task: &Arc<Task>, slot: &WorkerSlot) {
        let origin = &task.origin;
        let group = origin.core().group.clone();
        group.shared.set_held_by_suspended(false);
        let polled = self.guarded_in_frame(origin.core(), slot, || {
            deadlock::in_task_frame(self, origin, || task.poll())
        });
        let Some(polled) = polled else {
            // Shut down: `shutdown` abandons the task (or does it below, once polled).
            return;
        };
        match polled {
            Ok(TaskPoll::Stale) => {}
            Ok(TaskPoll::Pending) => {
                // Suspended, it holds its group for as long as it waits: a simulated step
                // must not wait for the work parked behind it (see `settle`).
                group.shared.set_held_by_suspended(true);
                group.shared.gate.for_each_parked(|item| {
                    if let Ready::Entity(entity) = item {
                        entity.core().settle().release();
                    }
                });
                // Shut down and swept while this poll ran: nobody will poll the task again.
                let mut tasks = self.tasks.lock();
                if tasks.swept && tasks.live.remove(&task.id).is_some() {
                    drop(tasks);
                    task.abandon();
                    self.leave(&group);
                }
            }
            Ok(TaskPoll::Completed) => {
                crate::trace::tp::callback_end(origin.core().id());
                if self.forget_task(task) {
                    self.finish(origin.clone(), false)
                }
            }
            Err(Panicked) => {
                crate::trace::tp::callback_end(origin.core().id());
                task.abandon();
                if self.forget_task(task) {
                    self.finish(origin.clone(), true);
                }
            }
        }
    }

    /// Removes a task from the live set; true if this call removed it (so exactly one
    /// caller releases its group).
    pub(super) fn forget_task(&self, task: &Task) -> bool {
        self.tasks.lock().live.remove(&task.id).is_some()
    }

    /// Abandons every live task that is not being polled right now (a task being polled
    /// is abandoned by its worker when the poll returns) and releases their groups.
    pub(super) fn abandon_tasks(&self, now_ns: i64) -> Vec<Suspended> {
        let mut abandoned = Vec::new();
        {
            let mut tasks = self.tasks.lock();
            tasks.swept = true;
            let ids: Vec<u64> = tasks.live.keys().copied().collect();
            for id in ids {
                let Some(future) = tasks.live.get(&id).and_then(|task| task.try_take_future())
                else {
                    continue;
                };
                if let Some(task) = tasks.live.remove(&id) {
                    abandoned.push((task, future));
                }
            }
        }
        let mut suspended = Vec::new();
        for (task, future) in abandoned {
            suspended.push(Suspended {
                callback: task.origin.core().name.to_string(),
                suspended_for: Duration::from_nanos(now_ns - task.started_ns),
            });
            // Dropped outside every lock: a future's destructor may do anything.
            drop(future);
            task.settle.release();
            self.leave(&task.origin.core().group);
        }
        suspended
    }
}
