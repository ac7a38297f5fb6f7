//! Which parts of each event a reader decodes. Every event's class, timestamp, CPU and
//! contexts are always decoded; the payload only for the classes a [`Selection`]
//! accepts, and the packet context is attached to events only when asked (`dump` prints
//! it, analyses do not read it). A payload not selected is walked by a compiled plan to
//! find the next event, without building any value.

use std::fmt;
use std::sync::Arc;

use super::metadata::EventClass;

type ClassFilter = dyn Fn(&EventClass) -> bool + Send + Sync;

/// What to decode; [`Selection::all`] decodes everything.
#[derive(Clone)]
pub struct Selection {
    payload: Option<Arc<ClassFilter>>,
    packet_context: bool,
    threads: Option<usize>,
    batch: Option<usize>,
}

impl Selection {
    /// Every field of every event, and the packet context.
    pub fn all() -> Self {
        Self {
            payload: None,
            packet_context: true,
            threads: None,
            batch: None,
        }
    }

    /// Payloads of the event classes `keep` accepts only; no packet context.
    pub fn payloads(keep: impl Fn(&EventClass) -> bool + Send + Sync + 'static) -> Self {
        Self {
            payload: Some(Arc::new(keep)),
            packet_context: false,
            threads: None,
            batch: None,
        }
    }

    /// Whether events carry their packet's context.
    pub fn with_packet_context(mut self, yes: bool) -> Self {
        self.packet_context = yes;
        self
    }

    /// Decode on `n` threads besides the caller's (0: all on the caller's thread).
    /// By default `KAIROS_READ_THREADS`, else none (decoding on the caller's thread is
    /// the faster here: see the merge module). The
    /// events and their order are the same for every `n`.
    pub fn with_threads(mut self, n: usize) -> Self {
        self.threads = Some(n);
        self
    }

    pub(crate) fn threads(&self) -> Option<usize> {
        self.threads
    }

    /// Decode `n` events of a stream at a time on the caller's thread (at least 1). By
    /// default 1 for up to 8 streams, 32 for more: with many streams, decoding a few
    /// events of a stream while it is in the cache costs less than coming back to it
    /// for each. The events and their order are the same for every `n`.
    pub fn with_batch(mut self, n: usize) -> Self {
        self.batch = Some(n.max(1));
        self
    }

    pub(crate) fn batch(&self) -> Option<usize> {
        self.batch
    }

    pub(crate) fn wants_payload(&self, class: &EventClass) -> bool {
        self.payload.as_ref().is_none_or(|keep| keep(class))
    }

    pub(crate) fn wants_packet_context(&self) -> bool {
        self.packet_context
    }
}

impl Default for Selection {
    fn default() -> Self {
        Self::all()
    }
}

impl fmt::Debug for Selection {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Selection")
            .field("every_payload", &self.payload.is_none())
            .field("packet_context", &self.packet_context)
            .field("threads", &self.threads)
            .field("batch", &self.batch)
            .finish()
    }
}
