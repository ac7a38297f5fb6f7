//! The graph a set of nodes shares: its topics and services, each with one type.
//!
//! Nodes created with [`Node::new`](super::Node::new) share the process-wide context;
//! [`Context::new`] makes an isolated graph (tests, several simulated robots in one process).
//!
//! A context also carries the simulation time of its `/clock` topic: one [`SimClock`] per
//! stall setting ([`SimStall`]), all fed by the same `/clock` messages, so nodes that
//! chose different stall policies still read the same simulated time.
//!
//! Creating the first context of the process is the runtime's first use: it starts
//! tracing when `KAIROS_TRACE` is set ([`crate::trace`]) and installs the Ctrl-C handler
//! ([`crate::signal`]), as `rclcpp::init` does.

use super::error::GraphError;
use super::ros_args::{RosArgs, RosArgsError};
use super::service::ServiceInner;
use super::topic::{Topic, Twin};
use super::view::{GraphView, Registry};
use crate::time::{DEFAULT_STALL_TIMEOUT, Duration, SimClock, StallPolicy};
use kairos_interface::{Payload, Wire};
use parking_lot::{Condvar, Mutex};
use std::any::{Any, TypeId, type_name};
use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, OnceLock, Weak};
use std::time::Instant;

use super::clock_msg::{CLOCK_TOPIC, ClockMsg};

/// What the simulated clock of a `use_sim_time` node does when `/clock` falls silent:
/// after `timeout` of steady time without a message, the clock is *stalled* and `policy`
/// decides what its waits do (see [`StallPolicy`]).
///
/// The default is what ROS does: [`StallPolicy::Wait`] after
/// [`DEFAULT_STALL_TIMEOUT`] (1 s). Choose it per context
/// ([`Context::with_sim_stall`]) or per node
/// ([`NodeOptions::sim_stall`](super::NodeOptions::sim_stall)).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SimStall {
    /// What waits on the stalled clock do.
    pub policy: StallPolicy,
    /// Steady time without a `/clock` message after which the clock is stalled.
    pub timeout: Duration,
}

impl SimStall {
    /// `policy` after `timeout` (a `kairos` or `std` duration) without a `/clock` message.
    pub fn new(policy: StallPolicy, timeout: impl Into<Duration>) -> Self {
        SimStall {
            policy,
            timeout: timeout.into(),
        }
    }

    pub(crate) fn check(self) -> Result<Self, GraphError> {
        if self.timeout.is_positive() {
            Ok(self)
        } else {
            Err(GraphError::InvalidStallTimeout(self.timeout))
        }
    }
}

impl Default for SimStall {
    fn default() -> Self {
        SimStall::new(StallPolicy::Wait, DEFAULT_STALL_TIMEOUT)
    }
}

/// A graph of topics and services. Clones refer to the same graph.
#[derive(Clone)]
pub struct Context {
    inner: Arc<ContextInner>,
}

struct ContextInner {
    topics: Mutex<HashMap<String, TopicSlot>>,
    services: Mutex<HashMap<String, ServiceSlot>>,
    /// Notified when a server is registered.
    server_added: Condvar,
    /// The stall setting of nodes that do not choose their own.
    sim_stall: SimStall,
    /// Simulation time of this graph, fed by its `/clock` topic: one clock per stall
    /// setting asked for, made on first use.
    sim_clocks: Mutex<Vec<(SimStall, SimClock)>>,
    /// Carries this graph beyond the process, when installed (see `transport`).
    transport: OnceLock<Arc<dyn super::transport::Transport>>,
    /// The ROS arguments applied to every node (or why the command line's could not be
    /// read: the first node made reports it).
    ros_args: Result<RosArgs, RosArgsError>,
    /// This context's nodes and entities, as the graph shows them (see `view`).
    registry: Arc<Registry>,
}

impl Default for Context {
    fn default() -> Self {
        Self::new()
    }
}

/// A topic name's topics: one, or one per Rust type of one ROS message type (twins,
/// see `topic`'s ground rules).
struct TopicSlot {
    typed: Vec<TypedTopic>,
}

struct TypedTopic {
    type_id: TypeId,
    type_name: &'static str,
    wire: Option<Wire>,
    topic: Arc<dyn Any + Send + Sync>,
    twin: Arc<dyn Twin>,
}

impl TypedTopic {
    fn new<T: Payload>(name: &str) -> (Self, Arc<Topic<T>>) {
        let wire = T::wire();
        let topic = Arc::new(Topic::<T>::new(name, wire));
        let typed = TypedTopic {
            type_id: TypeId::of::<T>(),
            type_name: type_name::<T>(),
            wire,
            topic: topic.clone(),
            twin: topic.clone(),
        };
        (typed, topic)
    }

    /// Whether a `T` topic can be this one's twin: both are messages of one ROS type.
    fn is_twin_of(&self, wire: Option<Wire>) -> bool {
        match (self.wire, wire) {
            (Some(mine), Some(theirs)) => {
                mine.type_name() == theirs.type_name() && mine.type_hash() == theirs.type_hash()
            }
            _ => false,
        }
    }
}

struct ServiceSlot {
    types: (TypeId, TypeId),
    type_names: String,
    /// The servers of the service, oldest first; the first one alive answers.
    servers: Vec<ServerEntry>,
}

impl ServiceSlot {
    /// The server that answers requests now: the oldest one still alive.
    fn answering(&self) -> Option<&ServerEntry> {
        self.servers.iter().find(|s| s.server.strong_count() > 0)
    }
}

struct ServerEntry {
    server: Weak<dyn Any + Send + Sync>,
    /// The server's callback group and callback name.
    group: crate::exec::CallbackGroup,
    callback: Arc<str>,
}

fn service_type_names<Req, Resp>() -> String {
    format!("{} -> {}", type_name::<Req>(), type_name::<Resp>())
}

impl Context {
    /// An isolated graph whose `use_sim_time` nodes wait when `/clock` stalls (ROS's
    /// behaviour; see [`SimStall`]).
    pub fn new() -> Self {
        Self::build(SimStall::default(), Ok(RosArgs::default()))
    }

    /// An isolated graph whose nodes take `ros_args` (names, namespaces, remaps,
    /// parameter values), as rcl applies a program's `--ros-args`.
    ///
    /// ```
    /// use kairos::graph::{Context, Node, RosArgs};
    ///
    /// let (args, _rest) = RosArgs::parse(["talker", "--ros-args", "-r", "__ns:=/robot"])?;
    /// let node = Node::new_in(&Context::with_ros_args(args), "talker", "/")?;
    /// assert_eq!(node.fully_qualified_name(), "/robot/talker");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn with_ros_args(ros_args: RosArgs) -> Self {
        Self::build(SimStall::default(), Ok(ros_args))
    }

    /// The ROS arguments this context applies to its nodes; an `Err` says why the
    /// command line's could not be read (the process-wide context reads them).
    pub fn ros_args(&self) -> Result<&RosArgs, GraphError> {
        self.inner.ros_args.as_ref().map_err(|e| e.clone().into())
    }

    /// An isolated graph whose `use_sim_time` nodes handle a silent `/clock` as `stall`
    /// says, unless a node chooses otherwise. A stall timeout that is not positive is a
    /// [`GraphError::InvalidStallTimeout`].
    ///
    /// ```
    /// use kairos::graph::{Context, Node, SimStall};
    /// use kairos::time::StallPolicy;
    ///
    /// let context = Context::with_sim_stall(SimStall::new(
    ///     StallPolicy::Fail,
    ///     std::time::Duration::from_millis(500),
    /// ))?;
    /// let node = Node::new_in(&context, "planner", "/")?;
    /// node.set_use_sim_time(true)?;
    /// let sim = node.clock().as_ros().unwrap().sim().clone();
    /// assert_eq!(sim.policy(), StallPolicy::Fail);
    /// # Ok::<(), kairos::graph::GraphError>(())
    /// ```
    pub fn with_sim_stall(stall: SimStall) -> Result<Self, GraphError> {
        Ok(Self::build(stall.check()?, Ok(RosArgs::default())))
    }

    fn build(sim_stall: SimStall, ros_args: Result<RosArgs, RosArgsError>) -> Self {
        crate::runtime_first_use();
        // Levels are the process's, as rcutils' are: each context's arguments apply to
        // the loggers made after it.
        if let Ok(args) = &ros_args {
            crate::logging::configure(args);
        }
        Context {
            inner: Arc::new(ContextInner {
                topics: Mutex::default(),
                services: Mutex::default(),
                server_added: Condvar::new(),
                sim_stall,
                sim_clocks: Mutex::default(),
                transport: OnceLock::new(),
                ros_args,
                registry: Arc::default(),
            }),
        }
    }

    /// The process-wide context. Its nodes take the ROS arguments of the program's
    /// command line (`--ros-args ...`, read from `std::env::args` as rcl does); if they
    /// cannot be read, making a node in it fails with [`GraphError::RosArgs`].
    pub fn global() -> Self {
        static GLOBAL: OnceLock<Context> = OnceLock::new();
        GLOBAL
            .get_or_init(|| {
                let ros_args = RosArgs::from_env().map(|(args, _rest)| args);
                Self::build(SimStall::default(), ros_args)
            })
            .clone()
    }

    /// The stall setting of this context's `use_sim_time` nodes, unless they choose one.
    pub fn sim_stall(&self) -> SimStall {
        self.inner.sim_stall
    }

    /// The simulated clock of this graph, with the context's stall setting: every
    /// [`ClockMsg`] published on `/clock` sets it, at once and in the publishing thread (no
    /// executor in between, so a node waiting on simulation time cannot block its own
    /// clock), as ROS's `use_sim_time` nodes follow `/clock`. The publish returns once the callbacks
    /// it made due have run ([`SimClock::publish_settled`]): `/clock` drives node timers
    /// in lock-step.
    pub fn sim_clock(&self) -> Result<SimClock, GraphError> {
        self.sim_clock_with(self.inner.sim_stall)
    }

    /// The simulated clock of this graph with the stall setting `stall`, fed by `/clock`
    /// like [`sim_clock`](Self::sim_clock); the same setting gives the same clock.
    pub fn sim_clock_with(&self, stall: SimStall) -> Result<SimClock, GraphError> {
        let stall = stall.check()?;
        let mut clocks = self.inner.sim_clocks.lock();
        if let Some((_, sim)) = clocks.iter().find(|(s, _)| *s == stall) {
            return Ok(sim.clone());
        }
        let topic = self.topic::<ClockMsg>(CLOCK_TOPIC)?;
        let sim = SimClock::with_stall_policy(stall.policy, stall.timeout);
        // Started at the last sample, if `/clock` already spoke: a clock made later reads
        // the same time as those made before it.
        if let Some((_, first)) = clocks.first()
            && first.has_started()
        {
            let _ = sim.publish(first.now());
        }
        let target = sim.clone();
        topic.listen(Arc::new(move |msg: &ClockMsg| {
            // A message of another clock kind is ignored: only simulated time drives it.
            let _ = target.publish_settled(msg.clock);
        }));
        clocks.push((stall, sim.clone()));
        Ok(sim)
    }

    /// Carries this graph's topics and services to other processes from now on (entities
    /// created before keep to the process). A context has at most one transport: a second
    /// is handed back.
    pub fn set_transport(
        &self,
        transport: Arc<dyn super::transport::Transport>,
    ) -> Result<(), Arc<dyn super::transport::Transport>> {
        self.inner.transport.set(transport.clone())?;
        self.inner.registry.set_remote(Arc::downgrade(&transport));
        let registry = Arc::downgrade(&self.inner.registry);
        transport.watch_graph(Box::new(move || {
            if let Some(registry) = registry.upgrade() {
                registry.remote_changed();
            }
        }));
        Ok(())
    }

    /// What this context sees of the graph now: its own nodes and entities, and those of
    /// other processes its transport sees (see [`GraphView`]).
    pub fn graph(&self) -> GraphView {
        let mut entities = self.inner.registry.local();
        if let Some(transport) = self.transport() {
            entities.extend(transport.graph());
        }
        GraphView::new(entities)
    }

    pub(crate) fn registry(&self) -> &Arc<Registry> {
        &self.inner.registry
    }

    pub(crate) fn transport(&self) -> Option<&Arc<dyn super::transport::Transport>> {
        self.inner.transport.get()
    }

    /// The topic `name` (absolute), created on first use; its type is fixed from then on.
    /// A message type of the same ROS type (name and hash) as the topic's gets a twin
    /// topic of its own Rust type, linked to the others (see `topic`).
    pub(crate) fn topic<T: Payload>(&self, name: &str) -> Result<Arc<Topic<T>>, GraphError> {
        let mut topics = self.inner.topics.lock();
        let Some(slot) = topics.get_mut(name) else {
            let (typed, topic) = TypedTopic::new::<T>(name);
            topics.insert(name.to_owned(), TopicSlot { typed: vec![typed] });
            return Ok(topic);
        };
        if let Some(typed) = slot.typed.iter().find(|t| t.type_id == TypeId::of::<T>()) {
            return Ok(typed
                .topic
                .clone()
                .downcast::<Topic<T>>()
                .expect("a topic's TypeId names its type"));
        }
        let first = &slot.typed[0];
        if !first.is_twin_of(T::wire()) {
            return Err(GraphError::TypeMismatch {
                topic: name.to_owned(),
                existing: first.type_name,
                requested: type_name::<T>(),
            });
        }
        let (typed, topic) = TypedTopic::new::<T>(name);
        for other in &slot.typed {
            other.twin.add_twin(typed.twin.clone());
            typed.twin.add_twin(other.twin.clone());
        }
        let kept = slot
            .typed
            .iter()
            .map(|other| other.twin.kept_cdr())
            .find(|kept| !kept.is_empty())
            .unwrap_or_default();
        let twin = typed.twin.clone();
        slot.typed.push(typed);
        drop(topics);
        // Outside the lock: the twin's listeners may wait for callbacks that make topics.
        for (cdr, origin, depth) in kept {
            twin.deliver_cdr(&cdr, origin, Some(depth));
        }
        Ok(topic)
    }

    /// Checks (and on first use fixes) the types of service `name`.
    pub(crate) fn check_service_types<Req: 'static, Resp: 'static>(
        &self,
        name: &str,
    ) -> Result<(), GraphError> {
        service_slot::<Req, Resp>(&mut self.inner.services.lock(), name).map(|_| ())
    }

    pub(crate) fn register_server<Req, Resp>(
        &self,
        name: &str,
        server: &Arc<ServiceInner<Req, Resp>>,
    ) -> Result<(), GraphError>
    where
        Req: Send + 'static,
        Resp: Send + 'static,
    {
        let mut services = self.inner.services.lock();
        let slot = service_slot::<Req, Resp>(&mut services, name)?;
        slot.servers.retain(|s| s.server.strong_count() > 0);
        let weak: Weak<ServiceInner<Req, Resp>> = Arc::downgrade(server);
        slot.servers.push(ServerEntry {
            server: weak,
            group: server.core.group.clone(),
            callback: server.core.name.clone(),
        });
        drop(services);
        self.inner.server_added.notify_all();
        Ok(())
    }

    /// Waits until service `name` has a server or `deadline` passes (none: no deadline);
    /// true if it has one.
    pub(crate) fn wait_for_server(&self, name: &str, deadline: Option<Instant>) -> bool {
        let has_server = |services: &HashMap<String, ServiceSlot>| {
            services
                .get(name)
                .is_some_and(|slot| slot.answering().is_some())
        };
        let mut services = self.inner.services.lock();
        loop {
            if has_server(&services) {
                return true;
            }
            match deadline {
                Some(deadline) => {
                    if self
                        .inner
                        .server_added
                        .wait_until(&mut services, deadline)
                        .timed_out()
                    {
                        return has_server(&services);
                    }
                }
                None => self.inner.server_added.wait(&mut services),
            }
        }
    }

    /// Removes `server` from its service's servers.
    pub(crate) fn unregister_server<Req, Resp>(&self, server: &Arc<ServiceInner<Req, Resp>>)
    where
        Req: Send + 'static,
        Resp: Send + 'static,
    {
        let mut services = self.inner.services.lock();
        if let Some(slot) = services.get_mut(&*server.name) {
            slot.servers
                .retain(|s| !std::ptr::addr_eq(s.server.as_ptr(), Arc::as_ptr(server)));
        }
    }

    /// The mutually exclusive group of the server of service `name`, and its callback.
    pub(crate) fn server_group(
        &self,
        name: &str,
    ) -> Option<(crate::exec::shared_waits::GroupRef, String)> {
        let services = self.inner.services.lock();
        let ServerEntry {
            group, callback, ..
        } = services.get(name)?.answering()?;
        (group.kind() == crate::exec::GroupKind::MutuallyExclusive).then(|| {
            (
                crate::exec::shared_waits::GroupRef::local(group.shared.id, group.name()),
                callback.to_string(),
            )
        })
    }

    /// The server that answers service `name` now (the oldest one alive), if any.
    pub(crate) fn server<Req, Resp>(&self, name: &str) -> Option<Arc<ServiceInner<Req, Resp>>>
    where
        Req: Send + 'static,
        Resp: Send + 'static,
    {
        let services = self.inner.services.lock();
        // Upgraded as it is found: one dropped between a look and an upgrade is skipped.
        let server = services
            .get(name)?
            .servers
            .iter()
            .find_map(|s| s.server.upgrade())?;
        server.downcast::<ServiceInner<Req, Resp>>().ok()
    }
}

fn service_slot<'a, Req: 'static, Resp: 'static>(
    services: &'a mut HashMap<String, ServiceSlot>,
    name: &str,
) -> Result<&'a mut ServiceSlot, GraphError> {
    let slot = services
        .entry(name.to_owned())
        .or_insert_with(|| ServiceSlot {
            types: (TypeId::of::<Req>(), TypeId::of::<Resp>()),
            type_names: service_type_names::<Req, Resp>(),
            servers: Vec::new(),
        });
    if slot.types != (TypeId::of::<Req>(), TypeId::of::<Resp>()) {
        return Err(GraphError::ServiceTypeMismatch {
            service: name.to_owned(),
            existing: slot.type_names.clone(),
            requested: service_type_names::<Req, Resp>(),
        });
    }
    Ok(slot)
}

impl fmt::Debug for Context {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let topics = self.inner.topics.lock().len();
        let services = self.inner.services.lock().len();
        f.debug_struct("Context")
            .field("topics", &topics)
            .field("services", &services)
            .finish()
    }
}
