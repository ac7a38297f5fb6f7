//! Per-thread event buffers and the tracepoints' entry into them.
//!
//! Each thread that traces gets its own bounded queue ([`ThreadStream`]) the first time it
//! emits in a session; only that thread pushes to it and only the writer thread pops, so
//! the hot path takes no lock. A session is identified by a generation number: a thread
//! whose cached queue belongs to an older generation registers anew (once per session,
//! under a lock that the writer only holds to list the queues).

use super::clock;
use crate::schema::Event;
use crossbeam_queue::ArrayQueue;
use parking_lot::Mutex;
use std::cell::RefCell;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

/// One traced event as it waits in a queue: its monotonic timestamp and payload.
#[derive(Debug)]
pub(crate) struct Record {
    pub(crate) timestamp: u64,
    pub(crate) event: Event,
}

/// A thread's queue of records and what its stream's event context says about it.
#[derive(Debug)]
pub(crate) struct ThreadStream {
    /// The stream's `stream_instance_id`, unique in the session.
    pub(crate) instance_id: u64,
    pub(crate) vtid: i32,
    /// The thread's name when it first traced, as LTTng-UST's `procname` context gives it.
    pub(crate) procname: String,
    /// The CPU the thread was on when it first traced.
    pub(crate) cpu_id: u32,
    queue: ArrayQueue<Record>,
    discarded: AtomicU64,
}

impl ThreadStream {
    fn push(&self, record: Record) {
        if self.queue.push(record).is_err() {
            self.discarded.fetch_add(1, Ordering::Relaxed);
        }
    }

    pub(crate) fn pop(&self) -> Option<Record> {
        self.queue.pop()
    }

    /// Records queued now.
    pub(crate) fn len(&self) -> usize {
        self.queue.len()
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.queue.is_empty()
    }

    /// Events discarded so far because the queue was full.
    pub(crate) fn discarded(&self) -> u64 {
        self.discarded.load(Ordering::Relaxed)
    }
}

/// The queues of one session.
#[derive(Debug)]
pub(crate) struct Registry {
    generation: u64,
    capacity: usize,
    next_instance: AtomicU64,
    streams: Mutex<Vec<Arc<ThreadStream>>>,
}

impl Registry {
    /// A snapshot of the current queues, to drain without holding the lock.
    pub(crate) fn streams(&self) -> Vec<Arc<ThreadStream>> {
        self.streams.lock().clone()
    }

    /// Forgets the queues of threads that have exited once they are drained, and returns
    /// them.
    pub(crate) fn retire_finished(&self) -> Vec<Arc<ThreadStream>> {
        let mut retired = Vec::new();
        self.streams.lock().retain(|stream| {
            // Only the registry holds it: its thread has exited and cannot push again.
            let finished = Arc::strong_count(stream) == 1 && stream.is_empty();
            if finished {
                retired.push(Arc::clone(stream));
            }
            !finished
        });
        retired
    }
}

static ENABLED: AtomicBool = AtomicBool::new(false);
static GENERATION: AtomicU64 = AtomicU64::new(0);
static ACTIVE: Mutex<Option<Arc<Registry>>> = Mutex::new(None);

/// True while a session records: the single relaxed load every tracepoint makes.
#[inline]
pub(crate) fn enabled() -> bool {
    ENABLED.load(Ordering::Relaxed)
}

/// Makes `capacity`-event queues for a new session and turns tracing on; `None` if a
/// session is already active.
pub(crate) fn activate(capacity: usize) -> Option<Arc<Registry>> {
    let mut active = ACTIVE.lock();
    if active.is_some() {
        return None;
    }
    let generation = GENERATION.load(Ordering::Relaxed) + 1;
    let registry = Arc::new(Registry {
        generation,
        capacity,
        next_instance: AtomicU64::new(0),
        streams: Mutex::new(Vec::new()),
    });
    *active = Some(Arc::clone(&registry));
    GENERATION.store(generation, Ordering::Release);
    ENABLED.store(true, Ordering::Release);
    Some(registry)
}

/// Turns tracing off and detaches the session's queues from the threads.
pub(crate) fn deactivate(registry: &Registry) {
    let mut active = ACTIVE.lock();
    if active
        .as_ref()
        .is_some_and(|r| r.generation == registry.generation)
    {
        ENABLED.store(false, Ordering::Release);
        *active = None;
        GENERATION.store(registry.generation + 1, Ordering::Release);
    }
}

struct Local {
    generation: u64,
    stream: Option<Arc<ThreadStream>>,
}

thread_local! {
    static LOCAL: RefCell<Local> = const {
        RefCell::new(Local { generation: 0, stream: None })
    };
}

fn register(generation: u64) -> Option<Arc<ThreadStream>> {
    let active = ACTIVE.lock();
    let registry = active.as_ref().filter(|r| r.generation == generation)?;
    let stream = Arc::new(ThreadStream {
        instance_id: registry.next_instance.fetch_add(1, Ordering::Relaxed),
        vtid: rustix::thread::gettid().as_raw_pid(),
        procname: rustix::thread::name()
            .map(|name| name.to_string_lossy().into_owned())
            .unwrap_or_default(),
        cpu_id: u32::try_from(rustix::thread::sched_getcpu()).unwrap_or(u32::MAX),
        queue: ArrayQueue::new(registry.capacity),
        discarded: AtomicU64::new(0),
    });
    registry.streams.lock().push(Arc::clone(&stream));
    Some(stream)
}

/// Time-stamps `event` and queues it on the calling thread's stream.
#[inline(never)]
pub(crate) fn emit(event: Event) {
    // `try_with` fails only while the thread is being torn down (a tracepoint in a
    // thread-local destructor that runs after this one's): the thread's queue is gone, so
    // the event gets a stream of its own. Rare, and better than losing it.
    let mut event = Some(event);
    let torn_down = LOCAL
        .try_with(|local| {
            // A re-entrant call (impossible today: nothing here traces) would find it borrowed.
            let Ok(mut local) = local.try_borrow_mut() else {
                return;
            };
            let generation = GENERATION.load(Ordering::Acquire);
            if local.generation != generation {
                local.stream = register(generation);
                local.generation = generation;
            }
            if let (Some(stream), Some(event)) = (&local.stream, event.take()) {
                stream.push(Record {
                    timestamp: clock::now_ns(),
                    event,
                });
            }
        })
        .is_err();
    if torn_down
        && let Some(event) = event
        && let Some(stream) = register(GENERATION.load(Ordering::Acquire))
    {
        stream.push(Record {
            timestamp: clock::now_ns(),
            event,
        });
    }
}
