//! Nodes: a named set of entities (publishers, subscriptions, services, clients, timers,
//! guard conditions) that an executor runs together.
//!
//! A node has a name, a namespace its relative names resolve against, a default mutually
//! exclusive callback group, and belongs to at most one executor. Entity handles are RAII:
//! dropping one removes it from the node, its topic and its executor.

use super::client::{Client, ClientInner};
use super::context::{Context, SimStall};
use super::error::GraphError;
use super::message_callback::MessageCallback;
use super::name::{NameKind, normalize_namespace, resolve, validate_node_name};
use super::publisher::Publisher;
use super::qos::Qos;
use super::qos_event::EndpointEvents;
use super::ros_args::RosArgs;
use super::service::{ResponseFuture, Service, ServiceCallback, ServiceInner};
use super::subscription::{SubCallback, SubInner, Subscription};
use super::view::{EntityKind, GraphEntity, GraphEntry};
use crate::exec::callback::Callback;
use crate::exec::entity::{BoxFuture, Entity, EntityCore};
use crate::exec::{
    CallbackGroup, CallbackTimer, ExecError, ExecShared, GroupKind, GuardCondition, GuardInner,
    TimerCallback, TimerInner,
};
use crate::logging::Logger;
use crate::time::{Clock, Duration, RosClock, Tick, Timer};
use kairos_interface::{Payload, ServiceCall};
use parking_lot::Mutex;
use std::collections::BTreeMap;
use std::fmt;
use std::future::Future;
use std::sync::atomic::AtomicU64;
use std::sync::{Arc, Weak};

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

    /// A publisher of `T` on `topic` (resolved against the node's namespace); see [`Publisher`].
    ///
    /// Fails when the name is invalid, the QoS cannot be honoured, or the topic already carries another type.
    pub fn create_publisher<T: Payload>(
        &self,
        topic: &str,
        qos: Qos,
    ) -> Result<Publisher<T>, GraphError> {
        qos.capacity()?;
        let name = self.resolve_name(NameKind::Topic, topic)?;
        let topic = self.shared.context.topic::<T>(&name)?;
        let remote = super::transport::publisher::<T>(self, &name, qos)?;
        // A publisher on the wire is traced by the handle its subscribers elsewhere know it
        // by, so flows cross processes.
        let handle = remote
            .as_ref()
            .and_then(|r| r.trace_handle())
            .unwrap_or_else(crate::trace::next_handle);
        let depth = qos.capacity()? as u64;
        crate::trace::tp::rcl_publisher_init(handle, self.shared.handle, handle, &name, depth);
        let (type_name, type_hash) = payload_type::<T>();
        let events = EndpointEvents::new(
            self,
            EntityKind::Publisher,
            &name,
            qos,
            (&type_name, &type_hash),
        );
        let sink = remote.as_ref().and_then(|r| r.liveliness_sink());
        events.start(self, handle, sink)?;
        Ok(Publisher {
            _in_graph: self.in_graph(
                EntityKind::Publisher,
                &name,
                (type_name, type_hash),
                Some(qos),
            ),
            remote,
            topic,
            qos,
            published: AtomicU64::new(0),
            loans: Default::default(),
            handle,
            events,
            node: self.clone(),
            lifespan: qos.lifespan.map(|span| span.as_nanos()),
        })
    }

    /// Runs `callback` once per message on the node's executor. The callback takes the
    /// message as `Arc<T>` (to keep it, without a copy) or as `&T` (to read it).
    ///
    /// ```
    /// use kairos::graph::{Context, Node, Qos};
    /// use std::sync::Arc;
    ///
    /// let node = Node::new_in(&Context::new(), "listener", "/")?;
    /// let _by_ref = node.create_subscription("chatter", Qos::keep_last(10), |m: &String| {
    ///     println!("{m}");
    /// })?;
    /// let _by_arc = node.create_subscription("chatter", Qos::keep_last(10), |m: Arc<String>| {
    ///     let _kept: Arc<String> = m;
    /// })?;
    /// # Ok::<(), kairos::graph::GraphError>(())
    /// ```
    pub fn create_subscription<T, Args>(
        &self,
        topic: &str,
        qos: Qos,
        callback: impl MessageCallback<T, Args>,
    ) -> Result<Subscription<T>, GraphError>
    where
        T: Payload,
    {
        self.subscribe(topic, qos, SubCallback::Sync(callback.into_arc_callback()))
    }

    /// Like [`create_subscription`](Self::create_subscription) with an `async` callback,
    /// polled by the executor; the group stays held until its future completes.
    ///
    /// The callback is cloned for each message and called once, so an async closure that
    /// captures state (`async move |m: Arc<T>| { state.use(m).await }`) works as it is;
    /// its captures must be `Clone` (wrap what is not in an `Arc`).
    pub fn create_subscription_async<T, F, Fut>(
        &self,
        topic: &str,
        qos: Qos,
        callback: F,
    ) -> Result<Subscription<T>, GraphError>
    where
        T: Payload,
        F: FnOnce(Arc<T>) -> Fut + Clone + Send + Sync + 'static,
        Fut: Future<Output = ()> + Send + 'static,
    {
        let callback = move |message| -> BoxFuture { Box::pin(callback.clone()(message)) };
        self.subscribe(topic, qos, SubCallback::Async(Box::new(callback)))
    }

    fn subscribe<T: Payload>(
        &self,
        topic: &str,
        qos: Qos,
        callback: SubCallback<T>,
    ) -> Result<Subscription<T>, GraphError> {
        let capacity = qos.capacity()?;
        let name = self.resolve_name(NameKind::Topic, topic)?;
        let topic = self.shared.context.topic::<T>(&name)?;
        let (type_name, type_hash) = payload_type::<T>();
        let events = EndpointEvents::new(
            self,
            EntityKind::Subscription,
            &name,
            qos,
            (&type_name, &type_hash),
        );
        let inner = self.add_entity(
            format_args!("subscription {name}"),
            |core| {
                let pool = topic.pool.clone();
                SubInner::new(core, qos, capacity, callback, pool, events.clone())
            },
            |_, id| {
                let capacity = capacity as u64;
                crate::trace::tp::rcl_subscription_init(
                    id,
                    self.shared.handle,
                    id,
                    &name,
                    capacity,
                );
                crate::trace::tp::rclcpp_subscription_init(id, id);
                crate::trace::tp::rclcpp_subscription_callback_added(id, id);
                Ok(())
            },
        )?;
        events.start(self, inner.core().id(), None)?;
        topic.subscribe(inner.clone());
        let remote = super::transport::subscription(self, &name, qos, &inner);
        let mut subscription = Subscription {
            _in_graph: self.in_graph(
                EntityKind::Subscription,
                &name,
                (type_name, type_hash),
                Some(qos),
            ),
            _remote: None,
            inner,
            topic,
            node: self.clone(),
        };
        // On failure the subscription drops here, which takes it off its node and topic.
        subscription._remote = remote?;
        Ok(subscription)
    }

    /// Serves `service` with `callback`, run once per request on the node's executor.
    ///
    /// The request and response types are [`Payload`]s: generated request and response
    /// messages (`AddTwoIntsRequest`, `AddTwoIntsResponse`) serve their service to other
    /// processes too; Rust values serve this process.
    pub fn create_service<Req, Resp, F>(
        &self,
        service: &str,
        callback: F,
    ) -> Result<Service<Req, Resp>, GraphError>
    where
        Req: Payload,
        Resp: Payload,
        F: Fn(Req) -> Resp + Send + Sync + 'static,
    {
        self.serve(service, ServiceCallback::Sync(Box::new(callback)))
    }

    /// Like [`create_service`](Self::create_service) with an `async` callback, polled by
    /// the executor until it gives the response; the group stays held until then (as for
    /// an async timer). So a service can await a sleep or another service before it
    /// answers:
    ///
    /// ```
    /// use kairos::graph::{Context, Node};
    ///
    /// let context = Context::new();
    /// let adder = Node::new_in(&context, "adder", "/")?;
    /// let _add = adder.create_service("add", |(a, b): (i64, i64)| a + b)?;
    /// let node = Node::new_in(&context, "doubler", "/")?;
    /// let client = node.create_client::<fn((i64, i64)) -> i64>("add")?;
    /// let _double = node.create_service_async("double", move |x: i64| {
    ///     let sum = client.call_async((x, x));
    ///     async move { sum.await.unwrap_or(0) }
    /// })?;
    /// # Ok::<(), kairos::graph::GraphError>(())
    /// ```
    ///
    /// A panic of the future answers the caller `ServicePanicked`; an executor shut down
    /// while the future is suspended fails the call with `ExecutorShutDown`.
    pub fn create_service_async<Req, Resp, F, Fut>(
        &self,
        service: &str,
        callback: F,
    ) -> Result<Service<Req, Resp>, GraphError>
    where
        Req: Payload,
        Resp: Payload,
        F: Fn(Req) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Resp> + Send + 'static,
    {
        let callback = move |request| -> ResponseFuture<Resp> { Box::pin(callback(request)) };
        self.serve(service, ServiceCallback::Async(Box::new(callback)))
    }

    fn serve<Req, Resp>(
        &self,
        service: &str,
        callback: ServiceCallback<Req, Resp>,
    ) -> Result<Service<Req, Resp>, GraphError>
    where
        Req: Payload,
        Resp: Payload,
    {
        let name: Arc<str> = self.resolve_name(NameKind::Service, service)?.into();
        let inner = self.add_entity(
            format_args!("service {name}"),
            |core| ServiceInner::new(core, name.clone(), callback),
            |inner, id| {
                self.shared.context.register_server(&name, inner)?;
                crate::trace::tp::rcl_service_init(id, self.shared.handle, id, &name);
                crate::trace::tp::rclcpp_service_callback_added(id, id);
                Ok(())
            },
        )?;
        let remote = super::transport::service::<Req, Resp>(self, &name);
        let mut service = Service {
            _in_graph: self.in_graph(
                EntityKind::Service,
                &name,
                (service_type::<fn(Req) -> Resp>(), String::new()),
                None,
            ),
            _remote: None,
            inner,
            node: self.clone(),
        };
        // On failure the service drops here, which takes it off its node and context.
        service._remote = remote?;
        Ok(service)
    }

    /// A client of `service` (resolved against the node's namespace); see [`Client`].
    ///
    /// `S` names the service: a generated service type (`AddTwoInts`), which calls servers
    /// in other processes too, or `fn(Request) -> Response`:
    ///
    /// ```
    /// use kairos::graph::{Client, Context, Node};
    ///
    /// let node = Node::new_in(&Context::new(), "caller", "/")?;
    /// let _double: Client<fn(i64) -> i64> = node.create_client("double")?;
    /// # Ok::<(), kairos::graph::GraphError>(())
    /// ```
    ///
    /// Fails when the name is invalid, the service already has other types, or the
    /// process's transport cannot carry the client.
    pub fn create_client<S: ServiceCall>(&self, service: &str) -> Result<Client<S>, GraphError> {
        let name: Arc<str> = self.resolve_name(NameKind::Service, service)?.into();
        self.shared
            .context
            .check_service_types::<S::Request, S::Response>(&name)?;
        let context = self.shared.context.clone();
        let remote = super::transport::client::<S>(self, &name)?;
        let inner = self.add_entity(
            format_args!("client {name}"),
            |core| ClientInner::new(core, name.clone(), context, remote),
            |_, id| {
                crate::trace::tp::rcl_client_init(id, self.shared.handle, id, &name);
                Ok(())
            },
        )?;
        let in_graph = self.in_graph(
            EntityKind::Client,
            &name,
            (service_type::<S>(), String::new()),
            None,
        );
        Ok(Client::new(inner, self.clone(), in_graph))
    }

    /// A guard condition named `name` whose `callback` runs once per trigger.
    pub fn create_guard_condition<F>(&self, name: &str, callback: F) -> GuardCondition
    where
        F: Fn() + Send + Sync + 'static,
    {
        self.guard(name, Callback::Sync(Box::new(move |()| callback())))
    }

    /// A guard condition named `name` whose `async` `callback` starts once per trigger;
    /// the node's group is held until the future it returns completes (as an async timer).
    pub fn create_guard_condition_async<F, Fut>(&self, name: &str, callback: F) -> GuardCondition
    where
        F: Fn() -> Fut + Send + Sync + 'static,
        Fut: Future<Output = ()> + Send + 'static,
    {
        self.guard(
            name,
            Callback::Async(Box::new(move |()| -> BoxFuture { Box::pin(callback()) })),
        )
    }

    fn guard(&self, name: &str, callback: Callback<()>) -> GuardCondition {
        let inner = self
            .add_entity(
                format_args!("guard condition {name}"),
                |core| GuardInner::new(core, callback),
                |_, _| Ok(()),
            )
            .expect("announcing a guard condition cannot fail");
        let node = self.clone();
        let id = inner.core().id();
        GuardCondition {
            inner,
            on_drop: Some(Box::new(move || node.forget(id))),
        }
    }

    /// The node's clock: ROS time, i.e. system time, or the context's simulation time
    /// after [`set_use_sim_time(true)`](Self::set_use_sim_time); or whatever clock
    /// [`set_clock`](Self::set_clock) chose.
    pub fn clock(&self) -> Clock {
        self.shared.clock.lock().clone()
    }

    /// Switches the node between simulation time (its context's `/clock`) and system time,
    /// as ROS's `use_sim_time` parameter does: the node's clock becomes a
    /// [`RosClock`](crate::time::RosClock) over the context's simulated clock (made on the
    /// first call), and switching it tells its jump handlers, ends waits in progress with
    /// `ClockChanged`, and restarts its timers' periods.
    pub fn set_use_sim_time(&self, on: bool) -> Result<(), GraphError> {
        let mut clock = self.shared.clock.lock();
        let ros = match clock.as_ros() {
            Some(ros) => ros.clone(),
            None => {
                let sim = self.shared.context.sim_clock_with(self.shared.sim_stall)?;
                let ros = RosClock::new(sim);
                *clock = ros.clock();
                ros
            }
        };
        drop(clock);
        ros.set_use_sim_time(on);
        self.show_clock_subscription(on)
    }

    /// Shows, while `on`, the `/clock` subscription of a node on simulation time, in this
    /// process's graph and to other processes, as rclcpp's time source subscribes
    /// (`ClockQoS`: best effort, the last 1): a simulator sees who follows its clock.
    /// Nothing is delivered through it: the context's simulated clock hears `/clock`
    /// once for all its nodes.
    pub(crate) fn show_clock_subscription(&self, on: bool) -> Result<(), GraphError> {
        use super::clock_msg::{CLOCK_TOPIC, ClockMsg};
        let mut shown = self.shared.clock_subscription.lock();
        if !on {
            *shown = None;
        } else if shown.is_none() {
            let qos = Qos::keep_last(1).best_effort();
            let remote =
                super::transport::announced_subscription::<ClockMsg>(self, CLOCK_TOPIC, qos)?;
            let local = self.in_graph(
                EntityKind::Subscription,
                CLOCK_TOPIC,
                payload_type::<ClockMsg>(),
                Some(qos),
            );
            *shown = Some((local, remote));
        }
        Ok(())
    }

    /// Sets the clock that timers created from now on use.
    pub fn set_clock(&self, clock: Clock) {
        *self.shared.clock.lock() = clock;
    }

    /// Runs `callback` every `period` (a `kairos` or `std` duration) of the node's clock.
    ///
    /// ```
    /// use kairos::graph::{Context, Node};
    ///
    /// let node = Node::new_in(&Context::new(), "talker", "/")?;
    /// let _timer = node.create_timer(std::time::Duration::from_millis(100), |tick| {
    ///     println!("tick at {}", tick.actual);
    /// })?;
    /// # Ok::<(), kairos::graph::GraphError>(())
    /// ```
    pub fn create_timer<F>(
        &self,
        period: impl Into<Duration>,
        callback: F,
    ) -> Result<CallbackTimer, GraphError>
    where
        F: Fn(Tick) + Send + Sync + 'static,
    {
        self.create_timer_on(self.clock(), period, callback)
    }

    /// Runs `callback` every `period` of `clock`.
    pub fn create_timer_on<F>(
        &self,
        clock: Clock,
        period: impl Into<Duration>,
        callback: F,
    ) -> Result<CallbackTimer, GraphError>
    where
        F: Fn(Tick) + Send + Sync + 'static,
    {
        self.timer(
            clock,
            period.into(),
            TimerCallback::Sync(Box::new(callback)),
        )
    }

    /// Like [`create_timer`](Self::create_timer) with an `async` callback, polled by the
    /// executor; the group stays held until its future completes.
    ///
    /// The callback is cloned for each tick and called once, so an async closure that
    /// captures state works as it is; its captures must be `Clone` (wrap what is not in
    /// an `Arc`):
    ///
    /// ```
    /// use kairos::graph::{Context, Node};
    ///
    /// let context = Context::new();
    /// let server = Node::new_in(&context, "server", "/")?;
    /// let _service = server.create_service("add", |(a, b): (i64, i64)| a + b)?;
    /// let node = Node::new_in(&context, "caller", "/")?;
    /// let client = node.create_client::<fn((i64, i64)) -> i64>("add")?;
    /// let _timer = node.create_timer_async(std::time::Duration::from_secs(1), async move |_| {
    ///     let sum = client.call_async((2, 3)).await;
    ///     println!("{sum:?}");
    /// })?;
    /// # Ok::<(), kairos::graph::GraphError>(())
    /// ```
    pub fn create_timer_async<F, Fut>(
        &self,
        period: impl Into<Duration>,
        callback: F,
    ) -> Result<CallbackTimer, GraphError>
    where
        F: FnOnce(Tick) -> Fut + Clone + Send + Sync + 'static,
        Fut: Future<Output = ()> + Send + 'static,
    {
        let callback = move |tick| -> BoxFuture { Box::pin(callback.clone()(tick)) };
        self.timer(
            self.clock(),
            period.into(),
            TimerCallback::Async(Box::new(callback)),
        )
    }

    fn timer(
        &self,
        clock: Clock,
        period: Duration,
        callback: TimerCallback,
    ) -> Result<CallbackTimer, GraphError> {
        let timer = Timer::new(clock, period)?;
        let timer_handle = timer.trace_handle();
        let inner = self.add_entity(
            format_args!("timer {period}"),
            |core| TimerInner::new(core, timer, callback),
            |_, id| {
                crate::trace::tp::rclcpp_timer_callback_added(timer_handle, id);
                crate::trace::tp::rclcpp_timer_link_node(timer_handle, self.shared.handle);
                Ok(())
            },
        )?;
        let id = inner.core().id();
        let node = self.clone();
        Ok(CallbackTimer {
            inner,
            on_drop: Some(Box::new(move || node.forget(id))),
        })
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

/// The ROS type of a service, or its Rust signature for one that stays in the process.
fn service_type<S: ServiceCall>() -> String {
    S::wire().map_or_else(
        || {
            format!(
                "fn({}) -> {}",
                std::any::type_name::<S::Request>(),
                std::any::type_name::<S::Response>()
            )
        },
        |wire| wire.type_name().to_owned(),
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
