//! A transient-local subscription's way in: the history of every publisher's cache,
//! exactly once and in order, whatever races it.
//!
//! # Why
//! rmw_zenoh declares a transient-local subscription as a zenoh-ext advanced subscriber
//! that queries the publishers' caches (once at start, and once per publisher it detects
//! later). In zenoh-ext 1.10 that subscriber can strand the oldest cached samples: a reply
//! of a per-publisher query that arrives after the initial query finished is delivered
//! at once, setting the publisher's last delivered sequence number past the replies still
//! buffered, which are then dropped as duplicates (`advanced_subscriber.rs`: the buffering
//! test looks at the initial query only, the flush waits for the per-publisher one). A
//! late joiner then gets `[4, 5]` or `[5]` of a cache holding `[3, 4, 5]`, about one run in
//! ten, with nothing counted.
//!
//! # What this module promises
//! The advanced subscriber stays as rmw_zenoh declares it (the wire is unchanged: the same
//! queries, tokens and heartbeats), and a [`LateJoin`] sits between it and the subscription:
//! - kairos asks the same caches itself: the initial query (`<key>/@adv/**?_max=depth`),
//!   then one per publisher token seen on `<key>/@adv/pub/**` (at start and later);
//! - while any of those queries is answering, every sample (from the advanced subscriber
//!   or from kairos's replies) is held, keyed by its rmw_zenoh attachment's publisher gid
//!   and sequence number, so one sample that arrives twice is held once;
//! - when the last query ends (its final reply, or its timeout), the held samples go to
//!   the subscription in sequence order per publisher, each after the last one delivered
//!   from that publisher; from then on a sample is delivered if it is newer than the last
//!   one delivered from its publisher, and dropped as a duplicate otherwise.
//!
//! A sample without a readable attachment is passed on at once: the subscription's own
//! path counts it as malformed.
//!
//! Memory is bounded: the gate remembers the last sequence number of at most
//! [`MAX_SENDERS`] publishers, as the subscription's sequence tracker does; past that it
//! forgets the half heard from least recently (a history replay of a forgotten publisher
//! could then be delivered again).

use crate::attachment::{Attachment, Gid};
use crate::sender_state::MAX_SENDERS;
use parking_lot::Mutex;
use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;
use std::time::Duration;
use zenoh::Wait;
use zenoh::key_expr::KeyExpr;
use zenoh::query::{ConsolidationMode, Parameters, QueryTarget, ReplyKeyExpr, Selector};
use zenoh::sample::{Locality, Sample, SampleKind};

/// How long kairos's own history queries may take before their held samples go on: long
/// enough for a loaded machine, short enough that a cache that never answers cannot hold a
/// subscription's messages for long.
pub const QUERY_TIMEOUT: Duration = Duration::from_secs(10);

type Deliver = Box<dyn Fn(Sample) + Send + Sync>;

/// Orders and de-duplicates the samples of one transient-local subscription (see the
/// module docs).
pub struct LateJoin {
    state: Mutex<State>,
    deliver: Deliver,
}

#[derive(Default)]
struct State {
    /// History queries still answering.
    outstanding: usize,
    /// Samples held while they do, by publisher and sequence number.
    held: BTreeMap<(Gid, i64), Sample>,
    /// The last sequence number delivered from each publisher, with when it was heard
    /// (the value of `heard` then).
    last: HashMap<Gid, (i64, u64)>,
    /// Deliveries so far: the clock that says which publisher was heard least recently.
    heard: u64,
}

impl std::fmt::Debug for LateJoin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let state = self.state.lock();
        f.debug_struct("LateJoin")
            .field("outstanding", &state.outstanding)
            .field("held", &state.held.len())
            .field("publishers", &state.last.len())
            .finish()
    }
}

impl LateJoin {
    /// A gate in front of `deliver`, holding samples until its history queries end; it
    /// holds from the start: the initial query is counted already (see [`Self::start`]).
    pub fn new(deliver: impl Fn(Sample) + Send + Sync + 'static) -> Arc<Self> {
        Arc::new(Self {
            state: Mutex::new(State {
                outstanding: 1,
                ..State::default()
            }),
            deliver: Box::new(deliver),
        })
    }

    /// Takes a sample from the advanced subscriber or a history reply.
    pub fn offer(&self, sample: Sample) {
        let id = sample
            .attachment()
            .and_then(|bytes| Attachment::from_bytes(&bytes.to_bytes()).ok())
            .map(|a| (a.gid, a.sequence_number));
        let Some(id) = id else {
            return (self.deliver)(sample);
        };
        let mut state = self.state.lock();
        if state.outstanding > 0 {
            state.held.entry(id).or_insert(sample);
            return;
        }
        // Delivered under the lock, so two threads' samples keep one order per publisher.
        if state.is_new(id) {
            (self.deliver)(sample);
        }
    }

    /// Sends the initial history query of the data key `key` (counted when the gate was
    /// made), and declares the liveliness subscriber that queries each publisher's cache as
    /// its token appears; the returned declaration lives as long as the subscription.
    pub fn start(
        self: &Arc<Self>,
        session: &zenoh::Session,
        key: &str,
        depth: usize,
    ) -> zenoh::Result<kairos::graph::transport::Declaration> {
        let data = KeyExpr::try_from(key.to_owned())?;
        self.query(session, format!("{key}/@adv/**"), data.clone(), depth);
        let gate = Arc::downgrade(self);
        let session_for_tokens = session.clone();
        let tokens = session
            .liveliness()
            .declare_subscriber(format!("{key}/@adv/pub/**"))
            .history(true)
            .callback(move |token: Sample| {
                if token.kind() != SampleKind::Put {
                    return;
                }
                if let Some(gate) = gate.upgrade() {
                    gate.state.lock().outstanding += 1;
                    let cache = token.key_expr().to_string();
                    gate.query(&session_for_tokens, cache, data.clone(), depth);
                }
            })
            .wait()?;
        Ok(Box::new(tokens))
    }

    /// Asks the caches on `cache` for their last `depth` samples of `data`; held samples go
    /// on when this and every other query has ended. The caller counted the query.
    fn query(
        self: &Arc<Self>,
        session: &zenoh::Session,
        cache: String,
        data: KeyExpr<'static>,
        depth: usize,
    ) {
        let done = QueryDone(self.clone());
        let gate = self.clone();
        let mut parameters = Parameters::empty();
        parameters.insert("_max", depth.to_string());
        let Ok(cache) = KeyExpr::try_from(cache) else {
            return;
        };
        let _ = session
            .get(Selector::from((cache, parameters)))
            .callback(move |reply: zenoh::query::Reply| {
                let _ = &done;
                if let Ok(sample) = reply.into_result()
                    && data.intersects(sample.key_expr())
                {
                    gate.offer(sample);
                }
            })
            .consolidation(ConsolidationMode::None)
            .accept_replies(ReplyKeyExpr::Any)
            .target(QueryTarget::All)
            .allowed_destination(Locality::Remote)
            .timeout(QUERY_TIMEOUT)
            .wait();
    }

    /// A query ended: the last one lets the held samples go, in order.
    fn query_ended(&self) {
        let mut state = self.state.lock();
        state.outstanding -= 1;
        if state.outstanding > 0 {
            return;
        }
        let held = std::mem::take(&mut state.held);
        for (id, sample) in held {
            if state.is_new(id) {
                (self.deliver)(sample);
            }
        }
    }
}

impl State {
    /// Whether `(gid, seq)` comes after the last sample delivered from `gid`; records it.
    fn is_new(&mut self, (gid, seq): (Gid, i64)) -> bool {
        self.heard += 1;
        let heard = self.heard;
        match self.last.get_mut(&gid) {
            Some((last, _)) if *last >= seq => false,
            Some(entry) => {
                *entry = (seq, heard);
                true
            }
            None => {
                if self.last.len() >= MAX_SENDERS {
                    // Forget the half heard least recently: O(n log n) once per n/2 new
                    // publishers.
                    let mut times: Vec<u64> = self.last.values().map(|&(_, h)| h).collect();
                    let (_, median, _) = times.select_nth_unstable(MAX_SENDERS / 2);
                    let median = *median;
                    self.last.retain(|_, &mut (_, h)| h > median);
                }
                self.last.insert(gid, (seq, heard));
                true
            }
        }
    }
}

/// Ends a query when zenoh drops its callback (after the final reply or the timeout).
struct QueryDone(Arc<LateJoin>);

impl Drop for QueryDone {
    fn drop(&mut self) {
        self.0.query_ended();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gid(n: usize) -> Gid {
        let mut bytes = [0u8; 16];
        bytes[..8].copy_from_slice(&(n as u64).to_le_bytes());
        bytes
    }

    #[test]
    fn publishers_are_remembered_up_to_the_bound_the_most_recent_kept() {
        let mut state = State::default();
        for n in 0..MAX_SENDERS * 3 {
            assert!(state.is_new((gid(n), 1)), "publisher {n}'s first sample");
            assert!(
                state.last.len() <= MAX_SENDERS,
                "{} remembered",
                state.last.len()
            );
        }
        // The most recent publisher is still known: a replay of its sample is a duplicate,
        // its next sample is new.
        let recent = gid(MAX_SENDERS * 3 - 1);
        assert!(!state.is_new((recent, 1)));
        assert!(state.is_new((recent, 2)));
    }

    #[test]
    fn a_publisher_heard_often_survives_the_forgetting() {
        let mut state = State::default();
        let talker = gid(usize::MAX);
        let mut seq = 0;
        for n in 0..MAX_SENDERS * 2 {
            seq += 1;
            assert!(state.is_new((talker, seq)));
            assert!(state.is_new((gid(n), 1)));
        }
        assert!(
            !state.is_new((talker, seq)),
            "still remembered: a duplicate"
        );
    }
}
