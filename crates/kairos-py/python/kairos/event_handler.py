"""rclpy's QoS event callbacks (``rclpy.event_handler``): a publisher or subscription made
with ``event_callbacks=PublisherEventCallbacks(...)`` / ``SubscriptionEventCallbacks(...)``
gets its deadline, liveliness, incompatible-QoS and message-lost events as callbacks on its
node's executor, with rclpy's info objects.

kairos times deadlines and leases on the monotonic clock and counts every event whether or
not a callback listens (see the Rust ``kairos::graph::qos_event``). A callback's info says
the total and the change since its last call: events that come while one is pending are
told in one call, none is lost. Incompatible QoS follows ROS 2's rules and is reported,
but the pair still communicates, as on rmw_zenoh. Incompatible type is an endpoint of the
topic in another process whose type has another name or hash: the two never communicate.
A manual-liveliness publisher of another kairos process whose lease lapses counts as not
alive in ``liveliness`` until it asserts itself again.
"""

import enum

from kairos.qos import QoSPolicyKind


class _Info:
    _FIELDS = ()

    def __init__(self, *values, **named):
        for field, value in zip(self._FIELDS, values):
            setattr(self, field, value)
        for field in self._FIELDS[len(values):]:
            setattr(self, field, named.get(field, 0))

    def __eq__(self, other):
        return type(self) is type(other) and all(
            getattr(self, f) == getattr(other, f) for f in self._FIELDS)

    def __repr__(self):
        fields = ", ".join(f"{f}={getattr(self, f)!r}" for f in self._FIELDS)
        return f"{type(self).__name__}({fields})"


class QoSRequestedDeadlineMissedInfo(_Info):
    """A subscription received nothing within its deadline."""
    _FIELDS = ("total_count", "total_count_change")


class QoSOfferedDeadlineMissedInfo(_Info):
    """A publisher published nothing within its deadline."""
    _FIELDS = ("total_count", "total_count_change")


class QoSLivelinessChangedInfo(_Info):
    """The alive and not-alive publishers of a subscription's topic changed."""
    _FIELDS = ("alive_count", "not_alive_count", "alive_count_change",
               "not_alive_count_change")


class QoSLivelinessLostInfo(_Info):
    """A manual-liveliness publisher let its lease pass."""
    _FIELDS = ("total_count", "total_count_change")


class QoSRequestedIncompatibleQoSInfo(_Info):
    """Endpoints found whose QoS does not match; ``last_policy_kind`` names the policy."""
    _FIELDS = ("total_count", "total_count_change", "last_policy_kind")

    def __init__(self, *values, **named):
        super().__init__(*values, **named)
        if not isinstance(self.last_policy_kind, QoSPolicyKind):
            self.last_policy_kind = (QoSPolicyKind[self.last_policy_kind]
                                     if isinstance(self.last_policy_kind, str)
                                     else QoSPolicyKind.INVALID)


QoSOfferedIncompatibleQoSInfo = QoSRequestedIncompatibleQoSInfo


class QoSMessageLostInfo(_Info):
    """Messages of a publisher in another process never arrived."""
    _FIELDS = ("total_count", "total_count_change")


class QoSSubscriptionMatchedInfo(_Info):
    """The endpoints matched to a subscription or publisher (compatible QoS): how many
    came in all and how many now, with the changes since the last call."""
    _FIELDS = ("total_count", "total_count_change", "current_count", "current_count_change")


QoSPublisherMatchedInfo = QoSSubscriptionMatchedInfo


class IncompatibleTypeInfo(_Info):
    """Endpoints of the topic in another process with another type (name or hash)."""
    _FIELDS = ("total_count", "total_count_change")


class QoSPublisherEventType(enum.IntEnum):
    RCL_PUBLISHER_OFFERED_DEADLINE_MISSED = 0
    RCL_PUBLISHER_LIVELINESS_LOST = 1
    RCL_PUBLISHER_OFFERED_INCOMPATIBLE_QOS = 2
    RCL_PUBLISHER_INCOMPATIBLE_TYPE = 3
    RCL_PUBLISHER_MATCHED = 4


class QoSSubscriptionEventType(enum.IntEnum):
    RCL_SUBSCRIPTION_REQUESTED_DEADLINE_MISSED = 0
    RCL_SUBSCRIPTION_LIVELINESS_CHANGED = 1
    RCL_SUBSCRIPTION_REQUESTED_INCOMPATIBLE_QOS = 2
    RCL_SUBSCRIPTION_MESSAGE_LOST = 3
    RCL_SUBSCRIPTION_INCOMPATIBLE_TYPE = 4
    RCL_SUBSCRIPTION_MATCHED = 5


class UnsupportedEventTypeError(Exception):
    """An event type the middleware does not report (kairos reports every one)."""


class EventHandler:
    """One QoS event callback of a publisher or subscription, as rclpy lists them in its
    ``event_handlers``: the event and the callback. kairos runs the callback on the node's
    executor from its Rust side; the default handlers rclpy adds for incompatible QoS and
    incompatible type (``use_default_callbacks``) are kairos's own warnings, logged by
    the Rust side when the event first fires."""

    def __init__(self, *, callback_group=None, callback=None, event_type=None,
                 parent_impl=None):
        self.callback_group = callback_group
        self.callback = callback
        self.event_type = event_type
        self.parent_impl = parent_impl

    def __repr__(self):
        return f"<EventHandler {getattr(self.event_type, 'name', self.event_type)}>"


QoSEventHandler = EventHandler


def _handlers(callbacks, table, defaults, parent):
    """rclpy's ``event_handlers`` of an entity: one per callback given (``table``: event
    attribute and event type), and the default ones (``defaults``) for those not given
    unless ``use_default_callbacks`` is false."""
    use_defaults = callbacks is None or callbacks.use_default_callbacks
    handlers = []
    for attribute, event_type in table:
        callback = getattr(callbacks, attribute, None) if callbacks is not None else None
        if callback is None and not (use_defaults and attribute in defaults):
            continue
        handlers.append(EventHandler(callback=callback, event_type=event_type,
                                     parent_impl=parent))
    return handlers


def _wrap(callback, info):
    return lambda *values: callback(info(*values))


def _pairs(table):
    """``(name, callable)`` for the Rust entity, of each ``(name, callback, info class)``
    with a callback."""
    return [(name, _wrap(callback, info)) for name, callback, info in table
            if callback is not None]


class SubscriptionEventCallbacks:
    """The QoS event callbacks of a subscription, as rclpy's."""

    def __init__(self, *, deadline=None, incompatible_qos=None, liveliness=None,
                 message_lost=None, incompatible_type=None, matched=None,
                 use_default_callbacks=True):
        self.deadline = deadline
        self.incompatible_qos = incompatible_qos
        self.liveliness = liveliness
        self.message_lost = message_lost
        self.incompatible_type = incompatible_type
        self.matched = matched
        self.use_default_callbacks = use_default_callbacks

    def _events(self):
        return _pairs((
            ("deadline", self.deadline, QoSRequestedDeadlineMissedInfo),
            ("liveliness", self.liveliness, QoSLivelinessChangedInfo),
            ("incompatible_qos", self.incompatible_qos, QoSRequestedIncompatibleQoSInfo),
            ("message_lost", self.message_lost, QoSMessageLostInfo),
            ("incompatible_type", self.incompatible_type, IncompatibleTypeInfo),
            ("matched", self.matched, QoSSubscriptionMatchedInfo)))


def subscription_event_handlers(callbacks, subscription):
    """rclpy's ``Subscription.event_handlers`` for ``callbacks`` (or none given)."""
    kind = QoSSubscriptionEventType
    return _handlers(callbacks, (
        ("deadline", kind.RCL_SUBSCRIPTION_REQUESTED_DEADLINE_MISSED),
        ("incompatible_qos", kind.RCL_SUBSCRIPTION_REQUESTED_INCOMPATIBLE_QOS),
        ("liveliness", kind.RCL_SUBSCRIPTION_LIVELINESS_CHANGED),
        ("message_lost", kind.RCL_SUBSCRIPTION_MESSAGE_LOST),
        ("incompatible_type", kind.RCL_SUBSCRIPTION_INCOMPATIBLE_TYPE),
        ("matched", kind.RCL_SUBSCRIPTION_MATCHED)),
        ("incompatible_qos", "incompatible_type"), subscription)


def publisher_event_handlers(callbacks, publisher):
    """rclpy's ``Publisher.event_handlers`` for ``callbacks`` (or none given)."""
    kind = QoSPublisherEventType
    return _handlers(callbacks, (
        ("deadline", kind.RCL_PUBLISHER_OFFERED_DEADLINE_MISSED),
        ("liveliness", kind.RCL_PUBLISHER_LIVELINESS_LOST),
        ("incompatible_qos", kind.RCL_PUBLISHER_OFFERED_INCOMPATIBLE_QOS),
        ("incompatible_type", kind.RCL_PUBLISHER_INCOMPATIBLE_TYPE),
        ("matched", kind.RCL_PUBLISHER_MATCHED)),
        ("incompatible_qos", "incompatible_type"), publisher)


class PublisherEventCallbacks:
    """The QoS event callbacks of a publisher, as rclpy's."""

    def __init__(self, *, deadline=None, liveliness=None, incompatible_qos=None,
                 incompatible_type=None, matched=None, use_default_callbacks=True):
        self.deadline = deadline
        self.liveliness = liveliness
        self.incompatible_qos = incompatible_qos
        self.incompatible_type = incompatible_type
        self.matched = matched
        self.use_default_callbacks = use_default_callbacks

    def _events(self):
        return _pairs((
            ("deadline", self.deadline, QoSOfferedDeadlineMissedInfo),
            ("liveliness", self.liveliness, QoSLivelinessLostInfo),
            ("incompatible_qos", self.incompatible_qos, QoSOfferedIncompatibleQoSInfo),
            ("incompatible_type", self.incompatible_type, IncompatibleTypeInfo),
            ("matched", self.matched, QoSPublisherMatchedInfo)))
