"""rclpy's ``Node``, on a kairos node.

Entities are the kairos ones; the node keeps a reference to each (as rclpy does), so an
entity lives until ``destroy_*`` or ``destroy_node``.
"""

import inspect

from kairos import _kairos
from kairos._graph import GraphMixin, NodeNameNonExistentError  # noqa: F401
from kairos.callback_groups import _default_group
from kairos.logging import Logger
from kairos.exceptions import InvalidHandle
from kairos.names import validate_topic_name
from kairos.parameter import Parameter
from kairos.qos import _depth_and_durability


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


class Node(GraphMixin):
    def __init__(self, node_name, *, context=None, cli_args=None, namespace=None,
                 use_global_arguments=True, enable_rosout=True, start_parameter_services=True,
                 parameter_overrides=None, allow_undeclared_parameters=False,
                 automatically_declare_parameters_from_overrides=False,
                 sim_stall_policy=None, sim_stall_timeout_sec=1.0):
        """``sim_stall_policy`` (kairos only): what waits on simulation time do when
        ``/clock`` falls silent for ``sim_stall_timeout_sec``: ``"wait"`` (ROS's
        behaviour), ``"fallback_to_steady"`` (time goes on at rate 1) or ``"fail"`` (the
        wait raises :class:`kairos.ClockStalled`); None: the process default (wait)."""
        from kairos.exceptions import NotInitializedException
        from kairos.utilities import get_default_context

        self._context = get_default_context() if context is None else context
        if not self._context.ok():
            raise NotInitializedException(f"cannot create node '{node_name}'")
        self._core = _kairos.NodeCore(node_name, namespace or "/", False,
                                      sim_stall_policy, sim_stall_timeout_sec)
        # The program's ROS arguments (-p, --params-file) first, then the overrides the
        # code gives, as rclpy orders them.
        self._parameters = {}
        if use_global_arguments:
            self._parameters.update(
                (name, Parameter(name, value=value))
                for name, value in self._core.ros_parameter_overrides())
        self._parameters.update((p.name, p) for p in (parameter_overrides or []))
        use_sim_time = bool(getattr(self._parameters.get("use_sim_time"), "value", False))
        self._parameters["use_sim_time"] = Parameter("use_sim_time", value=use_sim_time)
        if use_sim_time:
            self._core.set_use_sim_time(True)
        self._executor = None
        self._logger = Logger(self._core, self._core.fully_qualified_name.lstrip("/").replace("/", "."))
        self.default_callback_group = _default_group(self)
        self.publishers, self.subscriptions, self.timers = [], [], []
        self.services, self.clients, self.guards = [], [], []
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
        return self._executor

    def _group(self, callback_group):
        return (callback_group or self.default_callback_group)._handle(self)

    # -- entities -------------------------------------------------------------------

    def create_publisher(self, msg_type, topic, qos_profile, *, callback_group=None, **_):
        validate_topic_name(topic)
        depth, transient_local = _depth_and_durability(qos_profile)
        publisher = self._core.create_publisher(msg_type, topic, depth, transient_local,
                                                self._group(callback_group))
        self.publishers.append(publisher)
        return publisher

    def create_subscription(self, msg_type, topic, callback, qos_profile, *,
                            callback_group=None, **_):
        validate_topic_name(topic)
        depth, transient_local = _depth_and_durability(qos_profile)
        subscription = self._core.create_subscription(
            msg_type, topic, callback, depth, transient_local, self._group(callback_group),
            _is_async(callback))
        self.subscriptions.append(subscription)
        return subscription

    def create_timer(self, timer_period_sec, callback, callback_group=None, clock=None,
                     autostart=True):
        if clock is not None and not isinstance(clock, _kairos.Clock):
            clock = clock._current()  # a kairos.clock.Clock: the Rust clock it reads now
        timer = self._core.create_timer(timer_period_sec, callback,
                                        self._group(callback_group), _is_async(callback), clock)
        if not autostart:
            timer.cancel()
        self.timers.append(timer)
        return timer

    def create_service(self, srv_type, srv_name, callback, *, callback_group=None, **_):
        validate_topic_name(srv_name, is_service=True)
        """``callback(request, response)`` fills and returns ``response``; an ``async def``
        callback may await futures and sleeps first (its group stays held meanwhile)."""
        service = self._core.create_service(srv_type, srv_name, callback,
                                            self._group(callback_group), _is_async(callback))
        self.services.append(service)
        return service

    def create_client(self, srv_type, srv_name, *, callback_group=None, **_):
        validate_topic_name(srv_name, is_service=True)
        """A client; its group matters only for ``add_done_callback`` callbacks: a
        response wakes its caller directly, so what decides whether a call from a callback
        can complete is the service's group (see ``kairos.demo``)."""
        client = self._core.create_client(srv_type, srv_name, self._group(callback_group))
        self.clients.append(client)
        return client

    def create_guard_condition(self, callback, callback_group=None, *, _coroutines=None):
        """A guard condition: each ``trigger()`` runs ``callback`` once on the executor, in
        ``callback_group``. (``_coroutines``: kairos's own use, a callback that may return a
        coroutine for the executor to drive.)"""
        is_async = _is_async(callback) if _coroutines is None else _coroutines
        guard = self._core.create_guard_condition(callback, self._group(callback_group),
                                                  is_async)
        self.guards.append(guard)
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
        for entity in self.subscriptions + self.services + self.guards:
            entity.destroy()
        self.publishers, self.subscriptions, self.timers = [], [], []
        self.services, self.clients, self.guards = [], [], []
        # The node leaves the graph once nothing refers to its core; loggers taken from
        # it go on logging under its name.
        core, self._core = self._core, _DestroyedNode(self._core)
        self._logger = Logger(None, self._logger.name)
        del core

    # -- parameters -----------------------------------------------------------------

    def declare_parameter(self, name, value=None, descriptor=None, ignore_override=False):
        if name not in self._parameters or ignore_override:
            self._parameters[name] = Parameter(name, value=value)
        return self._parameters[name]

    def declare_parameters(self, namespace, parameters, ignore_override=False):
        prefix = f"{namespace}." if namespace else ""
        return [self.declare_parameter(prefix + p[0], p[1] if len(p) > 1 else None)
                for p in parameters]

    def has_parameter(self, name):
        return name in self._parameters

    def get_parameter(self, name):
        return self._parameters[name]

    def set_parameters(self, parameters):
        """Sets parameters; ``use_sim_time`` switches the node's clock (timers restart
        their period, sleeps in progress end)."""
        for parameter in parameters:
            if parameter.name == "use_sim_time":
                self._core.set_use_sim_time(bool(parameter.value))
            self._parameters[parameter.name] = parameter
        return [True for _ in parameters]

    def __repr__(self):
        return f"<kairos.node.Node {self.get_fully_qualified_name()}>"
