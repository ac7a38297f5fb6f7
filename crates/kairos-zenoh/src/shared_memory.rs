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
//!   defragmentation, or that comes while the pool is still starting (zenoh starts it in
//!   the background when the session opens), is sent as ordinary bytes and counted in
//!   [`SharedMemoryStats::fallbacks`]: a publish never waits for the pool, and never loses
//!   the message. A program that wants its first large message in shared memory waits
//!   for the pool first ([`crate::ZenohTransport::wait_shared_memory`]);
//! - what arrives through shared memory is counted
//!   ([`SharedMemoryStats::received`]), so a user (and a test) can tell it is used.

use kairos::graph::transport::Wire;
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
}

/// One transport's use of the session's shared-memory pool; see the module docs.
pub(crate) struct SharedMemory {
    session: Session,
    /// The smallest payload written into shared memory; `None` when it is off.
    threshold: Option<usize>,
    /// The pool once zenoh has started it (`None`: it failed to start, or is disabled).
    /// Unset while it is starting: zenoh's own state moves to ready only when it looks at
    /// its start-up channel itself, so this module asks again rather than waiting on it.
    provider: OnceLock<Option<Arc<ShmProvider<PosixShmProviderBackend>>>>,
    sent: AtomicU64,
    fallbacks: AtomicU64,
    received: AtomicU64,
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

    /// Shared memory for `session`, opened with a configuration of `threshold`. Starting
    /// the pool is left to zenoh (lazily, at the first large payload, unless the
    /// configuration says `init`).
    pub(crate) fn new(session: &Session, threshold: Option<usize>) -> Arc<Self> {
        if threshold.is_some() {
            // Asks zenoh to start the pool now, in the background.
            let _ = session.get_shm_provider();
        }
        Arc::new(SharedMemory {
            session: session.clone(),
            threshold,
            provider: OnceLock::new(),
            sent: AtomicU64::new(0),
            fallbacks: AtomicU64::new(0),
            received: AtomicU64::new(0),
        })
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

    /// A buffer of `len` bytes from the pool, if it is up and has room now.
    fn buffer(&self, len: usize) -> Option<zenoh::shm::ZShmMut> {
        use zenoh::Wait;
        self.pool()?
            .alloc(len)
            .with_policy::<GarbageCollect<Defragment>>()
            .wait()
            .ok()
    }

    /// The pool, if zenoh has started it; never waits (a pool still starting is `None`
    /// now and asked for again next time; one that failed stays `None` for good).
    fn pool(&self) -> Option<&Arc<ShmProvider<PosixShmProviderBackend>>> {
        if let Some(known) = self.provider.get() {
            return known.as_ref();
        }
        match self.session.get_shm_provider() {
            ShmProviderState::Ready(provider) => {
                self.provider.get_or_init(|| Some(provider)).as_ref()
            }
            // Dropping the receiver leaves the pool's start-up message to zenoh.
            ShmProviderState::Initializing(_) => None,
            ShmProviderState::Disabled | ShmProviderState::Error => {
                self.provider.get_or_init(|| None).as_ref()
            }
        }
    }

    /// Waits until the pool is up, at most until `deadline`; false if it is off, failed to
    /// start, or is still starting at the deadline.
    pub(crate) fn wait_ready(&self, deadline: std::time::Instant) -> bool {
        if self.threshold.is_none() {
            return false;
        }
        loop {
            if self.pool().is_some() {
                return true;
            }
            // Known and not there (failed or off), or still starting at the deadline.
            if self.provider.get().is_some() || std::time::Instant::now() >= deadline {
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
        }
    }
}

/// zenoh's own default threshold, for a configuration that does not say.
const DEFAULT_THRESHOLD: usize = 3072;
