//! The streaming analyses: everything `callbacks`, `timers`, `queues`, `chains`, `flow`
//! and the HTML report need, gathered record by record while the trace is read, in
//! memory that does not grow with the trace's length.
//!
//! A [`Digest`] is fed by a streaming [`Builder`](crate::Builder) (callback runs, timer
//! runs, queue changes, and each message tree once it is finished), or from a whole
//! [`Model`] ([`Digest::from_model`]): both go through the same accumulators, so an
//! analysis gives the same result either way. What each accumulator keeps is bounded:
//! per callback, timer, queue and chain a [`Recorder`](crate::stats::Recorder) (exact up
//! to a number of samples, then a histogram), a bounded list of points or drops, and a
//! fixed number of the slowest runs.

use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap, HashSet};

use crate::callbacks::CallbackRuns;
use crate::chains::ChainAcc;
use crate::flow::FlowAcc;
use crate::message_graph::{MessageGraph, ModelGraph};
use crate::model::{CallbackId, Message, MessageId, Model, Queue, QueueDrop, QueueKind, TimerId};
use crate::queues::{DepthSeries, QueueDepths};
use crate::timers::TimerRuns;

/// The analyses' accumulators; see the module docs.
#[derive(Debug, Default)]
pub struct Digest {
    /// Per callback, its run durations; and the slowest runs.
    pub callbacks: CallbackRuns,
    /// Per timer, its periods and lateness.
    pub timers: TimerRuns,
    /// Per queue, its depth and drops.
    pub queues: QueueDepths,
    /// Per chain, its stage latencies.
    pub chains: ChainAcc,
    /// The one message `flow` follows, when asked.
    pub flow: Option<FlowAcc>,
    /// Deliveries that were taken or queued and whose callback never started (by the
    /// end of the trace, or within the streaming horizon); one a recorder wrote into its
    /// bag has reached its end.
    pub never_reached: u64,
    /// Message trees handed over early because too many messages were followed.
    pub retired_early: u64,
    inferred: Inferred,
    /// Keep no analysis: the builder follows messages only to link and count them.
    counts_only: bool,
}

/// ros2_tracing records no enqueue: a subscription's depth is inferred from when each
/// message it took was sent and taken. The changes wait here until no message still
/// followed can add an earlier one (see [`Digest::watermark`]).
#[derive(Debug, Default)]
struct Inferred {
    pending: BinaryHeap<Reverse<(i64, i64, usize)>>,
    queues: BTreeMap<usize, (Queue, DepthSeries)>,
    real: HashSet<usize>,
    real_seen: usize,
}

impl Digest {
    /// A digest that keeps no analysis: for `summary`, whose builder follows messages
    /// only to count how each was linked.
    pub fn counts_only() -> Self {
        Self {
            counts_only: true,
            ..Self::default()
        }
    }

    /// A digest that also follows one message for `flow`.
    pub fn with_flow(flow: FlowAcc) -> Self {
        Self {
            flow: Some(flow),
            ..Self::default()
        }
    }

    /// Everything a whole model holds, through the same accumulators.
    pub fn from_model(m: &Model) -> Self {
        let g = ModelGraph::new(m);
        let mut d = Self {
            callbacks: CallbackRuns::from_model(m),
            timers: TimerRuns::from_model(m),
            queues: QueueDepths::from_model(m),
            ..Self::default()
        };
        for id in g.ids() {
            d.chains.root(m, &g, id);
        }
        d
    }

    pub(crate) fn published(&mut self, id: MessageId, msg: &Message) {
        if let Some(f) = &mut self.flow {
            f.published(id, msg);
        }
    }

    pub(crate) fn callback_run(&mut self, cb: CallbackId, start: i64, duration: i64) {
        if self.counts_only {
            return;
        }
        self.callbacks.run(cb, start, duration);
    }

    pub(crate) fn timer_fired(&mut self, t: TimerId, at: i64, period: Option<i64>) {
        if self.counts_only {
            return;
        }
        self.timers.fired(t, at, period);
    }

    pub(crate) fn timer_scheduled(&mut self, t: TimerId, s: i64, a: i64, period: Option<i64>) {
        if self.counts_only {
            return;
        }
        self.timers.scheduled(t, s, a, period);
    }

    pub(crate) fn queue_depth(&mut self, q: usize, at: i64, depth: u64) {
        if self.counts_only {
            return;
        }
        self.queues.depth(q, at, depth);
    }

    pub(crate) fn queue_drop(&mut self, q: usize, drop: QueueDrop) {
        if self.counts_only {
            return;
        }
        self.queues.drop(q, drop);
    }

    /// A finished tree (`early`: handed over before it was quiet).
    /// `ids` are the tree's messages, `root` first; `tree` holds them.
    pub(crate) fn tree(
        &mut self,
        m: &Model,
        tree: &impl MessageGraph,
        root: MessageId,
        ids: &[MessageId],
        early: bool,
    ) {
        if self.counts_only {
            return;
        }
        if early {
            self.retired_early += 1;
        }
        self.chains.root(m, tree, root);
        if let Some(f) = &mut self.flow {
            f.tree(tree, ids);
        }
        for &id in ids {
            let Some(msg) = tree.message(id) else {
                continue;
            };
            for d in &msg.deliveries {
                if d.callback_start.is_none()
                    && d.dropped.is_none()
                    && d.written.is_none()
                    && (d.taken.is_some() || d.enqueued.is_some())
                {
                    self.never_reached += 1;
                }
                if let (Some(s), None, Some(sent), Some(taken)) =
                    (d.subscription, d.enqueued, msg.sent, d.taken)
                {
                    self.inferred.pending.push(Reverse((sent, 1, s.0)));
                    self.inferred.pending.push(Reverse((taken, -1, s.0)));
                }
            }
        }
    }

    /// Applies the inferred queue changes before `upto`: no message still followed can
    /// add a change before the time it was created, and none is older than `upto`.
    pub(crate) fn watermark(&mut self, m: &Model, upto: i64) {
        if self.counts_only {
            return;
        }
        let inf = &mut self.inferred;
        if inf.real_seen != m.queues.len() {
            inf.real.extend(
                m.queues
                    .iter()
                    .filter(|q| q.kind == QueueKind::Subscription && !q.inferred)
                    .map(|q| q.endpoint),
            );
            inf.real_seen = m.queues.len();
        }
        while let Some(&Reverse((at, delta, s))) = inf.pending.peek() {
            if at >= upto {
                break;
            }
            inf.pending.pop();
            if inf.real.contains(&s) {
                continue;
            }
            let (q, series) = inf.queues.entry(s).or_insert_with(|| {
                (
                    Queue {
                        kind: QueueKind::Subscription,
                        endpoint: s,
                        depth: Vec::new(),
                        enqueued: 0,
                        dequeued: 0,
                        drops: Vec::new(),
                        inferred: true,
                        current: 0,
                    },
                    DepthSeries::default(),
                )
            });
            q.current = q.current.saturating_add_signed(delta);
            if delta > 0 {
                q.enqueued += 1;
            } else {
                q.dequeued += 1;
            }
            series.push(at, q.current);
        }
    }

    /// Called once the trace ended and every tree was handed over: the inferred queues
    /// join the model's, after its recorded ones, in subscription order.
    pub(crate) fn finish(&mut self, m: &mut Model) {
        self.watermark(m, i64::MAX);
        for (s, (q, series)) in std::mem::take(&mut self.inferred.queues) {
            if self.inferred.real.contains(&s) {
                continue;
            }
            self.queues.set(m.queues.len(), series);
            m.queues.push(q);
        }
    }
}
