//! Large messages between the processes of one host through Zenoh's shared memory, as
//! rmw_zenoh offers it.
//!
//! What this module promises:
//! - it is off unless the session's configuration turns it on
//!   (`transport/shared_memory/enabled`; off in kairos's defaults as in rmw_zenoh's, see
//!   [`crate::config`]);
//! - when on, a payload of at least the threshold
//!   (`transport/shared_memory/transport_optimization/message_size_threshold`) is written
//!   once, straight into a buffer of the session's shared-memory pool: no copy on the way
//!   to a subscriber of the same host that has shared memory on too (it maps the buffer,
//!   and decoding is its one copy); a subscriber on another host, or without shared
//!   memory, gets the same bytes over the network (zenoh copies them out for it);
//! - a payload that finds no room in the pool, after zenoh's garbage collection and
//!   defragmentation, or that comes while the pool is still starting, is sent as
//!   ordinary bytes and counted in [`SharedMemoryStats::fallbacks`]: a publish never
//!   waits for the pool, and never loses the message. A program that wants its first
//!   large message in shared memory waits for the pool first
//!   ([`crate::ZenohTransport::wait_shared_memory`]);
//! - the pool is started when the session opens, on a thread of its own that ends once
//!   the pool is up (or failed, or the session closed). That thread also makes the
//!   pool's first allocation, which costs ~10 ms of zenoh's own set-up (measured on a
//!   2-core VM): publishers see the pool only after it, so no publish pays it;
//! - what arrives through shared memory is counted
//!   ([`SharedMemoryStats::received`]), so a user (and a test) can tell it is used;
//! - a loaned message (`Publisher::loan`) of at least the threshold is written in a
//!   buffer of the pool, lent to it ([`SharedMemoryStats::lent`]) and sent as it is: the
//!   publish copies nothing. A loan that finds no room is a buffer of the heap instead,
//!   counted in `fallbacks` (the loan never waits for the pool either).

use kairos::graph::transport::{LentBuffer, Wire, Written};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};
use zenoh::Session;
use zenoh::bytes::ZBytes;
use zenoh::shm::{
    Defragment, GarbageCollect, PosixShmProviderBackend, ShmProvider, ShmProviderState,
};

/// Counts of payloads through shared memory, over one transport's publishers and
/// subscriptions.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SharedMemoryStats {
    /// Payloads published straight into a shared-memory buffer.
    pub sent: u64,
    /// Payloads at or above the threshold sent as ordinary bytes: the pool was full (or
    /// still starting), so they went over the network path instead.
    pub fallbacks: u64,
    /// Samples that arrived in shared memory.
    pub received: u64,
    /// Buffers lent for loaned messages to be written in place (those published count in
    /// `sent` too).
    pub lent: u64,
}

/// One transport's use of the session's shared-memory pool; see the module docs.
pub(crate) struct SharedMemory {
    /// The smallest payload written into shared memory; `None` when it is off.
    threshold: Option<usize>,
    /// The pool once it is started and has made its first allocation (`None`: it failed
    /// to start, or is disabled). Unset while it is starting; set by the start-up thread
    /// only.
    provider: OnceLock<Option<Pool>>,
    sent: AtomicU64,
    fallbacks: AtomicU64,
    received: AtomicU64,
    lent: AtomicU64,
}

impl SharedMemory {
    /// The threshold `config` sets; `None` when shared memory is off.
    pub(crate) fn threshold(config: &zenoh::Config) -> Option<usize> {
        let get = |key: &str| config.get_json(key).ok();
        let enabled = get("transport/shared_memory/enabled").as_deref() == Some("true");
        let threshold =
            get("transport/shared_memory/transport_optimization/message_size_threshold")
                .and_then(|t| t.parse::<usize>().ok());
        enabled.then(|| threshold.unwrap_or(DEFAULT_THRESHOLD))
    }

    /// Shared memory for `session`, opened with a configuration of `threshold`; starts the
    /// pool in the background when `threshold` says shared memory is on.
    pub(crate) fn new(session: &Session, threshold: Option<usize>) -> Arc<Self> {
        let shm = Arc::new(SharedMemory {
            threshold,
            provider: OnceLock::new(),
            sent: AtomicU64::new(0),
            fallbacks: AtomicU64::new(0),
            received: AtomicU64::new(0),
            lent: AtomicU64::new(0),
        });
        if threshold.is_some() {
            let (session, weak) = (session.clone(), Arc::downgrade(&shm));
            let started = std::thread::Builder::new()
                .name("kairos-shm-pool".into())
                .spawn(move || start(&session, &weak));
            if started.is_err() {
                // No thread, no pool: every large payload goes as bytes, counted.
                let _ = shm.provider.set(None);
            }
        }
        shm
    }

    /// Whether payloads may go through shared memory.
    pub(crate) fn enabled(&self) -> bool {
        self.threshold.is_some()
    }

    /// The payload of `message`: in shared memory when it is large enough and there is
    /// room, else ordinary bytes. `None` if `message` is not of `wire`'s type.
    pub(crate) fn payload(
        &self,
        wire: &Wire,
        message: &(dyn std::any::Any + Send + Sync),
    ) -> Option<ZBytes> {
        let Some(threshold) = self.threshold else {
            return wire.encode(message).map(ZBytes::from);
        };
        let len = wire.encoded_len(message)?;
        if len < threshold {
            return wire.encode(message).map(ZBytes::from);
        }
        match self.buffer(len) {
            Some(mut buffer) => {
                if !wire.encode_into(message, &mut buffer) {
                    return None;
                }
                self.sent.fetch_add(1, Ordering::Relaxed);
                Some(ZBytes::from(buffer))
            }
            None => {
                self.fallbacks.fetch_add(1, Ordering::Relaxed);
                wire.encode(message).map(ZBytes::from)
            }
        }
    }

    /// A buffer of the pool for a loaned message's payload of at most `capacity` bytes;
    /// `None` when shared memory is off, the payload is under the threshold, or the pool
    /// has no room now (counted in fallbacks).
    pub(crate) fn lend(&self, capacity: usize) -> Option<Box<dyn LentBuffer>> {
        if capacity < self.threshold? {
            return None;
        }
        // No room: the loan is a buffer of the heap, and its publish tries the pool again
        // (a fallback is counted there if there is still no room).
        let buffer = self.buffer(capacity)?;
        self.lent.fetch_add(1, Ordering::Relaxed);
        Some(Box::new(PoolBuffer(buffer)))
    }

    /// The payload `written` in a buffer of a pool, as it is: `Err` if the buffer is not
    /// one, or the payload is under the threshold after all (the buffer was lent for an
    /// upper bound of its length): it then goes as bytes, as any payload under it.
    pub(crate) fn lent_payload(&self, written: Written) -> Result<ZBytes, Written> {
        use zenoh::shm::OwnedShmBuf;
        let fits = written.buffer().as_any().is::<PoolBuffer>()
            && self.threshold.is_some_and(|t| written.len() >= t.max(1));
        if !fits {
            return Err(written);
        }
        let len = std::num::NonZeroUsize::new(written.len()).expect("checked above");
        let Ok(buffer) = written.into_buffer().into_any().downcast::<PoolBuffer>() else {
            unreachable!("checked above")
        };
        let PoolBuffer(mut buffer) = *buffer;
        // Never fails: the payload was written inside the buffer's capacity.
        let _ = buffer.try_resize(len);
        self.sent.fetch_add(1, Ordering::Relaxed);
        Ok(ZBytes::from(buffer))
    }

    /// A buffer of `len` bytes from the pool, if it is up and has room now.
    fn buffer(&self, len: usize) -> Option<zenoh::shm::ZShmMut> {
        use zenoh::Wait;
        self.pool()?
            .alloc(len)
            .with_policy::<GarbageCollect<Defragment>>()
            .wait()
            .ok()
    }

    /// The pool, once started; never waits.
    fn pool(&self) -> Option<&Pool> {
        self.provider.get()?.as_ref()
    }

    /// Waits until the pool is up, at most until `deadline`; false if it is off, failed to
    /// start, or is still starting at the deadline.
    pub(crate) fn wait_ready(&self, deadline: std::time::Instant) -> bool {
        if self.threshold.is_none() {
            return false;
        }
        loop {
            if let Some(known) = self.provider.get() {
                return known.is_some();
            }
            if std::time::Instant::now() >= deadline {
                return false;
            }
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
    }

    /// Counts a sample that arrived; `payload` is its bytes.
    pub(crate) fn note_arrival(&self, payload: &ZBytes) {
        if payload.as_shm().is_some() {
            self.received.fetch_add(1, Ordering::Relaxed);
        }
    }

    pub(crate) fn stats(&self) -> SharedMemoryStats {
        SharedMemoryStats {
            sent: self.sent.load(Ordering::Relaxed),
            fallbacks: self.fallbacks.load(Ordering::Relaxed),
            received: self.received.load(Ordering::Relaxed),
            lent: self.lent.load(Ordering::Relaxed),
        }
    }
}

type Pool = Arc<ShmProvider<PosixShmProviderBackend>>;

/// A buffer of the pool, lent for a message to be written in place.
struct PoolBuffer(zenoh::shm::ZShmMut);

// SAFETY: a `ZShmMut` is a buffer of the pool held by this value alone (zenoh hands it
// out once, initialized); its bytes live in a mapped segment, so they do not move with it.
unsafe impl LentBuffer for PoolBuffer {
    fn as_mut_ptr(&mut self) -> *mut u8 {
        self.0.as_mut().as_mut_ptr()
    }
    fn capacity(&self) -> usize {
        self.0.len()
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
    fn into_any(self: Box<Self>) -> Box<dyn std::any::Any + Send> {
        self
    }
}

/// How long the pool may take to start before it counts as failed (large payloads then go
/// as bytes, counted in fallbacks).
const START_LIMIT: std::time::Duration = std::time::Duration::from_secs(60);

/// The start-up thread: asks zenoh for the pool until it is up, makes its first
/// allocation, then hands it to publishers. Ends when the pool is known (up, failed, or
/// not up within [`START_LIMIT`]), the session closes, or the transport is gone.
fn start(session: &Session, shm: &std::sync::Weak<SharedMemory>) {
    use zenoh::Wait;
    let (started, mut pause) = (
        std::time::Instant::now(),
        std::time::Duration::from_millis(1),
    );
    let pool = loop {
        match session.get_shm_provider() {
            ShmProviderState::Ready(pool) => break Some(pool),
            // The receiver is dropped: zenoh moves its state to ready only when it reads
            // its own start-up channel.
            ShmProviderState::Initializing(_) => {}
            ShmProviderState::Disabled | ShmProviderState::Error => break None,
        }
        if session.is_closed() || shm.strong_count() == 0 || started.elapsed() > START_LIMIT {
            break None;
        }
        std::thread::sleep(pause);
        pause = (pause * 2).min(std::time::Duration::from_millis(10));
    };
    if let Some(pool) = &pool {
        // Pays zenoh's one-time set-up of the first allocation here, not in a publish.
        drop(
            pool.alloc(1)
                .with_policy::<GarbageCollect<Defragment>>()
                .wait(),
        );
    }
    if let Some(shm) = shm.upgrade() {
        let _ = shm.provider.set(pool);
    }
}

/// zenoh's own default threshold, for a configuration that does not say.
const DEFAULT_THRESHOLD: usize = 3072;
