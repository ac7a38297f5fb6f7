"""rclpy's ``Node``, on a kairos node.

Entities are the kairos ones; the node keeps a reference to each (as rclpy does), so an
entity lives until ``destroy_*`` or ``destroy_node``.
"""

import contextvars
import inspect
import weakref

from kairos import _kairos
from kairos._graph import GraphMixin, NodeNameNonExistentError  # noqa: F401
from kairos._parameters import ParametersMixin
from kairos.callback_groups import _default_group
from kairos.logging import Logger
from kairos.event_handler import publisher_event_handlers, subscription_event_handlers
from kairos.exceptions import InvalidHandle
from kairos.names import validate_namespace, validate_node_name, validate_topic_name
from kairos.parameter import Parameter
from kairos import type_description_service
from kairos.qos import _qos_args, qos_profile_parameter_events
from kairos.qos_overriding_options import _apply as _overridden
from kairos.rcl_interfaces.msg import ParameterEvent


def _is_async(callback):
    target = getattr(callback, "func", callback)  # functools.partial
    return inspect.iscoroutinefunction(target) or inspect.iscoroutinefunction(
        getattr(target, "__call__", None))


class _DestroyedNode:
    """What a destroyed node's core becomes: its names stay readable, anything else
    raises :class:`InvalidHandle`."""

    def __init__(self, core):
        self.name, self.namespace = core.name, core.namespace
        self.fully_qualified_name = core.fully_qualified_name

    def __getattr__(self, attribute):
        raise InvalidHandle(f"node {self.fully_qualified_name} was destroyed")


class _Handle:
    """What ``Node.handle`` gives: the node's core, as a context manager."""

    def __init__(self, core):
        self.core = core

    def __enter__(self):
        return self.core

    def __exit__(self, *exc):
        return False


#: What a component container gives the next node made in this thread (see
#: :mod:`kairos.components`): ``{"ros_args": [...], "parameters": [Parameter],
#: "use_global_arguments": bool, "taken": False, "node": None}``; the first node made
#: takes it (``"taken"``) and, once it exists, records itself in ``"node"``.
_component_options = contextvars.ContextVar("kairos_component_options", default=None)


class Node(GraphMixin, ParametersMixin):
    def __init__(self, node_name, *, context=None, cli_args=None, namespace=None,
                 use_global_arguments=True, enable_rosout=True, start_parameter_services=True,
                 parameter_overrides=None, allow_undeclared_parameters=False,
                 automatically_declare_parameters_from_overrides=False,
                 enable_logger_service=False, sim_stall_policy=None, sim_stall_timeout_sec=1.0):
        """``sim_stall_policy`` (kairos only): what waits on simulation time do when
        ``/clock`` falls silent for ``sim_stall_timeout_sec``: ``"wait"`` (ROS's
        behaviour), ``"fallback_to_steady"`` (time goes on at rate 1) or ``"fail"`` (the
        wait raises :class:`kairos.ClockStalled`); None: the process default (wait)."""
        from kairos.exceptions import NotInitializedException
        from kairos.utilities import get_default_context

        self._context = get_default_context() if context is None else context
        if not self._context.ok():
            raise NotInitializedException(f"cannot create node '{node_name}'")
        component = _component_options.get()
        if component is not None and component["taken"]:
            component = None
        if component is not None:
            # A container's request names this node, as NodeOptions name an rclcpp
            # component: its arguments come after the code's, so they win.
            component["taken"] = True
            cli_args = [*(cli_args or []), "--ros-args", *component["ros_args"]]
            parameter_overrides = [*(parameter_overrides or []), *component["parameters"]]
            use_global_arguments = component["use_global_arguments"]
        if cli_args is not None:
            from kairos.context import _check_ros_args

            # rclpy's exception types (RCLInvalidROSArgsError, UnknownROSArgsError).
            _check_ros_args([str(a) for a in cli_args])
        try:
            self._core = _kairos.NodeCore(
                node_name, namespace or "/", False, sim_stall_policy, sim_stall_timeout_sec,
                None if cli_args is None else [str(a) for a in cli_args],
                getattr(self._context, "_args", None), use_global_arguments, enable_rosout)
        except ValueError:
            # rclpy's exception types for a bad name or namespace; else kairos's message.
            validate_node_name(node_name)
            full = namespace or "/"
            validate_namespace(full if full.startswith("/") else "/" + full)
            raise
        if component is not None:
            # Recorded once the node exists: a request whose arguments it refuses made
            # no node for the container to destroy.
            component["node"] = weakref.ref(self)
        self._executor = None
        self._logger = Logger(self._core, self._core.fully_qualified_name.lstrip("/").replace("/", "."))
        self.default_callback_group = _default_group(self)
        self.publishers, self.subscriptions, self.timers = [], [], []
        self.services, self.clients, self.guards = [], [], []
        # Action servers and clients, destroyed with the node as rclpy destroys its
        # waitables.
        self._action_servers = []
        self._action_clients = []
        # The program's ROS arguments (-p, --params-file) first, then the overrides the
        # code gives, as rclpy orders them.
        overrides = {
            name: Parameter(name, value=[bytes([b]) for b in value]
                            if isinstance(value, bytes) else value)
            for name, value in self._core.ros_parameter_overrides()}
        overrides.update((p.name, p) for p in (parameter_overrides or []))
        self._parameter_event_publisher = self.create_publisher(
            ParameterEvent, "/parameter_events", qos_profile_parameter_events)
        self._init_parameters(overrides, allow_undeclared_parameters,
                              automatically_declare_parameters_from_overrides)
        if start_parameter_services:
            from kairos.parameter_service import ParameterService

            self._parameter_service = ParameterService(self)
        if enable_logger_service:
            from kairos.logging_service import LoggingService

            self._logger_service = LoggingService(self)
        type_description_service.declare_parameter(self)
        self._context.track_node(self)

    @property
    def context(self):
        return self._context

    @property
    def handle(self):
        """rclpy's handle of the node: usable as ``with node.handle:``; raises
        :class:`InvalidHandle` once the node is destroyed. It cannot be replaced."""
        if isinstance(self._core, _DestroyedNode):
            raise InvalidHandle(f"node {self._core.fully_qualified_name} was destroyed")
        return _Handle(self._core)

    # -- names, logger, clock -------------------------------------------------------

    def get_name(self):
        return self._core.name

    def get_namespace(self):
        return self._core.namespace

    def get_fully_qualified_name(self):
        return self._core.fully_qualified_name

    def get_logger(self):
        return self._logger

    def get_clock(self):
        """The node's clock, a ``ROSClock``: system time, or simulation time (``/clock``)
        under ``use_sim_time``."""
        from kairos.clock import ROSClock

        if getattr(self, "_clock", None) is None:
            self._clock = ROSClock(_core=self._core.clock(), _node=self)
        return self._clock

    @property
    def executor(self):
        """The executor the node was added to, or None."""
        return self._executor

    @executor.setter
    def executor(self, new_executor):
        """Moves the node to ``new_executor`` (None: out of any), as rclpy."""
        current = self._executor
        if current is new_executor:
            return
        if current is not None:
            current.remove_node(self)
        if new_executor is not None:
            new_executor.add_node(self)
        self._executor = new_executor

    def resolve_topic_name(self, topic, *, only_expand=False):
        """``topic`` expanded against this node (``~``, ``{node}``, namespace), then
        remapped by its ROS arguments unless ``only_expand``."""
        return self._core.resolve_name("topic", topic, only_expand)

    def resolve_service_name(self, service, *, only_expand=False):
        """As :meth:`resolve_topic_name`, for a service name."""
        return self._core.resolve_name("service", service, only_expand)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.destroy_node()

    def _group(self, callback_group):
        return (callback_group or self.default_callback_group)._handle(self)

    def _in_group(self, entity, callback_group):
        (callback_group or self.default_callback_group).add_entity(entity)

    # -- entities -------------------------------------------------------------------

    def create_publisher(self, msg_type, topic, qos_profile, *, callback_group=None,
                         event_callbacks=None, qos_overriding_options=None,
                         publisher_class=None):
        validate_topic_name(topic)
        qos_profile = _overridden("publisher", self, topic, qos_profile, qos_overriding_options)
        events = event_callbacks._events() if event_callbacks is not None else []
        publisher = self._core.create_publisher(msg_type, topic,
                                                group=self._group(callback_group),
                                                events=events,
                                                **_qos_args(qos_profile))
        publisher.event_handlers = publisher_event_handlers(event_callbacks, publisher)
        self.publishers.append(publisher)
        self._in_group(publisher, callback_group)
        return publisher

    def create_subscription(self, msg_type, topic, callback, qos_profile, *,
                            callback_group=None, event_callbacks=None,
                            qos_overriding_options=None, raw=False,
                            content_filter_options=None):
        """As rclpy's; ``raw=True`` hands the callback the message's CDR bytes (as
        ``serialize_message`` gives them) instead of the message."""
        validate_topic_name(topic)
        if content_filter_options is not None:
            raise NotImplementedError(
                "content-filtered subscriptions are not supported by kairos yet: filter in "
                "the callback")
        if raw:
            from kairos.serialization import serialize_message
            user_callback = callback
            if _is_async(user_callback):
                async def callback(message):
                    return await user_callback(serialize_message(message))
            else:
                def callback(message):
                    return user_callback(serialize_message(message))
        qos_profile = _overridden("subscription", self, topic, qos_profile,
                                  qos_overriding_options)
        events = event_callbacks._events() if event_callbacks is not None else []
        subscription = self._core.create_subscription(
            msg_type, topic, callback, group=self._group(callback_group),
            is_async=_is_async(callback), events=events, **_qos_args(qos_profile))
        subscription.event_handlers = subscription_event_handlers(event_callbacks, subscription)
        self.subscriptions.append(subscription)
        self._in_group(subscription, callback_group)
        return subscription

    def create_timer(self, timer_period_sec, callback, callback_group=None, clock=None,
                     autostart=True):
        """A timer; a callback with a parameter annotated ``TimerInfo`` gets when its tick
        was due and when it ran."""
        from kairos.timer import timer_info_argument, with_timer_info

        py_clock = self.get_clock()
        if clock is not None and not isinstance(clock, _kairos.Clock):
            # A kairos.clock.Clock: the timer runs on the Rust clock it reads now.
            py_clock, clock = clock, clock._current()
        is_async = _is_async(callback)
        info_name = timer_info_argument(callback)
        holder = [None]
        run = callback if info_name is None else with_timer_info(
            callback, info_name, holder, py_clock, is_async)
        timer = self._core.create_timer(timer_period_sec, run, self._group(callback_group),
                                        is_async, clock)
        holder[0] = weakref.ref(timer)  # no cycle through the timer's own callback
        timer.clock, timer.callback = py_clock, callback
        if not autostart:
            timer.cancel()
        self.timers.append(timer)
        self._in_group(timer, callback_group)
        return timer

    def create_service(self, srv_type, srv_name, callback, *, qos_profile=None,
                       callback_group=None):
        """``callback(request, response)`` fills and returns ``response``; an ``async def``
        callback may await futures and sleeps first (its group stays held meanwhile)."""
        validate_topic_name(srv_name, is_service=True)
        service = self._core.create_service(srv_type, srv_name, callback,
                                            self._group(callback_group), _is_async(callback))
        self.services.append(service)
        self._in_group(service, callback_group)
        return service

    def create_client(self, srv_type, srv_name, *, qos_profile=None, callback_group=None):
        """A client; its group matters only for ``add_done_callback`` callbacks: a
        response wakes its caller directly, so what decides whether a call from a callback
        can complete is the service's group (see ``kairos.demo``)."""
        validate_topic_name(srv_name, is_service=True)
        client = self._core.create_client(srv_type, srv_name, self._group(callback_group))
        self.clients.append(client)
        self._in_group(client, callback_group)
        return client

    def add_waitable(self, waitable):
        """rclpy's custom wait-set entities do not run on kairos's event-driven executors:
        a ``NotImplementedError`` that says what to use instead."""
        raise NotImplementedError(
            f"kairos cannot run the Waitable {type(waitable).__name__}: its executors have no "
            "wait set; wake work with a guard condition (create_guard_condition), a timer or "
            "a task (executor.create_task) instead")

    def remove_waitable(self, waitable):
        raise NotImplementedError("kairos nodes hold no Waitables (see add_waitable)")

    def create_guard_condition(self, callback, callback_group=None, *, _coroutines=None):
        """A guard condition: each ``trigger()`` runs ``callback`` once on the executor, in
        ``callback_group``. (``_coroutines``: kairos's own use, a callback that may return a
        coroutine for the executor to drive.)"""
        is_async = _is_async(callback) if _coroutines is None else _coroutines
        guard = self._core.create_guard_condition(callback, self._group(callback_group),
                                                  is_async)
        self.guards.append(guard)
        self._in_group(guard, callback_group)
        return guard

    def create_rate(self, frequency, clock=None):
        from kairos.rate import Rate

        return Rate(frequency, clock or self.get_clock(), self)

    def destroy_rate(self, rate):
        """Destroys ``rate`` (a sleep in progress returns); True if the node had it."""
        had = rate._timer is not None and self.destroy_timer(rate._timer)
        rate.destroy()
        return bool(had)

    def _destroy(self, entities, entity):
        if entity in entities:
            entities.remove(entity)
            if hasattr(entity, "destroy"):
                entity.destroy()
            return True
        return False

    def destroy_publisher(self, publisher):
        return self._destroy(self.publishers, publisher)

    def destroy_subscription(self, subscription):
        return self._destroy(self.subscriptions, subscription)

    def destroy_timer(self, timer):
        timer.cancel()
        return self._destroy(self.timers, timer)

    def destroy_service(self, service):
        return self._destroy(self.services, service)

    def destroy_client(self, client):
        return self._destroy(self.clients, client)

    def destroy_guard_condition(self, guard):
        return self._destroy(self.guards, guard)

    def destroy_node(self):
        self._context.untrack_node(self)
        if isinstance(self._core, _DestroyedNode):
            return
        if self._executor is not None:
            self._executor.remove_node(self)
        for timer in self.timers:
            timer.cancel()
        for action in list(self._action_servers) + list(self._action_clients):
            action.destroy()
        for entity in self.publishers + self.subscriptions + self.services + self.guards:
            entity.destroy()
        self._parameter_event_publisher = None
        type_description_service.stop(self)
        self.publishers, self.subscriptions, self.timers = [], [], []
        self.services, self.clients, self.guards = [], [], []
        # The node leaves the graph once nothing refers to its core; loggers taken from
        # it go on logging under its name.
        core, self._core = self._core, _DestroyedNode(self._core)
        self._logger = Logger(None, self._logger.name)
        del core

    def __repr__(self):
        return f"<kairos.node.Node {self.get_fully_qualified_name()}>"
