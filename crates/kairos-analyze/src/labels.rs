//! What a person reads a thread, a process, a node or a topic as, the same in every
//! report (the HTML page, the Perfetto export, the text reports).
//!
//! What it promises:
//! - **Threads named by what ran on them.** A thread is labelled by the nodes whose
//!   callbacks ran on it (and whose loggers wrote there), then by its process (executable
//!   name and pid), and its own name and thread id as the detail: `/pipeline/planner`
//!   over `kairos pid 4242 · kairos-exec1-w0 tid 4250`, not `kairos tid 4250`. This holds
//!   for every source the model maps: kairos traces and ROS 2 traces, where
//!   ros2_tracing's init events tie callbacks to nodes.
//! - **Processes named by their nodes.** Several processes of one executable (the
//!   multi-process demo runs four `kairos`) are told apart by the nodes they hold.
//! - **The runtime's own names told apart from the user's.** [`is_internal_node`] and
//!   [`is_internal_topic`] say which nodes and topics the runtime made for itself: ROS 2's
//!   hidden-name convention (a name segment beginning with `_`, which also covers kairos's
//!   [`INTERNAL_PREFIX`] nodes such as the transport's `_kairos_zenoh_clock`, and action
//!   topics under `_action`), and the topics rcl and kairos make for every node
//!   ([`RUNTIME_TOPICS`]). Reports mark them and list them after the user's, never drop
//!   them.

use std::collections::{BTreeMap, BTreeSet};

use crate::model::{CallbackId, Model};

/// Node names beginning with this are kairos's own (a transport's helpers, such as
/// `_kairos_zenoh_clock`); the same prefix as `kairos::graph::INTERNAL_NODE_PREFIX`.
pub const INTERNAL_PREFIX: &str = "_kairos";

/// Topics the runtime makes for every node (rcl's and kairos's log and parameter-event
/// topics), not for the user's data.
pub const RUNTIME_TOPICS: [&str; 2] = ["/rosout", "/parameter_events"];

/// Nodes named on one label at most; the rest are counted (`+2 more`).
const NODES_SHOWN: usize = 3;

/// True for a name that is hidden by ROS 2's convention: one of its segments (between
/// `/`, `.` for a logger) begins with `_`. `/robot/_helper`, `_kairos_zenoh_clock` and
/// `/fibonacci/_action/feedback` are hidden; `/robot/talker_2` is not.
pub fn is_hidden(name: &str) -> bool {
    name.split(['/', '.'])
        .any(|segment| segment.starts_with('_'))
}

/// True for a node the runtime made for itself: a hidden name (kairos's own nodes begin
/// with [`INTERNAL_PREFIX`], ROS 2's tools' with `_ros2cli`).
pub fn is_internal_node(name: &str) -> bool {
    is_hidden(name)
}

/// True for a topic the runtime made for itself: a hidden name (action topics under
/// `_action`, kairos's internal topics) or one of [`RUNTIME_TOPICS`].
pub fn is_internal_topic(name: &str) -> bool {
    is_hidden(name) || RUNTIME_TOPICS.contains(&name)
}

/// How a thread reads in a report.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ThreadLabel {
    /// Its process id.
    pub pid: i64,
    /// Its thread id.
    pub tid: i64,
    /// Its process's executable name (`kairos`), or `pid N` when the trace does not say.
    pub process: String,
    /// The thread's own name (`kairos-exec1-w0`), when the trace records it.
    pub thread: Option<String>,
    /// The nodes whose callbacks ran on it or whose loggers wrote on it, the user's first,
    /// each in name order.
    pub nodes: Vec<String>,
    /// True when every node on it is the runtime's own ([`is_internal_node`]).
    pub internal: bool,
}

impl ThreadLabel {
    /// The row's name: its nodes (at most three, then `+N more`), or, when no node is
    /// known, the thread's name, else `thread N`. Internal threads begin with `runtime: `.
    pub fn title(&self) -> String {
        let name = if self.nodes.is_empty() {
            self.thread
                .clone()
                .unwrap_or_else(|| format!("thread {}", self.tid))
        } else {
            let mut shown = self.nodes[..self.nodes.len().min(NODES_SHOWN)].join(", ");
            if self.nodes.len() > NODES_SHOWN {
                shown += &format!(" +{} more", self.nodes.len() - NODES_SHOWN);
            }
            shown
        };
        if self.internal {
            format!("runtime: {name}")
        } else {
            name
        }
    }

    /// [`Self::title`] in at most about `chars` characters: as many whole node names as
    /// fit, then `+N more` (`/pipeline/filter, /pipeline/planner +2 more`), never a name
    /// cut in the middle unless even the first does not fit.
    pub fn title_within(&self, chars: usize) -> String {
        let full = self.title();
        if full.chars().count() <= chars || self.nodes.len() < 2 {
            return full;
        }
        let prefix = if self.internal { "runtime: " } else { "" };
        let mut shown = 1;
        let fits = |n: usize| {
            let names = self.nodes[..n].join(", ");
            let more = format!(" +{} more", self.nodes.len() - n);
            prefix.len() + names.chars().count() + more.len() <= chars
        };
        while shown + 1 < self.nodes.len() && fits(shown + 1) {
            shown += 1;
        }
        format!(
            "{prefix}{} +{} more",
            self.nodes[..shown].join(", "),
            self.nodes.len() - shown
        )
    }

    /// The detail: process and thread, `kairos pid 4242 · kairos-exec1-w0 tid 4250` (the
    /// thread's name left out when it is the process's, or already the title).
    pub fn detail(&self) -> String {
        let thread = match self.thread_name() {
            Some(name) => format!("{name} tid {}", self.tid),
            None => format!("tid {}", self.tid),
        };
        format!("{} pid {} · {thread}", self.process, self.pid)
    }

    /// The thread's name when it says more than the title and the process do.
    fn thread_name(&self) -> Option<&str> {
        self.thread
            .as_deref()
            .filter(|name| !self.nodes.is_empty() && *name != self.process)
    }

    /// The name of its track in a trace viewer, which shows the thread id itself: the
    /// title, and the thread's name when it says more (`/pipeline/planner ·
    /// kairos-exec1-w0`).
    pub fn track(&self) -> String {
        match self.thread_name() {
            Some(name) => format!("{} · {name}", self.title()),
            None => self.title(),
        }
    }

    /// Title and detail on one line: `/pipeline/planner (kairos pid 4242 · tid 4250)`.
    pub fn full(&self) -> String {
        format!("{} ({})", self.title(), self.detail())
    }
}

/// The labels of one model's threads and processes.
#[derive(Debug, Clone, Default)]
pub struct Labels {
    /// Per (pid, tid): the nodes seen on it.
    thread_nodes: BTreeMap<(i64, i64), BTreeSet<String>>,
    /// Per (pid, tid): the thread's name.
    thread_names: BTreeMap<(i64, i64), String>,
    /// Per pid: its executable's name.
    process_names: BTreeMap<i64, String>,
    /// Per pid: its nodes.
    process_nodes: BTreeMap<i64, BTreeSet<String>>,
}

impl Labels {
    /// The labels of `m`: each thread's nodes from the callbacks that ran on it (through
    /// their subscription or timer) and the log lines written on it (their callback's
    /// node, else the node whose logger wrote them).
    pub fn of(m: &Model) -> Self {
        let mut labels = Labels::default();
        let node_name = |cb: CallbackId| m.callback_node(cb).map(|n| m.nodes[n].name.clone());
        for (i, c) in m.callbacks.iter().enumerate() {
            if let Some(node) = node_name(CallbackId(i)) {
                labels.add(c.pid, c.tid, node);
            }
        }
        // Loggers are named after their node with `.` for `/` (`robot.talker` is the
        // logger of `/robot/talker`, `robot.talker.arm` a child of it).
        let by_logger: BTreeMap<(i64, String), String> = m
            .nodes
            .iter()
            .map(|n| {
                let logger = n.name.trim_start_matches('/').replace('/', ".");
                ((n.pid, logger), n.name.clone())
            })
            .collect();
        for line in &m.log_lines {
            let node = line.callback.and_then(node_name).or_else(|| {
                let mut logger = line.logger.as_str();
                loop {
                    if let Some(n) = by_logger.get(&(line.pid, logger.to_string())) {
                        return Some(n.clone());
                    }
                    logger = logger.rsplit_once('.')?.0;
                }
            });
            if let Some(node) = node {
                labels.add(line.pid, line.tid, node);
            }
        }
        for t in &m.threads {
            labels.thread_names.insert((t.pid, t.tid), t.name.clone());
        }
        for p in &m.processes {
            labels.process_names.insert(p.pid, p.name.clone());
        }
        for n in &m.nodes {
            labels
                .process_nodes
                .entry(n.pid)
                .or_default()
                .insert(n.name.clone());
        }
        labels
    }

    fn add(&mut self, pid: i64, tid: i64, node: String) {
        self.thread_nodes
            .entry((pid, tid))
            .or_default()
            .insert(node);
    }

    /// A process's executable name, or `pid N`.
    fn process_name(&self, pid: i64) -> String {
        self.process_names
            .get(&pid)
            .cloned()
            .unwrap_or_else(|| format!("pid {pid}"))
    }

    /// How thread `tid` of process `pid` reads.
    pub fn thread(&self, pid: i64, tid: i64) -> ThreadLabel {
        let nodes = self
            .thread_nodes
            .get(&(pid, tid))
            .map(|n| user_first(n, is_internal_node))
            .unwrap_or_default();
        ThreadLabel {
            pid,
            tid,
            process: self.process_name(pid),
            thread: self.thread_names.get(&(pid, tid)).cloned(),
            internal: !nodes.is_empty() && nodes.iter().all(|n| is_internal_node(n)),
            nodes,
        }
    }

    /// How a process reads: its executable and its user nodes,
    /// `kairos: /pipeline/filter, /pipeline/planner` (the runtime's nodes only when it
    /// has no other).
    pub fn process(&self, pid: i64) -> String {
        let name = self.process_name(pid);
        let Some(nodes) = self.process_nodes.get(&pid) else {
            return name;
        };
        let user: Vec<&String> = nodes.iter().filter(|n| !is_internal_node(n)).collect();
        let shown: Vec<&String> = if user.is_empty() {
            nodes.iter().collect()
        } else {
            user
        };
        let mut list = shown
            .iter()
            .take(NODES_SHOWN)
            .map(|n| n.as_str())
            .collect::<Vec<_>>()
            .join(", ");
        if shown.len() > NODES_SHOWN {
            list += &format!(" +{} more", shown.len() - NODES_SHOWN);
        }
        format!("{name}: {list}")
    }
}

/// `names` with the ones `internal` says are the runtime's after the user's.
fn user_first(names: &BTreeSet<String>, internal: fn(&str) -> bool) -> Vec<String> {
    let (user, runtime): (Vec<&String>, Vec<&String>) = names.iter().partition(|n| !internal(n));
    user.into_iter().chain(runtime).cloned().collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Callback, Node, Owner, Process, Thread, Timer, TimerId};

    #[test]
    fn hidden_names_follow_the_ros2_convention() {
        assert!(is_internal_node("_kairos_zenoh_clock"));
        assert!(is_internal_node("/_kairos_zenoh_3"));
        assert!(is_internal_node("/robot/_helper"));
        assert!(!is_internal_node("/robot/talker_2"));
        assert!(is_internal_topic("/fibonacci/_action/feedback"));
        assert!(is_internal_topic("/rosout"));
        assert!(is_internal_topic("/parameter_events"));
        assert!(!is_internal_topic("/pipeline/filtered"));
        assert!(!is_internal_topic("/clock"));
    }

    fn model() -> Model {
        let mut m = Model::default();
        m.processes.push(Process {
            pid: 7,
            name: "kairos".into(),
            host: None,
        });
        m.threads.push(Thread {
            pid: 7,
            tid: 70,
            name: "kairos-exec1-w0".into(),
        });
        for name in ["/pipeline/planner", "_kairos_zenoh_clock"] {
            m.nodes.push(Node {
                pid: 7,
                name: name.into(),
            });
        }
        for (node, tid) in [(0, 70), (1, 71)] {
            m.timers.push(Timer {
                pid: 7,
                handle: node as u64,
                node: Some(crate::model::NodeId(node)),
                period_ns: None,
                callback: Some(CallbackId(node)),
                fired: Vec::new(),
                scheduled: Vec::new(),
            });
            m.callbacks.push(Callback {
                pid: 7,
                handle: node as u64,
                symbol: None,
                owner: Owner::Timer(TimerId(node)),
                runs: Vec::new(),
                tid,
            });
        }
        m
    }

    #[test]
    fn threads_read_as_their_nodes_and_process() {
        let labels = Labels::of(&model());
        let user = labels.thread(7, 70);
        assert_eq!(user.title(), "/pipeline/planner");
        assert_eq!(user.detail(), "kairos pid 7 · kairos-exec1-w0 tid 70");
        assert_eq!(user.track(), "/pipeline/planner · kairos-exec1-w0");
        assert!(!user.internal);
        let runtime = labels.thread(7, 71);
        assert_eq!(runtime.title(), "runtime: _kairos_zenoh_clock");
        assert!(runtime.internal);
        assert_eq!(labels.thread(7, 72).title(), "thread 72");
        let busy = ThreadLabel {
            nodes: ["/pipeline/filter", "/pipeline/planner", "/pipeline/printer"]
                .map(String::from)
                .to_vec(),
            ..user
        };
        assert_eq!(
            busy.title_within(46),
            "/pipeline/filter, /pipeline/planner +1 more"
        );
        assert_eq!(busy.title_within(100), busy.title());
        assert_eq!(labels.process(7), "kairos: /pipeline/planner");
        assert_eq!(labels.process(8), "pid 8");
    }
}
