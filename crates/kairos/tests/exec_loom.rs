//! loom model checks of the executor core: the ready queue, the schedule flag that makes
//! wake-ups idempotent, the callback-group gate, and the timekeeper's handshake with the
//! thread that spins a single-threaded executor. No lost wake-up, no double dispatch, no
//! overlap in a mutually exclusive group, no parked callback forgotten.
//!
//! The source files under test are compiled here a second time, with a `loom` module that
//! maps the `crate::loom::sync` names they use to loom's model-checked primitives.

/// What `crate::loom` means to the included modules: loom's primitives behind the same
/// API as `kairos`'s `src/loom.rs`.
mod loom {
    pub(crate) const MODEL_CHECKED: bool = true;

    pub(crate) mod thread {
        pub(crate) use ::loom::thread::yield_now;
    }

    pub(crate) mod sync {
        pub(crate) use ::loom::sync::atomic;

        /// The asymmetric fences (`src/fence.rs`) as the symmetric pair they stand for.
        pub(crate) fn light_fence() {
            atomic::fence(atomic::Ordering::SeqCst);
        }

        /// See [`light_fence`].
        pub(crate) fn heavy_fence() {
            atomic::fence(atomic::Ordering::SeqCst);
        }
        use std::ops::{Deref, DerefMut};
        use std::sync::PoisonError;
        use std::time::Instant;

        #[derive(Debug)]
        pub(crate) struct Mutex<T>(::loom::sync::Mutex<T>);

        /// Holds loom's guard in an `Option` so a condition wait can take it by reference.
        #[derive(Debug)]
        pub(crate) struct MutexGuard<'a, T>(Option<::loom::sync::MutexGuard<'a, T>>);

        impl<T: Default> Default for Mutex<T> {
            fn default() -> Self {
                Self::new(T::default())
            }
        }

        impl<T> Mutex<T> {
            pub(crate) fn new(value: T) -> Self {
                Self(::loom::sync::Mutex::new(value))
            }

            pub(crate) fn lock(&self) -> MutexGuard<'_, T> {
                MutexGuard(Some(self.0.lock().unwrap_or_else(PoisonError::into_inner)))
            }
        }

        impl<T> Deref for MutexGuard<'_, T> {
            type Target = T;
            fn deref(&self) -> &T {
                self.0
                    .as_deref()
                    .expect("the guard is only empty during a condition wait")
            }
        }

        impl<T> DerefMut for MutexGuard<'_, T> {
            fn deref_mut(&mut self) -> &mut T {
                self.0
                    .as_deref_mut()
                    .expect("the guard is only empty during a condition wait")
            }
        }

        #[derive(Debug, Default)]
        pub(crate) struct Condvar(::loom::sync::Condvar);

        impl Condvar {
            pub(crate) fn new() -> Self {
                Self(::loom::sync::Condvar::new())
            }

            pub(crate) fn wait<T>(&self, guard: &mut MutexGuard<'_, T>) {
                let inner = guard.0.take().expect("the guard is held");
                guard.0 = Some(self.0.wait(inner).unwrap_or_else(PoisonError::into_inner));
            }

            /// loom does not model time: a timed wait is an untimed one.
            pub(crate) fn wait_until<T>(
                &self,
                guard: &mut MutexGuard<'_, T>,
                _deadline: Instant,
            ) -> bool {
                self.wait(guard);
                false
            }

            pub(crate) fn notify_one(&self) {
                self.0.notify_one();
            }

            pub(crate) fn notify_all(&self) {
                self.0.notify_all();
            }
        }
    }
}

#[allow(dead_code)]
#[path = "../src/exec/ready.rs"]
mod ready;

#[allow(dead_code)]
#[path = "../src/exec/gate.rs"]
mod gate;

#[allow(dead_code)]
#[path = "../src/exec/running.rs"]
mod running;

#[allow(dead_code)]
#[path = "../src/graph/backlog.rs"]
mod backlog;

// The timekeeper (`exec/timekeeper.rs`) and what it uses of `crate::time`: its deadline
// queue and host trait, and a monotonic clock that stands at zero (loom does not model
// time).
#[allow(dead_code)]
#[path = "../src/time/wakers.rs"]
mod wakers;

#[allow(dead_code)]
#[path = "../src/time/deadline_queue.rs"]
mod deadline_queue;

#[allow(dead_code)]
#[path = "../src/time/deadline_host.rs"]
mod deadline_host;

mod time {
    pub(crate) use crate::deadline_host::{DeadlineHost, SPIN_WINDOW_NS};
    pub(crate) use crate::deadline_queue::DeadlineQueue;

    pub(crate) mod wait {
        /// loom does not model time: the clock stands at zero.
        pub(crate) fn mono_now() -> i64 {
            0
        }
    }

    pub(crate) mod slack {
        /// Timer slack is the kernel's business, not the model's.
        pub(crate) fn ensure_fine_slack() {}
    }
}

#[allow(dead_code)]
#[path = "../src/exec/timekeeper.rs"]
mod timekeeper;

// Lock-step settling (`time/settle.rs`): the step's marks and the worker's runs.
#[allow(dead_code)]
#[path = "../src/time/settle.rs"]
mod settle;

use ::loom::sync::Arc;
use ::loom::sync::atomic::{AtomicUsize, Ordering};
use ::loom::thread;
use gate::Gate;
use ready::{Popped, ReadyQueue, ScheduleFlag};

/// An event producer and a worker: every event is handled (no lost wake-up) and the
/// item is never in the queue twice (no double dispatch).
#[test]
fn loom_schedule_flag_never_loses_or_duplicates_work() {
    ::loom::model(|| {
        let queue = Arc::new(ReadyQueue::new());
        let flag = Arc::new(ScheduleFlag::new());
        let pending = Arc::new(AtomicUsize::new(0));
        let handled = Arc::new(AtomicUsize::new(0));

        let notify = |queue: &ReadyQueue<u32>, flag: &ScheduleFlag, pending: &AtomicUsize| {
            pending.fetch_add(1, Ordering::AcqRel);
            if flag.set() {
                queue.push(7);
            }
        };
        let producer = {
            let (queue, flag, pending) = (queue.clone(), flag.clone(), pending.clone());
            thread::spawn(move || {
                notify(&queue, &flag, &pending);
                notify(&queue, &flag, &pending);
            })
        };
        // The worker: take the item, clear the flag, then drain the work it finds.
        let worker = {
            let (queue, flag, pending, handled) = (
                queue.clone(),
                flag.clone(),
                pending.clone(),
                handled.clone(),
            );
            thread::spawn(move || {
                while handled.load(Ordering::Acquire) < 2 {
                    let Popped::Item(item) = queue.pop(&mut 0, None) else {
                        panic!("no interrupt was sent")
                    };
                    assert_eq!(item, 7);
                    flag.clear();
                    while pending.load(Ordering::Acquire) > 0 {
                        pending.fetch_sub(1, Ordering::AcqRel);
                        handled.fetch_add(1, Ordering::AcqRel);
                    }
                }
            })
        };
        producer.join().unwrap();
        worker.join().unwrap();
        assert_eq!(handled.load(Ordering::Acquire), 2);
        // At most one stale entry can remain (pushed after the last drain), never two.
        assert!(queue.len() <= 1);
    });
}

/// A worker runs a batch holding the schedule flag while a producer publishes, then does
/// what `EntityCore::requeue_held` does: queue the item again if it sees more work, else
/// release the flag (`ScheduleFlag::clear`, a read-modify-write) and look again. The
/// producer publishes with a plain store, as a subscription queue does, then sets the
/// flag. Every published unit is handled (a lost wake-up leaves the worker blocked in
/// `pop`, which loom reports as a deadlock) and the item is never queued twice. With the
/// release as a plain store the worker's second look may read the old count and miss the
/// work (the store-buffering outcome the C++ memory model allows): loom finds it.
#[test]
fn loom_a_batch_that_releases_its_flag_never_loses_work() {
    ::loom::model(|| {
        let queue = Arc::new(ReadyQueue::new());
        let flag = Arc::new(ScheduleFlag::new());
        let published = Arc::new(AtomicUsize::new(0));

        let producer = {
            let (queue, flag, published) = (queue.clone(), flag.clone(), published.clone());
            thread::spawn(move || {
                for n in 1..=2 {
                    published.store(n, Ordering::Release);
                    if flag.set() {
                        queue.push(7);
                    }
                }
            })
        };
        let worker = {
            let (queue, flag, published) = (queue.clone(), flag.clone(), published.clone());
            thread::spawn(move || {
                let mut handled = 0;
                while handled < 2 {
                    let Popped::Item(item) = queue.pop(&mut 0, None) else {
                        panic!("no interrupt was sent")
                    };
                    assert_eq!(item, 7);
                    // The batch: everything published so far, flag held.
                    handled = published.load(Ordering::Acquire);
                    if published.load(Ordering::Acquire) > handled {
                        queue.push(7);
                        continue;
                    }
                    flag.clear();
                    if published.load(Ordering::Acquire) > handled && flag.set() {
                        queue.push(7);
                    }
                }
                handled
            })
        };
        producer.join().unwrap();
        assert_eq!(worker.join().unwrap(), 2);
        // At most one stale entry can remain (pushed after the last batch), never two.
        assert!(queue.len() <= 1);
    });
}

/// An interrupt reaches a worker blocked in `pop` even when it races with the wait.
#[test]
fn loom_interrupt_wakes_a_blocked_worker() {
    ::loom::model(|| {
        let queue: Arc<ReadyQueue<u32>> = Arc::new(ReadyQueue::new());
        let seen = queue.interrupts();
        let worker = {
            let queue = queue.clone();
            thread::spawn(move || queue.pop(&mut { seen }, None))
        };
        queue.interrupt();
        assert_eq!(worker.join().unwrap(), Popped::Interrupted);
    });
}

/// Two workers and two pushes: each item is popped exactly once.
#[test]
fn loom_each_item_is_dispatched_once() {
    ::loom::model(|| {
        let queue = Arc::new(ReadyQueue::new());
        let workers: Vec<_> = (0..2)
            .map(|_| {
                let queue = queue.clone();
                thread::spawn(move || match queue.pop(&mut 0, None) {
                    Popped::Item(item) => item,
                    other => panic!("unexpected {other:?}"),
                })
            })
            .collect();
        queue.push(1);
        queue.push(2);
        let mut got: Vec<u32> = workers.into_iter().map(|w| w.join().unwrap()).collect();
        got.sort_unstable();
        assert_eq!(got, vec![1, 2]);
    });
}

/// Two callbacks race for an exclusive gate: they never run together, and the one that
/// was parked is handed back by the release, so both run.
#[test]
fn loom_exclusive_gate_never_overlaps_and_never_forgets() {
    ::loom::model(|| {
        let gate = Arc::new(Gate::new(true));
        let inside = Arc::new(AtomicUsize::new(0));
        let ran = Arc::new(AtomicUsize::new(0));
        let run =
            |gate: &Gate<u32>, inside: &AtomicUsize, ran: &AtomicUsize, mut item: Option<u32>| {
                // What a worker does: run the item it holds, then any item the release hands it.
                while item.is_some() {
                    assert_eq!(
                        inside.fetch_add(1, Ordering::AcqRel),
                        0,
                        "two callbacks overlapped"
                    );
                    ran.fetch_add(1, Ordering::AcqRel);
                    inside.fetch_sub(1, Ordering::AcqRel);
                    item = gate.leave().and_then(|next| gate.enter_or_park(next));
                }
            };
        let threads: Vec<_> = (0..2u32)
            .map(|id| {
                let (gate, inside, ran) = (gate.clone(), inside.clone(), ran.clone());
                thread::spawn(move || {
                    let item = gate.enter_or_park(id);
                    run(&gate, &inside, &ran, item);
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        assert_eq!(
            ran.load(Ordering::Acquire),
            2,
            "a parked callback was forgotten"
        );
        assert!(!gate.is_held());
    });
}

#[test]
fn loom_reentrant_gate_admits_all() {
    ::loom::model(|| {
        let gate = Arc::new(Gate::new(false));
        let other = {
            let gate = gate.clone();
            thread::spawn(move || gate.enter_or_park(1).is_some())
        };
        assert!(gate.enter_or_park(2).is_some());
        assert!(other.join().unwrap());
    });
}

/// An executor worker starts a callback while another thread shuts the executor down:
/// either the callback shows in the slot `shutdown` reads, or it does not start.
#[test]
fn loom_a_callback_shows_in_the_shutdown_report_or_never_starts() {
    ::loom::model(|| {
        let slot = Arc::new(running::WorkerSlot::new());
        let shut_down = Arc::new(::loom::sync::atomic::AtomicBool::new(false));
        let worker = {
            let (slot, shut_down) = (slot.clone(), shut_down.clone());
            thread::spawn(move || slot.start(7, 1, &shut_down))
        };
        running::shut_down(&shut_down);
        let seen = slot.running().map(|call| call.entity);
        let started = worker.join().unwrap();
        assert!(
            !started || seen == Some(7),
            "a callback started that the shutdown did not see"
        );
    });
}

/// A callback ends while `shutdown` looks at its slot: either `shutdown` sees the slot
/// clear, or the worker learns it must notify the waiting `shutdown`.
#[test]
fn loom_shutdown_hears_every_callback_end() {
    ::loom::model(|| {
        let slot = Arc::new(running::WorkerSlot::new());
        let shut_down = Arc::new(::loom::sync::atomic::AtomicBool::new(false));
        assert!(slot.start(7, 1, &shut_down));
        let worker = {
            let (slot, shut_down) = (slot.clone(), shut_down.clone());
            thread::spawn(move || slot.end(&shut_down))
        };
        running::shut_down(&shut_down);
        let busy = slot.running().is_some();
        let notifies = worker.join().unwrap();
        assert!(
            !busy || notifies,
            "shutdown would wait for a callback whose end nobody reports"
        );
    });
}

/// The batch of `loom_a_batch_that_releases_its_flag_never_loses_work`, with the worker's
/// "is there more?" going through a subscription's backlog hint (`graph/backlog.rs`) as
/// `SubInner::has_work` does: the hint may say "yes" without looking at the queue, a "no"
/// looks. Every published message is taken (a lost one leaves the worker blocked in
/// `pop`: loom reports a deadlock), none twice, and at most one item stays queued.
#[test]
fn loom_a_backlog_hint_never_hides_work() {
    ::loom::model(|| {
        let queue = Arc::new(ReadyQueue::new());
        let flag = Arc::new(ScheduleFlag::new());
        // The subscription's message queue, as a count of messages pushed.
        let published = Arc::new(AtomicUsize::new(0));

        let producer = {
            let (queue, flag, published) = (queue.clone(), flag.clone(), published.clone());
            thread::spawn(move || {
                for _ in 0..2 {
                    published.fetch_add(1, Ordering::AcqRel);
                    if flag.set() {
                        queue.push(7);
                    }
                }
            })
        };
        let worker = {
            let (queue, flag, published) = (queue.clone(), flag.clone(), published.clone());
            thread::spawn(move || {
                let hint = backlog::Backlog::new();
                let mut taken = 0;
                let has_work = |hint: &backlog::Backlog, taken: usize| {
                    if hint.known() {
                        return true;
                    }
                    let queued = published.load(Ordering::Acquire) - taken;
                    hint.saw(queued);
                    queued > 0
                };
                while taken < 2 {
                    let Popped::Item(item) = queue.pop(&mut 0, None) else {
                        panic!("no interrupt was sent")
                    };
                    assert_eq!(item, 7);
                    // The batch, flag held: take while there is more.
                    loop {
                        if published.load(Ordering::Acquire) > taken {
                            taken += 1;
                            hint.took();
                        } else {
                            hint.none();
                            break;
                        }
                        if !has_work(&hint, taken) {
                            break;
                        }
                    }
                    // `requeue_held`: keep the flag if there is more, else release and look.
                    if has_work(&hint, taken) {
                        queue.push(7);
                        continue;
                    }
                    flag.clear();
                    if has_work(&hint, taken) && flag.set() {
                        queue.push(7);
                    }
                }
                assert!(published.load(Ordering::Acquire) >= taken, "taken twice");
                taken
            })
        };
        producer.join().unwrap();
        assert_eq!(worker.join().unwrap(), 2);
        assert!(queue.len() <= 1);
    });
}

/// Queues an item when woken, as a timer entity does.
struct QueueOnWake(Arc<ReadyQueue<u32>>);

impl std::task::Wake for QueueOnWake {
    fn wake(self: std::sync::Arc<Self>) {
        self.0.push(1);
    }
}

/// The timekeeper's handshake with the thread that spins its executor
/// (`Timekeeper::next_item`, the loop `ExecShared::next_item` runs): that thread looks
/// (wakes what is due), announces its wait and blocks on the ready queue while another
/// thread registers a due deadline, at any point. The look sees it, or the announcement
/// does, or the registration interrupts the wait: the spinning thread always gets the
/// timer's work (a lost wake-up would block it for ever, which loom reports). With no
/// other timer registered (an untimed wait), behind a later deadline (a timed wait,
/// untimed under loom) and behind one inside the spin window (yields).
#[test]
fn loom_a_registration_never_misses_the_keepers_wait() {
    use time::DeadlineHost;
    use timekeeper::Timekeeper;
    for later_timer in [None, Some(1_000_000), Some(1_000)] {
        ::loom::model(move || {
            let queue: Arc<ReadyQueue<u32>> = Arc::new(ReadyQueue::new());
            let interrupted = queue.clone();
            let keeper = Arc::new(Timekeeper::new(Box::new(move || interrupted.interrupt())));
            let mut later = None;
            if let Some(deadline) = later_timer {
                keeper.register(deadline, &mut later, std::task::Waker::noop());
            }
            let registrar = {
                let (keeper, queue) = (keeper.clone(), queue.clone());
                thread::spawn(move || {
                    let waker = std::task::Waker::from(std::sync::Arc::new(QueueOnWake(queue)));
                    let mut key = None;
                    keeper.register(0, &mut key, &waker);
                })
            };
            let mut seen = queue.interrupts();
            let wake = |due: &mut Vec<std::task::Waker>| due.drain(..).for_each(|w| w.wake());
            while !matches!(
                keeper.next_item(&queue, &mut seen, None, wake),
                Popped::Item(_)
            ) {}
            registrar.join().unwrap();
        });
    }
}

/// The lock-step handshake of `time/settle.rs`: a step marks an entity and sets its
/// schedule flag (pushing it if the flag was clear), then waits on its ticket; a worker
/// that takes the item clears the flag, then takes the mark, runs, and releases what it
/// took. The entity was already queued by an unrelated wake-up (its flag set), so the
/// worker may take it before, during or after the step's mark. Checked: the step never
/// returns before a run that began after the mark (a run that saw the step's time), and
/// never waits for ever (loom reports a lost release as a deadlock). Taking the mark
/// before clearing the flag (the order before issue 24) fails here: the step then waits
/// for a run that never comes.
#[test]
fn loom_a_step_waits_for_the_run_it_marked() {
    use std::time::{Duration, Instant};
    // Bounded preemptions keep the run short; the reversed order above is found within
    // the bound.
    let mut model = ::loom::model::Builder::new();
    model.preemption_bound = Some(4);
    /// What the step and the worker share.
    struct Shared {
        queue: ReadyQueue<u32>,
        flag: ScheduleFlag,
        mark: settle::Mark,
        /// The simulated time a run sees: 0 before the step, 1 after.
        time: AtomicUsize,
        /// The latest time a finished run saw.
        seen: AtomicUsize,
    }
    model.check(|| {
        let shared = Arc::new(Shared {
            queue: ReadyQueue::new(),
            flag: ScheduleFlag::new(),
            mark: settle::Mark::default(),
            time: AtomicUsize::new(0),
            seen: AtomicUsize::new(0),
        });
        // An unrelated wake-up queued the entity before the step.
        assert!(shared.flag.set());
        shared.queue.push(7);

        let step = {
            let s = shared.clone();
            thread::spawn(move || {
                let ticket = std::sync::Arc::new(settle::Ticket::default());
                s.time.store(1, Ordering::Release);
                // `EntityCore::notify` inside the step's scope.
                s.mark.set(ticket.clone());
                if s.flag.set() {
                    s.queue.push(7);
                }
                // loom has no time: the wait is untimed here.
                assert!(ticket.wait(Instant::now() + Duration::from_secs(1)));
                assert_eq!(
                    s.seen.load(Ordering::Acquire),
                    1,
                    "the step returned before the run it made due"
                );
                s.queue.interrupt();
            })
        };
        let worker = {
            let s = shared.clone();
            thread::spawn(move || {
                while let Popped::Item(_) = s.queue.pop(&mut 0, None) {
                    s.flag.clear();
                    let ticket = s.mark.take();
                    s.seen
                        .store(s.time.load(Ordering::Acquire), Ordering::Release);
                    if let Some(ticket) = ticket {
                        ticket.release();
                    }
                }
            })
        };
        step.join().unwrap();
        worker.join().unwrap();
    });
}
