//! A suspended `async` callback: the executor polls it whenever its waker fires, and the
//! callback's group stays held until the future completes (as in rclpy).

use super::entity::{BoxFuture, Entity, Ready};
use super::executor::ExecShared;
use super::ready::ScheduleFlag;
use crate::time::settle;
use parking_lot::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Weak};
use std::task::{Context, Poll, Wake, Waker};

/// What polling a task gave.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TaskPoll {
    Pending,
    /// The callback just completed: its group must be released (exactly once).
    Completed,
    /// A late wake-up of a task that had already completed or was abandoned.
    Stale,
}

pub(crate) struct Task {
    /// Key in the executor's set of live tasks.
    pub(crate) id: u64,
    /// Coarse monotonic nanoseconds when the callback started.
    pub(crate) started_ns: i64,
    future: Mutex<Option<BoxFuture>>,
    /// The entity whose callback this is; its group is held while the task lives.
    pub(crate) origin: Arc<dyn Entity>,
    scheduled: ScheduleFlag,
    exec: Weak<ExecShared>,
    /// The simulated step waiting for this task's next poll (see `settle`).
    pub(crate) settle: settle::Mark,
}

impl Task {
    pub(crate) fn new(
        future: BoxFuture,
        origin: Arc<dyn Entity>,
        exec: &Arc<ExecShared>,
    ) -> Arc<Self> {
        static NEXT_ID: AtomicU64 = AtomicU64::new(1);
        let now = rustix::time::clock_gettime(rustix::time::ClockId::MonotonicCoarse);
        Arc::new(Self {
            id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
            started_ns: now
                .tv_sec
                .saturating_mul(1_000_000_000)
                .saturating_add(now.tv_nsec),
            future: Mutex::new(Some(future)),
            origin,
            scheduled: ScheduleFlag::new(),
            exec: Arc::downgrade(exec),
            settle: settle::Mark::default(),
        })
    }

    /// Polls the future once.
    /// Before a poll: clears the schedule flag, then takes the mark of a step waiting for
    /// this poll (the caller releases it once the poll is done; see `settle`).
    pub(crate) fn begin_poll(&self) -> Option<Arc<settle::Ticket>> {
        self.scheduled.clear();
        self.settle.take()
    }

    /// Polls the future once ([`begin_poll`](Self::begin_poll) first).
    pub(crate) fn poll(self: &Arc<Self>) -> TaskPoll {
        let mut slot = self.future.lock();
        let Some(future) = slot.as_mut() else {
            return TaskPoll::Stale;
        };
        let waker = Waker::from(self.clone());
        match future.as_mut().poll(&mut Context::from_waker(&waker)) {
            Poll::Ready(()) => {
                *slot = None;
                TaskPoll::Completed
            }
            Poll::Pending => TaskPoll::Pending,
        }
    }

    /// Drops the future (its callback panicked or the executor is gone).
    pub(crate) fn abandon(&self) {
        let future = self.future.lock().take();
        drop(future);
    }

    /// Takes the future unless it is being polled right now (`None` then, or if it is
    /// gone already): the caller drops it, outside every lock.
    pub(crate) fn try_take_future(&self) -> Option<BoxFuture> {
        self.future.try_lock()?.take()
    }

    pub(crate) fn executor(&self) -> Option<Arc<ExecShared>> {
        self.exec.upgrade()
    }
}

impl Wake for Task {
    fn wake(self: Arc<Self>) {
        let Some(exec) = self.exec.upgrade() else {
            return;
        };
        settle::note(&self.settle, |waiter_runs| exec.settles_for(waiter_runs));
        if self.scheduled.set() {
            exec.push_ready(Ready::Task(self));
        }
    }
}

impl std::fmt::Debug for Task {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Task")
            .field("callback", &self.origin.core().name)
            .finish_non_exhaustive()
    }
}
