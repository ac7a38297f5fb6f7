//! Nodes: a named set of entities (publishers, subscriptions, services, clients, timers,
//! guard conditions) that an executor runs together.
//!
//! A node has a name, a namespace its relative names resolve against, a default mutually
//! exclusive callback group, and belongs to at most one executor. Entity handles are RAII:
//! dropping one removes it from the node, its topic and its executor.

use super::context::{Context, SimStall};
use super::error::GraphError;
use super::name::{NameKind, normalize_namespace, resolve, validate_node_name};
use super::qos::Qos;
use super::ros_args::RosArgs;
use super::view::{EntityKind, GraphEntity, GraphEntry};
use crate::exec::entity::{Entity, EntityCore};
use crate::exec::{CallbackGroup, ExecError, ExecShared, GroupKind};
use crate::logging::Logger;
use crate::time::{Clock, RosClock};
use kairos_interface::Payload;
use parking_lot::Mutex;
use std::collections::BTreeMap;
use std::fmt;
use std::sync::{Arc, Weak};

mod services;
mod timers;
mod topics;

/// Settings of a node made at its creation, as rclcpp's `NodeOptions`: pass them to
/// [`Node::with_options`].
///
/// ```
/// use kairos::graph::{Context, Node, NodeOptions, SimStall};
/// use kairos::time::StallPolicy;
///
/// // A node on simulation time that keeps moving on the steady clock if /clock stalls
/// // for more than 200 ms.
/// let options = NodeOptions::new().use_sim_time(true).sim_stall(SimStall::new(
///     StallPolicy::FallbackToSteady,
///     std::time::Duration::from_millis(200),
/// ));
/// let node = Node::with_options(&Context::new(), "controller", options)?;
/// assert_eq!(node.sim_stall().policy, StallPolicy::FallbackToSteady);
/// # Ok::<(), kairos::graph::GraphError>(())
/// ```
#[derive(Debug, Clone, Default)]
pub struct NodeOptions {
    namespace: Option<String>,
    use_sim_time: bool,
    sim_stall: Option<SimStall>,
    /// `true` (the default) unless [`use_global_arguments(false)`](Self::use_global_arguments).
    ignore_global_arguments: bool,
    /// The node's own ROS arguments ([`arguments`](Self::arguments)).
    arguments: RosArgs,
    /// `false` (the default) unless [`enable_rosout(false)`](Self::enable_rosout).
    no_rosout: bool,
}

impl NodeOptions {
    /// The defaults: root namespace, system time, the context's stall setting.
    pub fn new() -> Self {
        Self::default()
    }

    /// The namespace the node's relative names resolve against (default `/`).
    pub fn namespace(mut self, namespace: &str) -> Self {
        self.namespace = Some(namespace.to_owned());
        self
    }

    /// Start on simulation time (ROS's `use_sim_time` parameter); see
    /// [`Node::set_use_sim_time`].
    pub fn use_sim_time(mut self, on: bool) -> Self {
        self.use_sim_time = on;
        self
    }

    /// What the node's simulated clock does when `/clock` falls silent; default: the
    /// context's setting ([`Context::sim_stall`]).
    pub fn sim_stall(mut self, stall: SimStall) -> Self {
        self.sim_stall = Some(stall);
        self
    }

    /// Whether the context's ROS arguments (`__node`, `__ns`, remaps, `-p`) apply to this
    /// node (default `true`), as rclcpp's `NodeOptions::use_global_arguments`. Runtime
    /// nodes that bridge the graph (the transport's own) are made with `false`, so that a
    /// `-r __node:=talker` meant for the program's node does not rename them too.
    pub fn use_global_arguments(mut self, on: bool) -> Self {
        self.ignore_global_arguments = !on;
        self
    }

    /// The node's own ROS arguments, as rclcpp's `NodeOptions::arguments` (rclpy's
    /// `cli_args`): they apply to this node only, after the context's, so where both
    /// remap the same name or set the same parameter, the node's own win.
    pub fn arguments(mut self, args: RosArgs) -> Self {
        self.arguments = args;
        self
    }

    /// Whether the node's log lines go to `/rosout` (default `true`), as rclcpp's
    /// `NodeOptions::enable_rosout`. `--disable-rosout-logs` in the ROS arguments that
    /// apply to the node turns it off too; the console and the trace still get the lines.
    pub fn enable_rosout(mut self, on: bool) -> Self {
        self.no_rosout = !on;
        self
    }
}

/// A handle to a node; clones refer to the same node. A handle made by
/// [`with_group`](Node::with_group) creates its entities in that group.
#[derive(Clone)]
pub struct Node {
    shared: Arc<NodeShared>,
    group: CallbackGroup,
}

pub(crate) struct NodeShared {
    name: String,
    namespace: String,
    fq_name: String,
    context: Context,
    default_group: CallbackGroup,
    groups: Mutex<Vec<CallbackGroup>>,
    /// By id, which grows with creation: iteration is in creation order, and forgetting
    /// one entity is O(log n), so dropping a node's n entities is not O(n^2).
    entities: Mutex<BTreeMap<u64, Arc<dyn Entity>>>,
    /// The ROS arguments that apply to this node: the context's (unless
    /// [`NodeOptions::use_global_arguments`] is false), then its own.
    ros_args: RosArgs,
    executor: Mutex<Option<Weak<ExecShared>>>,
    clock: Mutex<Clock>,
    /// What the node's simulated clock does when `/clock` falls silent.
    sim_stall: SimStall,
    /// The handle the trace knows this node by.
    handle: u64,
    /// The node's logger (its lines also go to `/rosout`).
    logger: Logger,
    /// The node's place in the graph, for as long as it lives.
    _in_graph: GraphEntry,
    /// The node's announcement to other processes (its liveliness token on Zenoh), for as
    /// long as it lives; none without a transport.
    _on_transport: std::sync::OnceLock<super::transport::Declaration>,
    /// The `/clock` subscription the node shows while on simulation time (see
    /// [`Node::show_clock_subscription`]).
    clock_subscription: Mutex<Option<(GraphEntry, Option<super::transport::Declaration>)>>,
}

impl Node {
    /// A node in the root namespace of the process-wide context.
    pub fn new(name: &str) -> Result<Self, GraphError> {
        Self::new_in(&Context::global(), name, "/")
    }

    /// A node `name` in `namespace` of `context`.
    pub fn new_in(context: &Context, name: &str, namespace: &str) -> Result<Self, GraphError> {
        Self::with_options(context, name, NodeOptions::new().namespace(namespace))
    }

    /// A node `name` of `context` with `options` (namespace, `use_sim_time`, stall policy).
    pub fn with_options(
        context: &Context,
        name: &str,
        options: NodeOptions,
    ) -> Result<Self, GraphError> {
        let global = if options.ignore_global_arguments {
            RosArgs::default()
        } else {
            context.ros_args()?.clone()
        };
        let ros_args = global.followed_by(&options.arguments);
        let rosout = !options.no_rosout && ros_args.rosout_logs().unwrap_or(true);
        // `__node` and `__ns` rules, for this node's name as created or for every node.
        let created_as = name;
        let name = ros_args
            .node_name_for(created_as)
            .unwrap_or(created_as)
            .to_owned();
        let name = name.as_str();
        validate_node_name(name)?;
        let namespace = ros_args
            .namespace_for(created_as)
            .or(options.namespace.as_deref())
            .unwrap_or("/");
        let namespace = normalize_namespace(namespace)?;
        let fq_name = if namespace == "/" {
            format!("/{name}")
        } else {
            format!("{namespace}/{name}")
        };
        let sim_stall = options.sim_stall.unwrap_or(context.sim_stall()).check()?;
        // The node clock: system time until `set_use_sim_time(true)` (ROS time semantics).
        let ros = RosClock::new(context.sim_clock_with(sim_stall)?);
        if options.use_sim_time {
            ros.set_use_sim_time(true);
        }
        let handle = crate::trace::next_handle();
        crate::trace::tp::rcl_node_init(handle, handle, name, &namespace);
        let default_group = CallbackGroup::new(
            format!("default group of node {fq_name}"),
            GroupKind::MutuallyExclusive,
        );
        let logger_name = crate::logging::node_logger_name(&fq_name);
        let in_graph = context.registry().add(GraphEntity {
            kind: EntityKind::Node,
            node_name: name.to_owned(),
            node_namespace: namespace.clone(),
            name: String::new(),
            type_name: String::new(),
            type_hash: String::new(),
            qos: None,
            local: true,
            liveliness_lost: false,
        });
        let node = Self {
            group: default_group.clone(),
            shared: Arc::new_cyclic(|me| NodeShared {
                logger: Logger::with_sink(
                    &logger_name,
                    rosout.then(|| super::rosout::sink(me.clone())),
                ),
                name: name.to_owned(),
                namespace,
                fq_name,
                context: context.clone(),
                default_group,
                groups: Mutex::new(Vec::new()),
                entities: Mutex::new(BTreeMap::new()),
                executor: Mutex::new(None),
                clock: Mutex::new(ros.clock()),
                sim_stall,
                handle,
                ros_args,
                _in_graph: in_graph,
                _on_transport: std::sync::OnceLock::new(),
                clock_subscription: Mutex::new(None),
            }),
        };
        // Announced at once, as rmw announces a node at its creation: other processes see
        // a node that has only timers, or only entities that stay in the process.
        if let Some(announced) = super::transport::node(&node)? {
            let _ = node.shared._on_transport.set(announced);
        }
        node.show_clock_subscription(options.use_sim_time)?;
        Ok(node)
    }

    /// The node's logger, named as rcl names it (`/robot/planner` logs as
    /// `robot.planner`); its lines go to the console, `/rosout` and the trace (see
    /// [`logging`](crate::logging)).
    pub fn logger(&self) -> &Logger {
        &self.shared.logger
    }

    /// A handle that does not keep the node alive ([`Node::from_shared`] after an upgrade).
    pub(crate) fn downgrade(&self) -> Weak<NodeShared> {
        Arc::downgrade(&self.shared)
    }

    pub(crate) fn from_shared(shared: Arc<NodeShared>) -> Node {
        Node {
            group: shared.default_group.clone(),
            shared,
        }
    }

    /// The node's name, e.g. `planner`.
    pub fn name(&self) -> &str {
        &self.shared.name
    }

    /// The node's namespace, e.g. `/robot`.
    pub fn namespace(&self) -> &str {
        &self.shared.namespace
    }

    /// `namespace/name`, e.g. `/robot/planner`.
    pub fn fully_qualified_name(&self) -> &str {
        &self.shared.fq_name
    }

    /// The handle of this node in traces (`node_handle` of `ros2:rcl_node_init`).
    pub fn trace_handle(&self) -> u64 {
        self.shared.handle
    }

    /// The graph the node belongs to.
    pub fn context(&self) -> &Context {
        &self.shared.context
    }

    /// What the node's simulated clock does when `/clock` falls silent (chosen with
    /// [`NodeOptions::sim_stall`], else its context's).
    pub fn sim_stall(&self) -> SimStall {
        self.shared.sim_stall
    }

    /// The node's default group (mutually exclusive), where entities go unless told otherwise.
    pub fn default_callback_group(&self) -> &CallbackGroup {
        &self.shared.default_group
    }

    /// A new callback group of this node, named `name` in error messages and reports.
    pub fn create_callback_group(&self, name: &str, kind: GroupKind) -> CallbackGroup {
        let group = CallbackGroup::new(format!("{name} (node {})", self.shared.fq_name), kind);
        self.shared.groups.lock().push(group.clone());
        group
    }

    /// A handle to this node that creates its entities in `group` (a group of this node).
    pub fn with_group(&self, group: &CallbackGroup) -> Result<Node, GraphError> {
        let ours = *group == self.shared.default_group || self.shared.groups.lock().contains(group);
        if !ours {
            return Err(GraphError::ForeignGroup {
                group: group.name().to_owned(),
                node: self.shared.fq_name.clone(),
            });
        }
        Ok(Self {
            shared: self.shared.clone(),
            group: group.clone(),
        })
    }

    /// The ROS arguments that apply to this node: the context's (unless
    /// [`NodeOptions::use_global_arguments`] is false), then its own
    /// ([`NodeOptions::arguments`]). Its parameter overrides are
    /// `ros_args().overrides_for(node.fully_qualified_name())`.
    pub fn ros_args(&self) -> &RosArgs {
        &self.shared.ros_args
    }

    /// Resolves a topic or service name against this node.
    /// A remapping rule of the context's ROS arguments (`-r from:=to`) applies after.
    pub fn resolve_name(&self, kind: NameKind, name: &str) -> Result<String, GraphError> {
        let (namespace, node) = (&self.shared.namespace, &self.shared.name);
        let resolved = resolve(kind, name, namespace, node)?;
        let remapped = self
            .shared
            .ros_args
            .remap_name(kind, &resolved, namespace, node);
        Ok(remapped.unwrap_or(resolved))
    }

    /// The one way an entity is made: `build` gets its core (labelled `{what} (node
    /// <name>)`, in this handle's callback group, pointing back at the entity), `announce`
    /// gets the entity and its id to make it known (tracepoints, the context's service
    /// table), and only then is it added to the node and so to its executor: no callback
    /// of it runs before it is announced, and an entity whose announcement fails is
    /// dropped without ever having been registered.
    fn add_entity<E: Entity + 'static>(
        &self,
        what: fmt::Arguments<'_>,
        build: impl FnOnce(EntityCore) -> E,
        announce: impl FnOnce(&Arc<E>, u64) -> Result<(), GraphError>,
    ) -> Result<Arc<E>, GraphError> {
        let label = format!("{what} (node {})", self.shared.fq_name);
        let inner = Arc::new_cyclic(|me: &Weak<E>| {
            let me: Weak<dyn Entity> = me.clone();
            build(EntityCore::new(
                label,
                self.group.clone(),
                me,
                Some(self.shared.logger.clone()),
            ))
        });
        announce(&inner, inner.core().id())?;
        self.register(inner.clone());
        Ok(inner)
    }

    /// Shows an entity of this node in the graph until the returned entry drops.
    fn in_graph(
        &self,
        kind: EntityKind,
        name: &str,
        (type_name, type_hash): (String, String),
        qos: Option<Qos>,
    ) -> GraphEntry {
        self.shared.context.registry().add(GraphEntity {
            kind,
            node_name: self.shared.name.clone(),
            node_namespace: self.shared.namespace.clone(),
            name: name.to_owned(),
            type_name,
            type_hash,
            qos,
            local: true,
            liveliness_lost: false,
        })
    }

    /// Adds an entity; it runs on the node's executor, if any.
    pub(crate) fn register(&self, entity: Arc<dyn Entity>) {
        let executor = self.shared.executor.lock();
        self.shared
            .entities
            .lock()
            .insert(entity.core().id(), entity.clone());
        if let Some(exec) = executor.as_ref().and_then(Weak::upgrade) {
            entity.core().attach(&exec);
        }
    }

    /// The node's entities now (a snapshot, for the executor's counts and shutdown).
    pub(crate) fn entities(&self) -> Vec<Arc<dyn Entity>> {
        self.shared.entities.lock().values().cloned().collect()
    }

    /// Removes an entity whose handle was dropped.
    pub(crate) fn forget(&self, id: u64) {
        self.shared.entities.lock().remove(&id);
    }

    pub(crate) fn attach(&self, exec: &Arc<ExecShared>) -> Result<(), ExecError> {
        let mut executor = self.shared.executor.lock();
        if executor.as_ref().is_some_and(|e| e.strong_count() > 0) {
            return Err(ExecError::AlreadyAttached {
                node: self.shared.fq_name.clone(),
            });
        }
        *executor = Some(Arc::downgrade(exec));
        crate::signal::watch(exec);
        for entity in self.shared.entities.lock().values() {
            entity.core().attach(exec);
        }
        Ok(())
    }

    pub(crate) fn detach(&self) {
        let mut executor = self.shared.executor.lock();
        *executor = None;
        for entity in self.shared.entities.lock().values() {
            entity.core().detach();
        }
    }

    pub(crate) fn same_node(&self, other: &Node) -> bool {
        Arc::ptr_eq(&self.shared, &other.shared)
    }

    /// The group this handle creates entities in.
    pub fn callback_group(&self) -> &CallbackGroup {
        &self.group
    }
}

impl fmt::Debug for Node {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Node")
            .field("name", &self.shared.fq_name)
            .field("group", &self.group.name())
            .finish()
    }
}

/// The ROS type of a topic's messages and its RIHS01 hash, or the Rust type of one that
/// stays in the process and no hash.
fn payload_type<T: Payload>() -> (String, String) {
    T::wire().map_or_else(
        || (std::any::type_name::<T>().to_owned(), String::new()),
        |wire| (wire.type_name().to_owned(), wire.type_hash().to_string()),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_node_without_global_arguments_keeps_its_name_namespace_and_topics() {
        let (args, _) = RosArgs::parse([
            "prog",
            "--ros-args",
            "-r",
            "__node:=speaker",
            "-r",
            "__ns:=/robot",
            "-r",
            "/clock:=/sim/clock",
            "-p",
            "rate:=5",
        ])
        .unwrap();
        let context = Context::with_ros_args(args);
        let user = Node::new_in(&context, "talker", "/").unwrap();
        assert_eq!(user.fully_qualified_name(), "/robot/speaker");
        assert_eq!(
            user.resolve_name(NameKind::Topic, "/clock").unwrap(),
            "/sim/clock"
        );
        let runtime = Node::with_options(
            &context,
            "_bridge",
            NodeOptions::new().use_global_arguments(false),
        )
        .unwrap();
        assert_eq!(runtime.fully_qualified_name(), "/_bridge");
        assert_eq!(
            runtime.resolve_name(NameKind::Topic, "/clock").unwrap(),
            "/clock"
        );
        assert!(runtime.ros_args().overrides_for("/_bridge").is_empty());
        assert!(!user.ros_args().overrides_for("/robot/speaker").is_empty());
    }

    #[test]
    fn a_node_s_own_arguments_apply_after_the_context_s_and_to_it_alone() {
        use crate::graph::ParameterValue;

        let (global, _) = RosArgs::parse([
            "prog",
            "--ros-args",
            "-r",
            "__ns:=/robot",
            "-r",
            "chatter:=/news",
            "-p",
            "rate:=10",
            "-p",
            "mode:=auto",
        ])
        .unwrap();
        let (own, _) = RosArgs::parse([
            "prog",
            "--ros-args",
            "-r",
            "chatter:=/own",
            "-p",
            "rate:=20",
        ])
        .unwrap();
        let context = Context::with_ros_args(global);
        let node = Node::with_options(
            &context,
            "talker",
            NodeOptions::new().arguments(own.clone()),
        )
        .unwrap();
        assert_eq!(node.fully_qualified_name(), "/robot/talker");
        assert_eq!(
            node.resolve_name(NameKind::Topic, "chatter").unwrap(),
            "/own"
        );
        let overrides = node.ros_args().overrides_for(node.fully_qualified_name());
        assert_eq!(overrides["rate"], ParameterValue::Integer(20));
        assert_eq!(overrides["mode"], ParameterValue::String("auto".into()));

        let other = Node::new_in(&context, "listener", "/").unwrap();
        assert_eq!(
            other.resolve_name(NameKind::Topic, "chatter").unwrap(),
            "/news"
        );
        let alone = Node::with_options(
            &context,
            "alone",
            NodeOptions::new()
                .use_global_arguments(false)
                .arguments(own),
        )
        .unwrap();
        assert_eq!(alone.fully_qualified_name(), "/alone");
        assert_eq!(
            alone.resolve_name(NameKind::Topic, "chatter").unwrap(),
            "/own"
        );
    }
}
