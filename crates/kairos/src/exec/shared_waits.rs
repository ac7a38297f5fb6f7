//! The wait-for graph across processes: blocking calls whose server is in another process
//! are checked for cycles too.
//!
//! In one process, a blocking wait knows which callback groups must run to complete it
//! (see the `deadlock` module). A call to a server in another process knows only a service
//! name. A transport that can share waits ([`WaitSharing`]) closes that gap: it publishes
//! each process's blocked waits (which callback, holding which mutually exclusive groups,
//! waits for which groups or services) and which group serves each of its services; a
//! blocking call to a remote service then searches the combined graph before it sends its
//! request.
//!
//! What this module promises:
//! - a blocking call that closes a cycle through other processes fails at once with
//!   [`WouldDeadlock`](super::WouldDeadlock) ([`DeadlockReason::WaitCycle`](super::DeadlockReason::WaitCycle)), naming both
//!   callbacks and both processes, when the other side's wait reached this process first
//!   (always the case when this call is made by the callback the other side's request
//!   started: the transport shares a wait before it sends the request);
//! - two waits that close a cycle at the same moment, each before hearing of the other:
//!   when the second one is heard, exactly one of them (the one [`victim`] picks,
//!   the same in every process) fails with `WouldDeadlock`, and the other completes;
//! - no false alarm: a service with several servers, or a server whose group is unknown (a
//!   ROS 2 node that is not kairos), is never an edge, so such calls behave as before;
//! - a process's waits are its own to share: the graph is rebuilt from what each process
//!   published last, and a process that leaves takes its waits with it.

use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::sync::OnceLock;

/// A callback group of some process.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct GroupRef {
    /// The process it lives in ([`process_id`]).
    pub process: String,
    /// The group's id in that process.
    pub id: u64,
    /// The group's name, for messages.
    pub name: String,
}

impl GroupRef {
    /// A group of this process.
    pub(crate) fn local(id: u64, name: &str) -> Self {
        Self {
            process: process_id().to_owned(),
            id,
            name: name.to_owned(),
        }
    }
}

/// What a blocked wait needs to run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum WaitTarget {
    /// A callback of this (mutually exclusive) group.
    Group {
        /// The group.
        group: GroupRef,
        /// The callback that must run, for messages.
        completer: String,
    },
    /// The server of this service, wherever it is.
    Service(String),
}

/// One blocked wait, as processes share it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SharedWait {
    /// The process that waits.
    pub process: String,
    /// The wait's key in that process.
    pub key: u64,
    /// The callback that waits.
    pub callback: String,
    /// The mutually exclusive groups the waiting thread holds.
    pub holds: Vec<GroupRef>,
    /// What must run to complete the wait.
    pub waits_for: Vec<WaitTarget>,
}

/// A service whose server runs in a mutually exclusive group.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ServedBy {
    /// The service's resolved name.
    pub service: String,
    /// The server's group.
    pub group: GroupRef,
    /// The server's callback name.
    pub callback: String,
}

/// What other processes shared, as a transport last heard it.
#[derive(Debug, Clone, Default)]
pub struct RemoteWaits {
    /// Their blocked waits.
    pub waits: Vec<SharedWait>,
    /// Who serves which service there (and, for a transport, in this process).
    pub servers: Vec<ServedBy>,
    /// A readable name of each process, by [`process_id`] (e.g. `pid 4242 on host-a`).
    pub labels: HashMap<String, String>,
}

/// A transport that shares this process's waits and tells what others shared.
pub trait WaitSharing: Send + Sync {
    /// What the other processes (and this process's services) look like now.
    fn remote(&self) -> RemoteWaits;
    /// This process's waits changed: publish [`local_waits`] now, before returning, so
    /// whatever the caller sends next arrives after it.
    fn share(&self);
}

/// This process's id in shared waits: unique per process (host, pid and start time).
pub fn process_id() -> &'static str {
    static ID: OnceLock<String> = OnceLock::new();
    ID.get_or_init(|| {
        let started = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or_default();
        format!("{}:{}:{started}", host_name(), std::process::id())
    })
}

/// A readable name of this process, for messages.
pub fn process_label() -> String {
    let exe = std::env::args()
        .next()
        .map(|a| {
            std::path::Path::new(&a)
                .file_name()
                .map(|f| f.to_string_lossy().into_owned())
                .unwrap_or(a)
        })
        .unwrap_or_default();
    format!("{exe} (pid {} on {})", std::process::id(), host_name())
}

fn host_name() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|h| h.trim().to_owned())
        .unwrap_or_else(|_| "localhost".to_owned())
}

/// This process's blocked waits that hold a mutually exclusive group.
pub fn local_waits() -> Vec<SharedWait> {
    super::deadlock::shared_snapshot()
}

/// Checks this process's blocked calls to other processes against `heard` (call it with
/// what the transport heard each time another process shares its waits): a call now on a
/// cycle ends with `WouldDeadlock` if [`victim`] picks it. Returns how many ended.
pub fn recheck(heard: RemoteWaits) -> usize {
    super::deadlock::recheck(heard)
}

/// Of the waits forming a cycle, the one that gives way: the same choice in every
/// process that sees the cycle (the greatest process id, then key).
pub fn victim<'a>(cycle: &[&'a SharedWait]) -> Option<&'a SharedWait> {
    cycle
        .iter()
        .copied()
        .max_by(|a, b| (&a.process, a.key).cmp(&(&b.process, b.key)))
}

/// A cycle found in the combined graph.
#[derive(Debug, Clone)]
pub(crate) struct RemoteCycle {
    /// The group the new wait needs, and its completer.
    pub group: GroupRef,
    pub completer: String,
    /// The wait holding a group on the way back (the last one before the new wait).
    pub other: SharedWait,
    /// What `other` waits for, which the new wait holds.
    pub other_waits_for: String,
    pub held: GroupRef,
    /// Every wait on the cycle, the new one excluded.
    pub members: Vec<SharedWait>,
}

/// The combined graph: this process's waits and those shared by others.
pub(crate) struct Combined {
    waits: Vec<SharedWait>,
    servers: HashMap<String, Vec<(GroupRef, String)>>,
    pub(crate) labels: HashMap<String, String>,
}

impl Combined {
    pub(crate) fn new(local: Vec<SharedWait>, remote: RemoteWaits) -> Self {
        let here = process_id();
        let mut waits = local;
        waits.extend(remote.waits.into_iter().filter(|w| w.process != here));
        let mut servers: HashMap<String, Vec<(GroupRef, String)>> = HashMap::new();
        for served in remote.servers {
            let entry = servers.entry(served.service).or_default();
            if !entry.iter().any(|(g, _)| *g == served.group) {
                entry.push((served.group, served.callback));
            }
        }
        let mut labels = remote.labels;
        labels.insert(here.to_owned(), process_label());
        Self {
            waits,
            servers,
            labels,
        }
    }

    /// The groups that must run for `target`: none when unknown or when several servers
    /// could answer (one of them may be free).
    fn resolve(&self, target: &WaitTarget) -> Vec<(GroupRef, String)> {
        match target {
            WaitTarget::Group { group, completer } => vec![(group.clone(), completer.clone())],
            WaitTarget::Service(name) => match self.servers.get(name) {
                Some(servers) if servers.len() == 1 => servers.clone(),
                _ => Vec::new(),
            },
        }
    }

    /// A cycle closed by a wait that holds `holds` and waits for `targets`, through the
    /// waits in the graph other than `except` (the wait itself, once recorded).
    pub(crate) fn find_cycle(
        &self,
        holds: &[GroupRef],
        targets: &[WaitTarget],
        except: Option<(&str, u64)>,
    ) -> Option<RemoteCycle> {
        let others: Vec<&SharedWait> = self
            .waits
            .iter()
            .filter(|w| except != Some((w.process.as_str(), w.key)))
            .collect();
        for target in targets {
            for (group, completer) in self.resolve(target) {
                // Depth-first, remembering the path of waits that led to each group.
                let mut stack: Vec<(GroupRef, Vec<&SharedWait>)> = vec![(group.clone(), vec![])];
                let mut visited: Vec<GroupRef> = vec![group.clone()];
                while let Some((g, path)) = stack.pop() {
                    for wait in others.iter().filter(|w| w.holds.contains(&g)) {
                        if path
                            .iter()
                            .any(|p| p.process == wait.process && p.key == wait.key)
                        {
                            continue;
                        }
                        let mut path = path.clone();
                        path.push(wait);
                        for next_target in &wait.waits_for {
                            for (next, next_completer) in self.resolve(next_target) {
                                if let Some(held) = holds.iter().find(|h| **h == next) {
                                    return Some(RemoteCycle {
                                        group,
                                        completer,
                                        other: (*wait).clone(),
                                        other_waits_for: next_completer,
                                        held: held.clone(),
                                        members: path.iter().map(|w| (*w).clone()).collect(),
                                    });
                                }
                                if !visited.contains(&next) {
                                    visited.push(next.clone());
                                    stack.push((next, path.clone()));
                                }
                            }
                        }
                    }
                }
            }
        }
        None
    }

    /// `group`'s name with its process, when that is another process.
    pub(crate) fn where_is(&self, group: &GroupRef) -> String {
        if group.process == process_id() {
            format!("'{}'", group.name)
        } else {
            format!("'{}' in process {}", group.name, self.label(&group.process))
        }
    }

    pub(crate) fn label(&self, process: &str) -> String {
        self.labels
            .get(process)
            .cloned()
            .unwrap_or_else(|| process.to_owned())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn group(process: &str, id: u64) -> GroupRef {
        GroupRef {
            process: process.to_owned(),
            id,
            name: format!("g{id}"),
        }
    }

    fn wait(process: &str, key: u64, holds: GroupRef, service: &str) -> SharedWait {
        SharedWait {
            process: process.to_owned(),
            key,
            callback: format!("cb{key}"),
            holds: vec![holds],
            waits_for: vec![WaitTarget::Service(service.to_owned())],
        }
    }

    fn served(service: &str, group: GroupRef) -> ServedBy {
        ServedBy {
            service: service.to_owned(),
            group,
            callback: format!("service {service}"),
        }
    }

    #[test]
    fn a_cycle_through_another_process_is_found_and_one_with_two_servers_is_not() {
        let (a, b) = (group("A", 1), group("B", 2));
        let remote = RemoteWaits {
            waits: vec![wait("A", 7, a.clone(), "/b")],
            servers: vec![served("/a", a.clone()), served("/b", b.clone())],
            labels: HashMap::new(),
        };
        let graph = Combined::new(Vec::new(), remote.clone());
        let cycle = graph
            .find_cycle(
                std::slice::from_ref(&b),
                &[WaitTarget::Service("/a".into())],
                None,
            )
            .expect("B's callback holding b and calling /a closes the cycle");
        assert_eq!(cycle.other.callback, "cb7");
        assert_eq!(cycle.held, b);
        assert_eq!(cycle.group, a);
        // Holding another group: no cycle.
        assert!(
            graph
                .find_cycle(&[group("B", 3)], &[WaitTarget::Service("/a".into())], None)
                .is_none()
        );
        // /b served twice: the other server may answer; no edge, no alarm.
        let mut two = remote;
        two.servers.push(served("/b", group("C", 4)));
        let graph = Combined::new(Vec::new(), two);
        assert!(
            graph
                .find_cycle(&[b], &[WaitTarget::Service("/a".into())], None)
                .is_none()
        );
    }

    #[test]
    fn every_process_picks_the_same_victim() {
        let (x, y) = (
            wait("A", 1, group("A", 1), "/b"),
            wait("B", 9, group("B", 2), "/a"),
        );
        assert_eq!(victim(&[&x, &y]), Some(&y));
        assert_eq!(victim(&[&y, &x]), Some(&y));
    }

    use proptest::prelude::*;

    /// Random graphs over 3 processes x 3 groups and 4 services: `find_cycle` finds a
    /// cycle exactly when plain reachability over the resolved edges says there is one.
    fn oracle(graph: &Combined, holds: &[GroupRef], targets: &[WaitTarget]) -> bool {
        let mut edges: Vec<(GroupRef, GroupRef)> = Vec::new();
        for w in &graph.waits {
            for g in &w.holds {
                for t in &w.waits_for {
                    for (to, _) in graph.resolve(t) {
                        edges.push((g.clone(), to));
                    }
                }
            }
        }
        for t in targets {
            for (start, _) in graph.resolve(t) {
                // Groups reachable from `start` by one edge or more.
                let mut seen: Vec<GroupRef> = Vec::new();
                let mut frontier = vec![start];
                while let Some(g) = frontier.pop() {
                    for (_, to) in edges.iter().filter(|(from, _)| *from == g) {
                        if !seen.contains(to) {
                            seen.push(to.clone());
                            frontier.push(to.clone());
                        }
                    }
                }
                if seen.iter().any(|g| holds.contains(g)) {
                    return true;
                }
            }
        }
        false
    }

    fn any_group() -> impl Strategy<Value = GroupRef> {
        (0..3u8, 0..3u64).prop_map(|(p, id)| group(&format!("P{p}"), id))
    }

    fn any_target() -> impl Strategy<Value = WaitTarget> {
        prop_oneof![
            (0..4u8).prop_map(|s| WaitTarget::Service(format!("/s{s}"))),
            any_group().prop_map(|group| WaitTarget::Group {
                group,
                completer: "c".into()
            }),
        ]
    }

    proptest! {
        #[test]
        fn finds_a_cycle_exactly_when_there_is_one(
            waits in prop::collection::vec(
                (0..3u8, prop::collection::vec(any_group(), 1..3), prop::collection::vec(any_target(), 1..3)),
                0..8,
            ),
            servers in prop::collection::vec((0..4u8, any_group()), 0..6),
            holds in prop::collection::vec(any_group(), 1..3),
            target in any_target(),
        ) {
            let remote = RemoteWaits {
                waits: waits
                    .into_iter()
                    .enumerate()
                    .map(|(key, (p, holds, waits_for))| SharedWait {
                        process: format!("P{p}"),
                        key: key as u64,
                        callback: format!("cb{key}"),
                        holds,
                        waits_for,
                    })
                    .collect(),
                servers: servers
                    .into_iter()
                    .map(|(s, g)| served(&format!("/s{s}"), g))
                    .collect(),
                labels: HashMap::new(),
            };
            let graph = Combined::new(Vec::new(), remote);
            let targets = [target];
            let found = graph.find_cycle(&holds, &targets, None);
            prop_assert_eq!(found.is_some(), oracle(&graph, &holds, &targets));
            if let Some(cycle) = found {
                prop_assert!(holds.contains(&cycle.held));
                prop_assert_eq!(cycle.members.last(), Some(&cycle.other));
            }
        }
    }
}
