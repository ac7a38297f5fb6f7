//! The settle protocol: how a lock-step replay learns that the work a message caused has
//! run in every kairos process before it moves simulated time again.
//!
//! In one process, a step of the simulated clock waits for the callbacks it made due
//! (`kairos::time`'s settle tickets). Across processes, a callback's publish, call or
//! reply leaves its process and starts work elsewhere that no ticket of the sender sees.
//! So each transport keeps a board (`Board`) and answers questions about it:
//! - `@kairos/<domain>/settle/<zid>`, a queryable per transport, answers a [`Snapshot`]
//!   as JSON: whether the process is quiet (no delivery from the network under way, no run
//!   such a delivery made ready left, see [`kairos::time::Inflow`]), the last sequence
//!   number each of its publishers sent, the last each of its subscriptions heard from each
//!   remote publisher, and the calls it waits on;
//! - the asking side, a [`Settler`], queries every transport and decides: the system has
//!   settled when every process is quiet, no call is outstanding, and every subscription
//!   has heard the last message of every publisher of its topic and type in another
//!   process. A message still on the wire is sent and not heard; work it then causes can
//!   only start after its receiver's answer, so it is caught by that pair's numbers (each
//!   answer reads the numbers first and whether it is quiet after, and counts deliveries
//!   around both).
//!
//! Moving time is a step of its own. A `/clock` sample starts work in every process at
//! once (each process's timers), and one process's timer output could reach another
//! before that one has moved its own clock: the receiver would run it at an older time,
//! or between its own timers, differently each run. So while a replay asks, a transport
//! *holds* each `/clock` sample instead of applying it, and closes its gate: samples that
//! arrive while a clock is held or being applied wait in arrival order. The replay, once
//! every process has heard the sample, asks each to step (`step` in the question's
//! payload): the process applies the held time (its own timers run, settled as any step
//! is), then opens its gate and delivers what waited. So every process's timers of a step
//! run before any other process's output of that step reaches it. `end` stops tracking
//! and holding; so does a question-less [`LEASE`] (a replay that was killed), after which
//! a `/clock` sample is applied at once again.
//!
//! What it does not see: work that starts on its own (a thread, a timer on the steady or
//! system clock), work made ready on an executor that is not spinning (see
//! `kairos::time::Inflow`), and processes that are not kairos (ROS 2 peers) or that do not
//! answer within the round's timeout. A transport starts tracking at its first question,
//! so the first round never settles.
//!
//! Like the shared waits (`crate::shared_waits`), this lives under `@kairos`, a verbatim
//! chunk no rmw_zenoh key expression matches: ROS 2 peers never see it.

use crate::attachment::Gid;
use crate::sender_state::SequenceTracker;
use crate::shared_waits::PRIVATE_SPACE;
use kairos::time::Inflow;
use parking_lot::Mutex;
use serde::{Deserialize, Serialize};
use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Weak};
use std::time::{Duration, Instant};
use zenoh::query::{ConsolidationMode, QueryTarget};
use zenoh::{Session, Wait};

/// How long a transport keeps holding `/clock` after the last question of a replay.
pub const LEASE: Duration = Duration::from_secs(10);

/// Work a delivery hands over once the gate lets it.
pub(crate) type Admitted = Box<dyn FnOnce() + Send>;

/// One transport's record of what it sent, heard and waits for.
#[derive(Default)]
pub(crate) struct Board {
    inflow: Inflow,
    next_id: AtomicU64,
    sent: Mutex<Vec<Weak<Sent>>>,
    heard: Mutex<Vec<Weak<Heard>>>,
    calls: Mutex<HashMap<String, usize>>,
    gate: Mutex<Gate>,
    /// `gate.closed`, readable without the lock (the receive path's one check).
    closed: std::sync::atomic::AtomicBool,
    /// When a replay last asked.
    asked: Mutex<Option<Instant>>,
}

/// The held `/clock` sample and the deliveries waiting for it to be applied.
#[derive(Default)]
struct Gate {
    clock: Option<Admitted>,
    /// Closed from a held clock until it has been applied and `waiting` delivered.
    closed: bool,
    /// A step was asked for and has not ended.
    stepping: bool,
    waiting: std::collections::VecDeque<Admitted>,
}

impl std::fmt::Debug for Board {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Board")
            .field("inflow", &self.inflow)
            .finish_non_exhaustive()
    }
}

/// A publisher's last sequence number on the network.
#[derive(Debug)]
pub(crate) struct Sent {
    topic: String,
    dds_type: String,
    last: Mutex<Option<(Gid, i64)>>,
}

impl Sent {
    /// Records a sample about to be put.
    pub(crate) fn record(&self, gid: Gid, seq: i64) {
        *self.last.lock() = Some((gid, seq));
    }
}

/// A subscription's sequence numbers, per remote publisher.
#[derive(Debug)]
pub(crate) struct Heard {
    id: u64,
    topic: String,
    dds_type: String,
    pub(crate) tracker: Mutex<SequenceTracker>,
}

/// A call waiting for its response: counted from the request's sending to the response's
/// delivery.
#[derive(Debug)]
pub(crate) struct Outstanding {
    board: Arc<Board>,
    service: String,
}

impl Drop for Outstanding {
    fn drop(&mut self) {
        let mut calls = self.board.calls.lock();
        if let Some(n) = calls.get_mut(&self.service) {
            *n -= 1;
            if *n == 0 {
                calls.remove(&self.service);
            }
        }
    }
}

impl Board {
    /// The deliveries of this transport, tracked once a replay asks.
    pub(crate) fn inflow(&self) -> &Inflow {
        &self.inflow
    }

    /// Whether deliveries wait for a held clock now (without the lock: a delivery that
    /// sees it closed goes through [`Board::admit`], which looks again under it).
    pub(crate) fn gate_closed(&self) -> bool {
        self.closed.load(Ordering::Acquire)
    }

    /// Runs `deliver` (inside a delivery of [`Board::inflow`]) now, or once the held
    /// clock has been applied if the gate is closed.
    pub(crate) fn admit(&self, deliver: Admitted) {
        let mut gate = self.gate.lock();
        if gate.closed {
            gate.waiting.push_back(deliver);
            return;
        }
        drop(gate);
        deliver();
    }

    /// A `/clock` sample: held while a replay asks (closing the gate), applied at once
    /// otherwise (see the module docs).
    pub(crate) fn clock(&self, apply: Admitted) {
        let replaying =
            self.inflow.is_tracking() && self.asked.lock().is_some_and(|at| at.elapsed() < LEASE);
        if replaying {
            let mut gate = self.gate.lock();
            gate.clock = Some(apply);
            gate.closed = true;
            self.closed.store(true, Ordering::Release);
            return;
        }
        if self.inflow.is_tracking() {
            // The replay stopped asking without saying so.
            self.end();
        }
        Inflow::outside(apply);
    }

    /// Applies the held clock, then delivers what waited and opens the gate.
    fn step(&self) {
        let apply = self.gate.lock().clock.take();
        if let Some(apply) = apply {
            // The step waits for its own ticket, not for every delivery's.
            self.inflow.deliver(|| Inflow::outside(apply));
        }
        loop {
            let mut gate = self.gate.lock();
            let Some(next) = gate.waiting.pop_front() else {
                gate.closed = false;
                gate.stepping = false;
                self.closed.store(false, Ordering::Release);
                return;
            };
            drop(gate);
            self.inflow.deliver(next);
        }
    }

    /// The replay is over: apply what is held, deliver what waits, track no more.
    fn end(&self) {
        self.step();
        self.inflow.untrack();
        *self.asked.lock() = None;
    }

    pub(crate) fn sent(&self, topic: &str, dds_type: &str) -> Arc<Sent> {
        let sent = Arc::new(Sent {
            topic: topic.to_owned(),
            dds_type: dds_type.to_owned(),
            last: Mutex::new(None),
        });
        let mut all = self.sent.lock();
        all.retain(|s| s.strong_count() > 0);
        all.push(Arc::downgrade(&sent));
        sent
    }

    pub(crate) fn heard(&self, topic: &str, dds_type: &str) -> Arc<Heard> {
        let heard = Arc::new(Heard {
            id: self.next_id.fetch_add(1, Ordering::Relaxed),
            topic: topic.to_owned(),
            dds_type: dds_type.to_owned(),
            tracker: Mutex::default(),
        });
        let mut all = self.heard.lock();
        all.retain(|h| h.strong_count() > 0);
        all.push(Arc::downgrade(&heard));
        heard
    }

    /// A call to `service` is about to be sent; it is outstanding until the value returned
    /// is dropped (after its response was delivered).
    pub(crate) fn call(self: &Arc<Self>, service: &str) -> Outstanding {
        *self.calls.lock().entry(service.to_owned()).or_default() += 1;
        Outstanding {
            board: self.clone(),
            service: service.to_owned(),
        }
    }

    /// What this transport answers a settle question with (see the module docs for the
    /// order of the reads).
    fn snapshot(&self, zid: &str, nodes: Vec<String>) -> Snapshot {
        let tracking = self.inflow.is_tracking();
        self.inflow.track();
        *self.asked.lock() = Some(Instant::now());
        let before = self.inflow.deliveries();
        let publishers = self
            .sent
            .lock()
            .iter()
            .filter_map(Weak::upgrade)
            .filter_map(|s| {
                let (gid, last) = (*s.last.lock())?;
                Some(SentState {
                    topic: s.topic.clone(),
                    dds_type: s.dds_type.clone(),
                    gid: hex(&gid),
                    last,
                })
            })
            .collect();
        let subscriptions = self
            .heard
            .lock()
            .iter()
            .filter_map(Weak::upgrade)
            .map(|h| HeardState {
                id: h.id,
                topic: h.topic.clone(),
                dds_type: h.dds_type.clone(),
                heard: h
                    .tracker
                    .lock()
                    .heard()
                    .map(|(gid, last)| (hex(&gid), last))
                    .collect(),
            })
            .collect();
        let calls = self.calls.lock().clone().into_iter().collect();
        let (waiting, stepping, holding) = {
            let gate = self.gate.lock();
            (gate.waiting.len(), gate.stepping, gate.clock.is_some())
        };
        let quiet = self.inflow.is_quiet() && waiting == 0 && !stepping;
        let pending = self.inflow.pending();
        let unchanged = self.inflow.deliveries() == before;
        Snapshot {
            zid: zid.to_owned(),
            pid: std::process::id(),
            nodes,
            tracking,
            quiet: quiet && unchanged,
            pending,
            waiting,
            stepping,
            holding,
            publishers,
            subscriptions,
            calls,
        }
    }

    /// Answers settle questions on `@kairos/<domain>/settle/<zid>` for as long as the
    /// returned queryable lives; `nodes` names the process's nodes in the answer.
    pub(crate) fn declare(
        self: &Arc<Self>,
        session: &Session,
        domain: u32,
        zid: &str,
        nodes: impl Fn() -> Vec<String> + Send + Sync + 'static,
    ) -> zenoh::Result<zenoh::query::Queryable<()>> {
        let board = Arc::downgrade(self);
        let id = zid.to_owned();
        session
            .declare_queryable(format!("{PRIVATE_SPACE}/{domain}/settle/{zid}"))
            .complete(true)
            .callback(move |query| {
                let Some(board) = board.upgrade() else { return };
                match query.payload().map(|p| p.to_bytes()).as_deref() {
                    // Applying time runs callbacks that may need zenoh's own threads:
                    // not on this one. Until it ends, this transport is not quiet.
                    Some(b"step") => {
                        board.gate.lock().stepping = true;
                        let stepping = board.clone();
                        let spawned = std::thread::Builder::new()
                            .name("kairos-settle-step".into())
                            .spawn(move || stepping.step());
                        if spawned.is_err() {
                            board.step();
                        }
                    }
                    Some(b"end") => return board.end(),
                    _ => {}
                }
                let answer = board.snapshot(&id, nodes());
                if let Ok(json) = serde_json::to_vec(&answer) {
                    let _ = query.reply(query.key_expr().clone(), json).wait();
                }
            })
            .wait()
    }
}

fn hex(gid: &Gid) -> String {
    gid.iter().map(|b| format!("{b:02x}")).collect()
}

/// One transport's answer to a settle question.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Snapshot {
    /// The answering session.
    pub zid: String,
    /// Its process.
    pub pid: u32,
    /// The nodes of its process (fully qualified names).
    pub nodes: Vec<String>,
    /// Whether it was tracking its deliveries before this question.
    pub tracking: bool,
    /// No delivery under way and no run one made ready left.
    pub quiet: bool,
    /// Runs a delivery made ready that have not ended.
    pub pending: usize,
    /// Deliveries waiting for the held `/clock` to be applied.
    pub waiting: usize,
    /// Whether it is applying a held `/clock`.
    pub stepping: bool,
    /// Whether it holds a `/clock` not applied yet.
    pub holding: bool,
    /// Every publisher that has sent, with its last sequence number.
    pub publishers: Vec<SentState>,
    /// Every subscription, with what it heard from each remote publisher.
    pub subscriptions: Vec<HeardState>,
    /// Calls waiting for a response, by service.
    pub calls: Vec<(String, usize)>,
}

/// A publisher's last sequence number.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SentState {
    /// Topic name.
    pub topic: String,
    /// Its DDS type name.
    pub dds_type: String,
    /// The publisher's gid in hex.
    pub gid: String,
    /// The last sequence number sent.
    pub last: i64,
}

/// A subscription's last sequence number heard from each remote publisher.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct HeardState {
    /// Unique within its transport.
    pub id: u64,
    /// Topic name.
    pub topic: String,
    /// Its DDS type name.
    pub dds_type: String,
    /// (publisher gid in hex, last sequence number heard).
    pub heard: Vec<(String, i64)>,
}

/// The system has settled: how many rounds of questions that took.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Settled {
    /// Rounds asked, the last one settled.
    pub rounds: u32,
}

/// The system did not settle within the timeout: what was still under way at the last
/// round, one line each.
#[derive(Debug, Clone, thiserror::Error)]
#[error("the system did not settle within {timeout:?}: {}", .unsettled.join("; "))]
pub struct NotSettled {
    /// The bound that ran out.
    pub timeout: Duration,
    /// What was under way, naming processes, nodes, topics and services.
    pub unsettled: Vec<String>,
}

/// The asking side of the settle protocol (see the module docs).
pub struct Settler {
    session: Session,
    key: String,
    /// Messages a subscription never had to hear: sent before the pair was first seen.
    baselines: HashMap<(String, u64, String), i64>,
    /// Publishers and subscriptions seen in an earlier round.
    known: HashSet<(String, u64)>,
    known_publishers: HashSet<String>,
    rounds: u64,
}

impl std::fmt::Debug for Settler {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Settler").field("key", &self.key).finish()
    }
}

/// The longest pause between two rounds of one wait.
const MAX_PAUSE: Duration = Duration::from_millis(2);

impl Settler {
    /// Asks the kairos processes of `transport`'s domain.
    pub fn new(transport: &crate::ZenohTransport) -> Self {
        Settler {
            session: transport.session().clone(),
            key: format!("{PRIVATE_SPACE}/{}/settle/*", transport.domain()),
            baselines: HashMap::new(),
            known: HashSet::new(),
            known_publishers: HashSet::new(),
            rounds: 0,
        }
    }

    /// Waits until the system has settled, asking every transport in rounds, at most
    /// until `timeout` has passed (on the monotonic clock) or `cancelled` says so.
    pub fn wait(
        &mut self,
        timeout: Duration,
        cancelled: &dyn Fn() -> bool,
    ) -> Result<Settled, NotSettled> {
        let deadline = Instant::now() + timeout;
        let mut pause = Duration::from_micros(50);
        let mut rounds = 0;
        loop {
            rounds += 1;
            let left = deadline.saturating_duration_since(Instant::now());
            let answers = self.ask(left.clamp(Duration::from_millis(10), Duration::from_secs(2)));
            let unsettled = self.judge(&answers);
            if unsettled.is_empty() {
                return Ok(Settled { rounds });
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() || cancelled() {
                return Err(NotSettled { timeout, unsettled });
            }
            std::thread::sleep(pause.min(left));
            pause = (pause * 2).min(MAX_PAUSE);
        }
    }

    /// Tells every transport to apply the `/clock` sample it holds (then deliver what
    /// waited for it), and waits for their answers, at most `timeout`.
    pub fn step(&self, timeout: Duration) {
        self.ask_with(Some("step"), timeout);
    }

    /// Tells every transport the replay is over: nothing is held or tracked any more.
    pub fn end(&self, timeout: Duration) {
        self.ask_with(Some("end"), timeout);
    }

    /// One round: every transport's snapshot.
    fn ask(&self, timeout: Duration) -> Vec<Snapshot> {
        self.ask_with(None, timeout)
    }

    fn ask_with(&self, command: Option<&str>, timeout: Duration) -> Vec<Snapshot> {
        let mut get = self.session.get(&self.key);
        if let Some(command) = command {
            get = get.payload(command);
        }
        let Ok(replies) = get
            .target(QueryTarget::All)
            .consolidation(ConsolidationMode::None)
            .timeout(timeout)
            .wait()
        else {
            return Vec::new();
        };
        let mut answers = Vec::new();
        while let Ok(reply) = replies.recv() {
            if let Ok(sample) = reply.result()
                && let Ok(snapshot) = serde_json::from_slice(&sample.payload().to_bytes())
            {
                answers.push(snapshot);
            }
        }
        answers
    }

    /// What keeps `answers` from being settled, one line each (empty: settled).
    fn judge(&mut self, answers: &[Snapshot]) -> Vec<String> {
        let first_round = self.rounds == 0;
        self.rounds += 1;
        let mut unsettled = Vec::new();
        if answers.is_empty() {
            unsettled.push("no kairos process answered".to_owned());
        }
        for a in answers {
            let who = who(a);
            if !a.tracking {
                unsettled.push(format!("{who} has just started tracking its deliveries"));
            } else if !a.quiet {
                let mut detail = vec![format!("{} runs left", a.pending)];
                if a.waiting > 0 {
                    detail.push(format!("{} deliveries wait for a /clock step", a.waiting));
                }
                if a.stepping {
                    detail.push("applying a /clock step".to_owned());
                }
                if a.holding {
                    detail.push("holding a /clock not applied yet".to_owned());
                }
                unsettled.push(format!(
                    "{who} is still running work that came from the network ({})",
                    detail.join(", ")
                ));
            }
            for (service, n) in &a.calls {
                unsettled.push(format!("{who} waits for {n} response(s) of {service}"));
            }
        }
        let publishers_now: HashSet<String> = answers
            .iter()
            .flat_map(|a| a.publishers.iter().map(|p| p.gid.clone()))
            .collect();
        for sub_side in answers {
            for s in &sub_side.subscriptions {
                let pair_known = self.known.contains(&(sub_side.zid.clone(), s.id));
                for pub_side in answers.iter().filter(|a| a.zid != sub_side.zid) {
                    for p in pub_side
                        .publishers
                        .iter()
                        .filter(|p| p.topic == s.topic && p.dds_type == s.dds_type)
                    {
                        let heard = s.heard.iter().find(|(g, _)| *g == p.gid).map(|h| h.1);
                        let key = (sub_side.zid.clone(), s.id, p.gid.clone());
                        let publisher_new = !first_round && !self.known_publishers.contains(&p.gid);
                        let baseline = *self.baselines.entry(key).or_insert_with(|| {
                            // Messages sent before the subscription was first seen (or
                            // before the replay's first question) were never its to hear;
                            // a publisher that appears later is heard from its first.
                            if heard.is_none() && !publisher_new && (!pair_known || first_round) {
                                p.last
                            } else {
                                0
                            }
                        });
                        let heard = heard.unwrap_or(0);
                        if heard < p.last && p.last > baseline {
                            unsettled.push(format!(
                                "{}: the subscription of {} has heard message {heard} of {} from the publisher of {}",
                                s.topic,
                                who(sub_side),
                                p.last,
                                who(pub_side)
                            ));
                        }
                    }
                }
            }
        }
        for a in answers {
            for s in &a.subscriptions {
                self.known.insert((a.zid.clone(), s.id));
            }
        }
        self.known_publishers.extend(publishers_now);
        unsettled
    }
}

/// A process as a report names it: its pid and nodes.
fn who(a: &Snapshot) -> String {
    if a.nodes.is_empty() {
        format!("process {}", a.pid)
    } else {
        format!("process {} ({})", a.pid, a.nodes.join(", "))
    }
}
