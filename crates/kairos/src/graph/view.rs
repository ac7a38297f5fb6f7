//! What a node sees of the ROS graph: the nodes, publishers, subscriptions, services and
//! clients of its context and, when a transport is installed, of every other process in
//! its domain; and waits for the graph to change.
//!
//! What this module promises:
//! - [`GraphView`] is a snapshot: it never changes under its reader, and taking one never
//!   waits on the network (the transport keeps its own picture up to date).
//! - Each entity appears once: this context's from the context's own registry (also the
//!   entities no transport carries), other processes' from the transport.
//! - An entity leaves the graph when its last handle drops (a node with its last handle
//!   and entity), and a remote one when its process withdraws it or dies.
//! - A wait for the graph ([`Node::wait_for_graph`](super::Node::wait_for_graph),
//!   [`Node::wait_for_node`](super::Node::wait_for_node)) has three ways out: the
//!   condition holds, its deadline passes, or the process shuts down; it waits on the
//!   monotonic clock.
//! - A graph-change callback ([`Node::on_graph_change`](super::Node::on_graph_change))
//!   runs on the node's executor, in its group, after every change; changes that come
//!   while one is pending coalesce into one call.
//!
//! The runtime's own nodes (names beginning with [`INTERNAL_NODE_PREFIX`]) are not shown.

use super::error::GraphError;
use super::name::split_node_name;
use super::node::Node;
use super::qos::Qos;
use super::qos_match::{self, QosMatcher};
use crate::exec::GuardCondition;
use crate::exec::deadline_after;
use crate::time::Duration;
use parking_lot::{Condvar, Mutex};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Weak};
use std::task::{Wake, Waker};
use std::time::Instant;

/// Node names beginning with this are the runtime's own (a transport's helpers): they are
/// in no [`GraphView`].
pub const INTERNAL_NODE_PREFIX: &str = "_kairos";

/// What an entity of the graph is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum EntityKind {
    /// A node.
    Node,
    /// A publisher of a topic.
    Publisher,
    /// A subscription to a topic.
    Subscription,
    /// A server of a service.
    Service,
    /// A client of a service.
    Client,
}

/// One entity of the graph.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GraphEntity {
    /// What it is.
    pub kind: EntityKind,
    /// Its node's name.
    pub node_name: String,
    /// Its node's namespace (`/` for the root).
    pub node_namespace: String,
    /// The fully qualified topic or service name; empty for a node.
    pub name: String,
    /// The ROS type (`std_msgs/msg/String`, `example_interfaces/srv/AddTwoInts`), or the
    /// Rust type of a topic or service that stays in the process; empty for a node.
    pub type_name: String,
    /// The type's RIHS01 hash (`RIHS01_<64 hex digits>`) for a type that crosses
    /// processes; empty for a node, a service, or a type that stays in the process.
    pub type_hash: String,
    /// A publisher's or subscription's QoS, when known.
    pub qos: Option<Qos>,
    /// Whether it belongs to this context (not another process).
    pub local: bool,
    /// A manual-liveliness publisher of another process whose lease lapsed (its process
    /// says so, see `kairos_zenoh`); `false` otherwise. This context's own publishers'
    /// liveliness is in their [`qos_events`](super::Publisher::qos_events).
    pub liveliness_lost: bool,
}

impl GraphEntity {
    /// Its node's fully qualified name (`/ns/name`).
    pub fn node_fully_qualified_name(&self) -> String {
        fully_qualified(&self.node_namespace, &self.node_name)
    }

    fn internal(&self) -> bool {
        self.node_name.starts_with(INTERNAL_NODE_PREFIX)
    }
}

fn fully_qualified(namespace: &str, name: &str) -> String {
    if namespace.ends_with('/') {
        format!("{namespace}{name}")
    } else {
        format!("{namespace}/{name}")
    }
}

/// A snapshot of the graph; see the module docs.
#[derive(Debug, Clone, Default)]
pub struct GraphView {
    entities: Vec<GraphEntity>,
}

impl GraphView {
    pub(crate) fn new(entities: impl IntoIterator<Item = GraphEntity>) -> Self {
        Self {
            entities: entities.into_iter().filter(|e| !e.internal()).collect(),
        }
    }

    /// Every entity, nodes included.
    pub fn entities(&self) -> &[GraphEntity] {
        &self.entities
    }

    /// The nodes as (namespace, name), sorted, each once.
    pub fn nodes(&self) -> Vec<(String, String)> {
        let nodes: BTreeSet<_> = self
            .of_kind(&[EntityKind::Node])
            .map(|e| (e.node_namespace.clone(), e.node_name.clone()))
            .collect();
        nodes.into_iter().collect()
    }

    /// The nodes' fully qualified names, sorted, each once.
    pub fn node_names(&self) -> Vec<String> {
        let mut names: Vec<String> = self
            .nodes()
            .iter()
            .map(|(ns, name)| fully_qualified(ns, name))
            .collect();
        names.sort();
        names
    }

    /// Whether the node `fully_qualified_name` is in the graph.
    pub fn has_node(&self, fully_qualified_name: &str) -> bool {
        self.of_kind(&[EntityKind::Node])
            .any(|e| e.node_fully_qualified_name() == fully_qualified_name)
    }

    /// Each topic with a publisher or subscription, and its types, sorted.
    pub fn topic_names_and_types(&self) -> BTreeMap<String, Vec<String>> {
        names_and_types(self.of_kind(&[EntityKind::Publisher, EntityKind::Subscription]))
    }

    /// Each service with a server or client, and its types, sorted.
    pub fn service_names_and_types(&self) -> BTreeMap<String, Vec<String>> {
        names_and_types(self.of_kind(&[EntityKind::Service, EntityKind::Client]))
    }

    /// The names and types of the `kind` entities of node `namespace`/`name`; `None` when
    /// the graph has no such node.
    pub fn names_and_types_by_node(
        &self,
        kind: EntityKind,
        namespace: &str,
        name: &str,
    ) -> Option<BTreeMap<String, Vec<String>>> {
        let of_node = |e: &&GraphEntity| e.node_namespace == namespace && e.node_name == name;
        if !self.of_kind(&[EntityKind::Node]).any(|e| of_node(&e)) {
            return None;
        }
        Some(names_and_types(self.of_kind(&[kind]).filter(of_node)))
    }

    /// The `kind` entities on topic or service `name` (fully qualified).
    pub fn endpoints(&self, kind: EntityKind, name: &str) -> Vec<&GraphEntity> {
        self.entities
            .iter()
            .filter(|e| e.kind == kind && e.name == name)
            .collect()
    }

    /// How many `kind` entities are on topic or service `name` (fully qualified).
    pub fn count(&self, kind: EntityKind, name: &str) -> usize {
        self.endpoints(kind, name).len()
    }

    fn of_kind<'a>(&'a self, kinds: &'a [EntityKind]) -> impl Iterator<Item = &'a GraphEntity> {
        self.entities.iter().filter(|e| kinds.contains(&e.kind))
    }
}

fn names_and_types<'a>(
    entities: impl Iterator<Item = &'a GraphEntity>,
) -> BTreeMap<String, Vec<String>> {
    let mut map: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for entity in entities {
        map.entry(entity.name.clone())
            .or_default()
            .insert(entity.type_name.clone());
    }
    map.into_iter()
        .map(|(name, types)| (name, types.into_iter().collect()))
        .collect()
}

/// The context's own entities, and who to tell when the graph changes.
#[derive(Default)]
pub(crate) struct Registry {
    state: Mutex<RegistryState>,
    changed: Condvar,
    /// Counts changes, local and remote; a wait compares it before and after.
    generation: AtomicU64,
    watchers: Mutex<Vec<Weak<dyn Fn() + Send + Sync>>>,
    /// Matches publishers and subscriptions by QoS on every change (see `qos_match`).
    matcher: QosMatcher,
    /// The transport's view of other processes, once one is installed.
    remote: std::sync::OnceLock<Weak<dyn super::transport::Transport>>,
}

#[derive(Default)]
struct RegistryState {
    next_id: u64,
    entities: HashMap<u64, GraphEntity>,
}

impl Registry {
    /// Adds `entity` until the returned entry drops.
    pub(crate) fn add(self: &Arc<Self>, entity: GraphEntity) -> GraphEntry {
        let mut state = self.state.lock();
        state.next_id += 1;
        let id = state.next_id;
        let topic = qos_match::matters(entity.kind).then(|| entity.name.clone());
        state.entities.insert(id, entity);
        drop(state);
        self.changed();
        if let Some(topic) = topic {
            self.matcher.rematch(self, Some(&topic));
        }
        GraphEntry {
            registry: Arc::downgrade(self),
            id,
        }
    }

    pub(crate) fn local(&self) -> Vec<GraphEntity> {
        self.state.lock().entities.values().cloned().collect()
    }

    /// The QoS matching of this context's endpoints.
    pub(crate) fn matcher(&self) -> &QosMatcher {
        &self.matcher
    }

    /// From now on, other processes' endpoints (as `transport` sees them) are matched too.
    pub(crate) fn set_remote(&self, transport: Weak<dyn super::transport::Transport>) {
        let _ = self.remote.set(transport);
    }

    /// The graph changed beyond this process: wakes the waits, calls the watchers and
    /// matches every topic with an endpoint here again.
    pub(crate) fn remote_changed(&self) {
        self.changed();
        self.matcher.rematch(self, None);
    }

    /// The publishers and subscriptions of the topics `names`, here and elsewhere.
    pub(crate) fn endpoints_on(&self, names: &[&str]) -> Vec<GraphEntity> {
        let wanted =
            |e: &GraphEntity| qos_match::matters(e.kind) && names.contains(&e.name.as_str());
        let mut found: Vec<GraphEntity> = {
            let state = self.state.lock();
            state
                .entities
                .values()
                .filter(|e| wanted(e))
                .cloned()
                .collect()
        };
        if let Some(transport) = self.remote.get().and_then(Weak::upgrade) {
            found.extend(transport.graph().into_iter().filter(|e| wanted(e)));
        }
        found
    }

    /// Something in the graph changed: wakes the waits and calls the watchers.
    pub(crate) fn changed(&self) {
        {
            // Under the lock, so a wait between its check and its sleep cannot miss it.
            let _state = self.state.lock();
            self.generation.fetch_add(1, Ordering::AcqRel);
            self.changed.notify_all();
        }
        let watchers: Vec<_> = {
            let mut watchers = self.watchers.lock();
            watchers.retain(|w| w.strong_count() > 0);
            watchers.iter().filter_map(Weak::upgrade).collect()
        };
        for watcher in watchers {
            watcher();
        }
    }

    pub(crate) fn watch(&self, watcher: &Arc<dyn Fn() + Send + Sync>) {
        self.watchers.lock().push(Arc::downgrade(watcher));
    }

    pub(crate) fn generation(&self) -> u64 {
        self.generation.load(Ordering::Acquire)
    }

    /// Sleeps until the graph changes after `seen` (a [`generation`](Self::generation)),
    /// `deadline` passes or `cancelled()` says to stop (whoever cancels calls
    /// [`changed`](Self::changed) or [`wake`](Self::wake)).
    pub(crate) fn wait_change(
        &self,
        seen: u64,
        deadline: Option<Instant>,
        cancelled: impl Fn() -> bool,
    ) {
        let mut state = self.state.lock();
        if self.generation() != seen || cancelled() {
            return;
        }
        match deadline {
            Some(deadline) => {
                self.changed.wait_until(&mut state, deadline);
            }
            None => self.changed.wait(&mut state),
        }
    }

    /// Wakes every wait (to look at its way out again).
    pub(crate) fn wake(&self) {
        let _state = self.state.lock();
        self.changed.notify_all();
    }
}

/// An entity's place in its context's registry; dropping it takes the entity out.
pub(crate) struct GraphEntry {
    registry: Weak<Registry>,
    id: u64,
}

impl Drop for GraphEntry {
    fn drop(&mut self) {
        if let Some(registry) = self.registry.upgrade() {
            let removed = registry.state.lock().entities.remove(&self.id);
            registry.changed();
            if let Some(entity) = removed.filter(|e| qos_match::matters(e.kind)) {
                registry.matcher.rematch(&registry, Some(&entity.name));
            }
        }
    }
}

impl std::fmt::Debug for GraphEntry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GraphEntry").field("id", &self.id).finish()
    }
}

impl Node {
    /// What this node sees of the graph now; see [`GraphView`].
    ///
    /// ```
    /// use kairos::graph::{Context, Node, Qos};
    ///
    /// let context = Context::new();
    /// let talker = Node::new_in(&context, "talker", "/robot")?;
    /// let _chatter = talker.create_publisher::<String>("chatter", Qos::keep_last(10))?;
    /// let graph = talker.graph();
    /// assert!(graph.has_node("/robot/talker"));
    /// assert_eq!(graph.count(kairos::graph::EntityKind::Publisher, "/robot/chatter"), 1);
    /// # Ok::<(), kairos::graph::GraphError>(())
    /// ```
    pub fn graph(&self) -> GraphView {
        self.context().graph()
    }

    /// Waits until `ready` holds for the graph, `timeout` passes, or the program (or,
    /// inside a callback, the executor) shuts down; true if `ready` held. `ready` is
    /// checked at once and after each change of the graph.
    pub fn wait_for_graph(
        &self,
        timeout: impl Into<Duration>,
        ready: impl Fn(&GraphView) -> bool,
    ) -> bool {
        let deadline = deadline_after(timeout.into());
        let registry = self.context().registry().clone();
        let executor = crate::current::callback::shutdown_token();
        let program = crate::signal::shutdown_token();
        let waker = Waker::from(Arc::new(RegistryWaker(Arc::downgrade(&registry))));
        let _executor = executor.as_ref().map(|token| token.register(&waker));
        let _program = program.register(&waker);
        let stopped =
            || program.is_cancelled() || executor.as_ref().is_some_and(|t| t.is_cancelled());
        let _wait = crate::current::wait::describe(|| {
            format!(
                "a change of the graph (node {})",
                self.fully_qualified_name()
            )
        });
        loop {
            let seen = registry.generation();
            if ready(&self.graph()) {
                return true;
            }
            if stopped() || deadline.is_some_and(|d| Instant::now() >= d) {
                return false;
            }
            registry.wait_change(seen, deadline, stopped);
        }
    }

    /// Waits until node `fully_qualified_name` (`/ns/name`; a name without the leading
    /// `/` is taken from the root) is in the graph; see
    /// [`wait_for_graph`](Self::wait_for_graph) for the ways out. Fails at once on a name
    /// no node can have.
    pub fn wait_for_node(
        &self,
        fully_qualified_name: &str,
        timeout: impl Into<Duration>,
    ) -> Result<bool, GraphError> {
        let (namespace, name) = split_node_name(fully_qualified_name)?;
        let name = fully_qualified(&namespace, &name);
        Ok(self.wait_for_graph(timeout, |graph| graph.has_node(&name)))
    }

    /// Runs `callback` on the node's executor, in its group, after each change of the
    /// graph (an entity of any process appearing or going); changes that come while a
    /// call is pending make one call. Dropping the handle stops it.
    pub fn on_graph_change<F>(&self, callback: F) -> GuardCondition
    where
        F: Fn() + Send + Sync + 'static,
    {
        let mut guard = self.create_guard_condition("graph change", callback);
        let target = Arc::downgrade(&guard.inner);
        let watcher: Arc<dyn Fn() + Send + Sync> = Arc::new(move || {
            if let Some(guard) = target.upgrade() {
                guard.trigger_coalesced();
            }
        });
        self.context().registry().watch(&watcher);
        let forget = guard.on_drop.take();
        guard.on_drop = Some(Box::new(move || {
            drop(watcher);
            if let Some(forget) = forget {
                forget();
            }
        }));
        guard
    }
}

/// Wakes the graph's waits when a shutdown token is cancelled.
struct RegistryWaker(Weak<Registry>);

impl Wake for RegistryWaker {
    fn wake(self: Arc<Self>) {
        if let Some(registry) = self.0.upgrade() {
            registry.wake();
        }
    }
}
