//! `summary`: what is in a trace: processes, nodes, topics with their publishers and
//! subscribers, event counts, time span, and what the reader had to report.

use std::collections::BTreeMap;
use std::fmt;

use serde::Serialize;

use crate::model::{Link, Model, Source, TakeCounts};
use crate::stats::human_ns;

/// A topic: who publishes and subscribes, and how many messages.
#[derive(Debug, Clone, Serialize)]
pub struct TopicSummary {
    /// Its name.
    pub name: String,
    /// Its publishing nodes.
    pub publishers: Vec<String>,
    /// Its subscribing nodes.
    pub subscribers: Vec<String>,
    /// Messages published.
    pub messages: usize,
    /// True for a topic the runtime made for itself: its name says so
    /// ([`crate::labels::is_internal_topic`]), or only the runtime's own nodes publish and
    /// subscribe it (the transport's `/clock` bridge in a program that does not use `/clock`).
    pub internal: bool,
}

/// What one subscription took, and how its messages were linked to their publications.
#[derive(Debug, Clone, Serialize)]
pub struct SubscriptionSummary {
    /// Its topic.
    pub topic: String,
    /// Its node (or process, when the trace does not say).
    pub node: String,
    /// Its takes and links.
    pub takes: TakeCounts,
}

/// A node and its process.
#[derive(Debug, Clone, Serialize)]
pub struct NodeSummary {
    /// Its name.
    pub name: String,
    /// Its process id.
    pub pid: i64,
    /// Its process's name.
    pub process: String,
    /// True for a node the runtime made for itself ([`crate::labels::is_internal_node`]).
    pub internal: bool,
}

/// What is in a trace.
#[derive(Debug, Clone, Serialize)]
pub struct Summary {
    /// The tracers it came from.
    pub sources: Vec<Source>,
    /// Events read.
    pub events: u64,
    /// The first event's timestamp.
    pub first_ns: Option<i64>,
    /// The last event's timestamp.
    pub last_ns: Option<i64>,
    /// From the first to the last event.
    pub duration_ns: i64,
    /// Events the tracer discarded.
    pub discarded_events: u64,
    /// Packets the tracer discarded (their events are lost, how many is unknown).
    pub discarded_packets: u64,
    /// Events whose timestamp went backwards.
    pub backwards_timestamps: u64,
    /// Takes that found the queue empty.
    pub empty_takes: u64,
    /// Messages from other processes lost on the way (sequence gaps).
    pub remote_losses: u64,
    /// Entities the access rules refused.
    pub access_denials: Vec<crate::model::AccessDenial>,
    /// Damaged streams and other read errors.
    pub read_errors: Vec<String>,
    /// Every process.
    pub processes: Vec<crate::model::Process>,
    /// Every node.
    pub nodes: Vec<NodeSummary>,
    /// Every topic.
    pub topics: Vec<TopicSummary>,
    /// Events per event name.
    pub event_counts: BTreeMap<String, u64>,
    /// Log lines per level (`INFO`: 12), in severity order.
    pub log_lines: Vec<(String, usize)>,
    /// Action goals, per action name.
    pub goals: BTreeMap<String, usize>,
    /// Transform lookups that could wait, per pair of frames.
    pub tf_lookups: Vec<TfLookupSummary>,
    /// Every subscription that took a message or found its queue empty.
    pub subscriptions: Vec<SubscriptionSummary>,
    /// Deliveries per way they were linked to their publication.
    pub links: BTreeMap<Link, u64>,
    /// Deliveries whose publication is not in the trace.
    pub unlinked: u64,
    /// Events naming handles no init event declared, per event name:
    /// (events, distinct handles).
    pub undeclared: BTreeMap<String, (u64, u64)>,
    /// Takes by the middleware's own subscriptions (graph discovery).
    pub middleware_takes: u64,
    /// With traces from several hosts: each host's clock offset, taken out.
    pub clock_offsets: Vec<crate::sync::HostOffset>,
}

/// The summary of a model.
pub fn summary(m: &Model) -> Summary {
    let mut sum_topics: BTreeMap<String, TopicSummary> = BTreeMap::new();
    for (list, publisher) in [(&m.publishers, true), (&m.subscriptions, false)] {
        for e in list.iter() {
            if &*e.topic == "?" {
                continue;
            }
            let who = e
                .node
                .map_or_else(|| m.process_name(e.pid), |n| m.nodes[n].name.clone());
            let t = sum_topics
                .entry(e.topic.to_string())
                .or_insert_with(|| TopicSummary {
                    name: e.topic.to_string(),
                    publishers: Vec::new(),
                    subscribers: Vec::new(),
                    messages: 0,
                    internal: false,
                });
            let side = if publisher {
                &mut t.publishers
            } else {
                &mut t.subscribers
            };
            if !side.contains(&who) {
                side.push(who);
            }
        }
    }
    for p in &m.publishers {
        if let Some(t) = sum_topics.get_mut(&*p.topic) {
            t.messages += p.published as usize;
        }
    }
    for t in sum_topics.values_mut() {
        t.internal = crate::labels::is_internal_topic(&t.name)
            || t.publishers
                .iter()
                .chain(&t.subscribers)
                .all(|n| crate::labels::is_internal_node(n));
    }
    Summary {
        sources: m.sources.clone(),
        events: m.events,
        first_ns: m.first_ns,
        last_ns: m.last_ns,
        duration_ns: m.last_ns.zip(m.first_ns).map_or(0, |(l, f)| l - f),
        discarded_events: m.discarded_events,
        discarded_packets: m.discarded_packets,
        backwards_timestamps: m.backwards_timestamps,
        empty_takes: m.empty_takes,
        remote_losses: m.remote_losses,
        access_denials: m.access_denials.clone(),
        read_errors: m.read_errors.clone(),
        processes: m.processes.clone(),
        nodes: m
            .nodes
            .iter()
            .map(|n| NodeSummary {
                name: n.name.clone(),
                pid: n.pid,
                process: m.process_name(n.pid),
                internal: crate::labels::is_internal_node(&n.name),
            })
            .collect(),
        topics: sum_topics.into_values().collect(),
        event_counts: m.event_counts.clone(),
        log_lines: log_levels(m),
        goals: crate::goals::report(m, None)
            .actions
            .iter()
            .filter(|a| !a.goals.is_empty())
            .map(|a| (a.action.clone(), a.goals.len()))
            .collect(),
        tf_lookups: tf_lookups(m),
        subscriptions: m
            .subscriptions
            .iter()
            .filter(|s| s.takes.taken > 0 || s.takes.empty > 0)
            .map(|s| SubscriptionSummary {
                topic: s.topic.to_string(),
                node: s
                    .node
                    .map_or_else(|| m.process_name(s.pid), |n| m.nodes[n].name.clone()),
                takes: s.takes,
            })
            .collect(),
        links: m.links.clone(),
        unlinked: m.subscriptions.iter().map(|s| s.takes.unlinked).sum(),
        undeclared: m.undeclared.clone(),
        middleware_takes: m.middleware_takes,
        clock_offsets: m.clock_offsets.clone(),
    }
}

/// The lookups of one transform (`source` into `target`) that could wait.
#[derive(Debug, Clone, Serialize)]
pub struct TfLookupSummary {
    /// The frame the transform is into.
    pub target: String,
    /// The frame the transform is from.
    pub source: String,
    /// How many.
    pub lookups: u64,
    /// How they ended (`found`: 12, `timeout`: 1).
    pub outcomes: BTreeMap<String, u64>,
    /// Their waits added up, ns of their buffers' clocks.
    pub waited_ns: i64,
    /// The longest wait, ns.
    pub longest_ns: i64,
    /// The callback the longest wait was in (None: outside any callback).
    pub longest_in: Option<String>,
}

fn tf_lookups(m: &Model) -> Vec<TfLookupSummary> {
    let mut pairs: BTreeMap<(&str, &str), TfLookupSummary> = BTreeMap::new();
    for l in &m.tf_lookups {
        let pair = pairs
            .entry((&l.target, &l.source))
            .or_insert_with(|| TfLookupSummary {
                target: l.target.clone(),
                source: l.source.clone(),
                lookups: 0,
                outcomes: BTreeMap::new(),
                waited_ns: 0,
                longest_ns: -1,
                longest_in: None,
            });
        pair.lookups += 1;
        *pair.outcomes.entry(l.outcome.clone()).or_default() += 1;
        pair.waited_ns += l.waited;
        if l.waited > pair.longest_ns {
            pair.longest_ns = l.waited;
            pair.longest_in = l.callback.map(|c| m.callback_label(c));
        }
    }
    pairs.into_values().collect()
}

fn log_levels(m: &Model) -> Vec<(String, usize)> {
    let mut by_severity: BTreeMap<i32, (String, usize)> = BTreeMap::new();
    for line in &m.log_lines {
        by_severity
            .entry(line.severity)
            .or_insert_with(|| (line.level(), 0))
            .1 += 1;
    }
    by_severity.into_values().collect()
}

impl fmt::Display for Summary {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let sources: Vec<String> = self
            .sources
            .iter()
            .map(|s| format!("{s:?}").to_lowercase())
            .collect();
        writeln!(
            f,
            "{} events over {} ({})",
            self.events,
            human_ns(self.duration_ns as f64),
            if sources.is_empty() {
                "no known tracepoints".to_string()
            } else {
                sources.join(", ")
            }
        )?;
        if self.discarded_events > 0 {
            writeln!(
                f,
                "discarded by the tracer: {} events",
                self.discarded_events
            )?;
        }
        if self.discarded_packets > 0 {
            writeln!(
                f,
                "discarded by the tracer: {} whole packets (gaps in packet_seq_num; their events are lost, how many is unknown)",
                self.discarded_packets
            )?;
        }
        if self.backwards_timestamps > 0 {
            writeln!(
                f,
                "timestamps going backwards: {}",
                self.backwards_timestamps
            )?;
        }
        if self.empty_takes > 0 {
            writeln!(f, "takes that found the queue empty: {}", self.empty_takes)?;
        }
        if self.remote_losses > 0 {
            writeln!(
                f,
                "messages from other processes lost on the way (sequence gaps): {}",
                self.remote_losses
            )?;
        }
        for d in &self.access_denials {
            let who = if d.enclave.is_empty() {
                format!("pid {}", d.pid)
            } else {
                format!("enclave {} (pid {})", d.enclave, d.pid)
            };
            let why = if d.rule.is_empty() {
                "no allow rule covers it".to_owned()
            } else {
                format!("rule '{}' denies it", d.rule)
            };
            let outcome = if d.refused {
                "the program got an error"
            } else {
                "declared anyway, its traffic dropped"
            };
            writeln!(
                f,
                "access denied: {who} {} {}: {why}; {outcome}",
                d.kind, d.name
            )?;
        }
        for e in &self.read_errors {
            writeln!(f, "read error: {e}")?;
        }
        for o in &self.clock_offsets {
            let bound = match (o.bound_ns(), o.low_ns, o.high_ns) {
                (Some(b), _, _) => format!("+/- {}", human_ns(b as f64)),
                (None, None, Some(h)) => format!("at most {}", human_ns(h as f64)),
                (None, Some(l), None) => format!("at least {}", human_ns(l as f64)),
                _ => "no message between the hosts: not estimated".to_string(),
            };
            let side = if o.offset_ns < 0 {
                "behind"
            } else {
                "ahead of"
            };
            writeln!(
                f,
                "clock of host {} reads {} {side} {}'s ({bound}, from {} messages); taken out of its timestamps",
                o.host,
                human_ns(o.offset_ns.unsigned_abs() as f64),
                o.reference,
                o.messages
            )?;
        }
        writeln!(f, "\nprocesses:")?;
        for p in &self.processes {
            writeln!(f, "  {:>8}  {}", p.pid, p.name)?;
        }
        writeln!(f, "\nnodes:")?;
        for n in &self.nodes {
            writeln!(
                f,
                "  {}  (pid {}, {}){}",
                n.name,
                n.pid,
                n.process,
                if n.internal { "  [runtime]" } else { "" }
            )?;
        }
        writeln!(f, "\ntopics:")?;
        for t in &self.topics {
            writeln!(
                f,
                "  {}  [{} msgs]  publishers: {}  subscribers: {}{}",
                t.name,
                t.messages,
                list(&t.publishers),
                list(&t.subscribers),
                if t.internal { "  [runtime]" } else { "" }
            )?;
        }
        if !self.subscriptions.is_empty() {
            writeln!(
                f,
                "\nmessages taken, per subscription (linked to their publication: exactly, by inference, not at all):"
            )?;
            for sub in &self.subscriptions {
                let t = &sub.takes;
                write!(
                    f,
                    "  {} -> {}  taken {}: exact {}, inferred {}, unlinkable {}",
                    sub.topic, sub.node, t.taken, t.exact, t.inferred, t.unlinked
                )?;
                if t.empty > 0 {
                    write!(f, "; empty takes {}", t.empty)?;
                }
                writeln!(f)?;
            }
            for (link, n) in &self.links {
                writeln!(f, "  {n:>8}  {}", link.describe())?;
            }
            if self.unlinked > 0 {
                writeln!(
                    f,
                    "  {:>8}  unlinkable: the publication is not in the trace (publisher not traced, or its events lost)",
                    self.unlinked
                )?;
            }
        }
        if self.middleware_takes > 0 {
            writeln!(
                f,
                "\ntakes by the middleware's own subscriptions (rmw_subscription_init without rcl_subscription_init: graph discovery), no ROS message: {}",
                self.middleware_takes
            )?;
        }
        for (event, (events, handles)) in &self.undeclared {
            writeln!(
                f,
                "\n{event}: {events} events on {handles} handles no init event declared (created before tracing started, or by a library rclcpp does not trace); their messages have no topic"
            )?;
        }
        if !self.log_lines.is_empty() {
            let levels: Vec<String> = self
                .log_lines
                .iter()
                .map(|(level, n)| format!("{n} {level}"))
                .collect();
            writeln!(
                f,
                "\nlog lines: {} (`kairos trace log` lists them)",
                levels.join(", ")
            )?;
        }
        if !self.goals.is_empty() {
            let per_action: Vec<String> = self
                .goals
                .iter()
                .map(|(action, n)| format!("{n} on {action}"))
                .collect();
            writeln!(
                f,
                "\naction goals: {} (`kairos trace goals` shows each one's life)",
                per_action.join(", ")
            )?;
        }
        if !self.tf_lookups.is_empty() {
            writeln!(f, "\ntransform lookups that could wait:")?;
            for l in &self.tf_lookups {
                let outcomes: Vec<String> =
                    l.outcomes.iter().map(|(o, n)| format!("{n} {o}")).collect();
                let inside = l
                    .longest_in
                    .as_deref()
                    .map_or_else(String::new, |c| format!(" in {c}"));
                writeln!(
                    f,
                    "  from '{}' to '{}': {} ({}), waited {} in all, longest {}{inside}",
                    l.source,
                    l.target,
                    l.lookups,
                    outcomes.join(", "),
                    human_ns(l.waited_ns as f64),
                    human_ns(l.longest_ns as f64),
                )?;
            }
        }
        writeln!(f, "\nevents:")?;
        for (name, n) in &self.event_counts {
            writeln!(f, "  {n:>10}  {name}")?;
        }
        Ok(())
    }
}

fn list(v: &[String]) -> String {
    if v.is_empty() {
        "-".to_string()
    } else {
        v.join(", ")
    }
}
