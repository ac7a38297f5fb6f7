"""rcl's QoS event handles and wait sets, as rclpy's C binding exposes them
(``_rclpy.EventHandle``, ``_rclpy.WaitSet``), for code that polls events itself instead of
registering callbacks.

An event handle reads its publisher's or subscription's event status from kairos (the
same counts the callbacks report, see ``kairos::graph::qos_event``) and remembers what it
last took: ``take_event()`` gives rclpy's info object with the change since then, and the
handle is ready while there is a change to take. A wait set's ``wait`` returns once one
of its event handles is ready, its time is up, or the context shut down; it looks every
millisecond or so, as events here are counted without a wake-up of their own.
"""

import enum
import time

from kairos import _kairos
from kairos.event_handler import (
    IncompatibleTypeInfo, QoSLivelinessChangedInfo, QoSLivelinessLostInfo, QoSMessageLostInfo,
    QoSOfferedDeadlineMissedInfo, QoSOfferedIncompatibleQoSInfo, QoSPublisherEventType,
    QoSPublisherMatchedInfo, QoSRequestedDeadlineMissedInfo, QoSRequestedIncompatibleQoSInfo,
    QoSSubscriptionEventType, QoSSubscriptionMatchedInfo)
from kairos.exceptions import InvalidHandle

# Each event type: kairos's name of the event and rclpy's info class.
_PUBLISHER = {
    QoSPublisherEventType.RCL_PUBLISHER_OFFERED_DEADLINE_MISSED:
        ("deadline", QoSOfferedDeadlineMissedInfo),
    QoSPublisherEventType.RCL_PUBLISHER_LIVELINESS_LOST:
        ("liveliness_lost", QoSLivelinessLostInfo),
    QoSPublisherEventType.RCL_PUBLISHER_OFFERED_INCOMPATIBLE_QOS:
        ("incompatible_qos", QoSOfferedIncompatibleQoSInfo),
    QoSPublisherEventType.RCL_PUBLISHER_INCOMPATIBLE_TYPE:
        ("incompatible_type", IncompatibleTypeInfo),
    QoSPublisherEventType.RCL_PUBLISHER_MATCHED: ("matched", QoSPublisherMatchedInfo),
}
_SUBSCRIPTION = {
    QoSSubscriptionEventType.RCL_SUBSCRIPTION_REQUESTED_DEADLINE_MISSED:
        ("deadline", QoSRequestedDeadlineMissedInfo),
    QoSSubscriptionEventType.RCL_SUBSCRIPTION_LIVELINESS_CHANGED:
        ("liveliness_changed", QoSLivelinessChangedInfo),
    QoSSubscriptionEventType.RCL_SUBSCRIPTION_REQUESTED_INCOMPATIBLE_QOS:
        ("incompatible_qos", QoSRequestedIncompatibleQoSInfo),
    QoSSubscriptionEventType.RCL_SUBSCRIPTION_MESSAGE_LOST: ("message_lost", QoSMessageLostInfo),
    QoSSubscriptionEventType.RCL_SUBSCRIPTION_INCOMPATIBLE_TYPE:
        ("incompatible_type", IncompatibleTypeInfo),
    QoSSubscriptionEventType.RCL_SUBSCRIPTION_MATCHED: ("matched", QoSSubscriptionMatchedInfo),
}


class EventHandle:
    """One QoS event of a publisher or subscription (``parent_handle`` is its ``handle``)."""

    def __init__(self, parent_handle, event_type):
        kind = parent_handle.qos_event_kind()
        table, types = {"publisher": (_PUBLISHER, QoSPublisherEventType),
                        "subscription": (_SUBSCRIPTION, QoSSubscriptionEventType)
                        }.get(kind, ({}, None))
        # The two enums share their numbers: a member of the other one is refused.
        if types is None or (isinstance(event_type, enum.Enum)
                             and not isinstance(event_type, types)):
            raise TypeError(f"{event_type!r} is not an event of a {kind or 'this entity'}")
        self._parent = parent_handle
        self._event, self._info = table[types(int(event_type))]
        self._taken = self._zero()
        self._destroyed = False

    def _zero(self):
        return {"liveliness_changed": (0, 0), "matched": (0, 0),
                "incompatible_qos": (0, "INVALID")}.get(self._event, (0,))

    def _status(self):
        """The event's status now: (total,), (total, policy), (alive, not alive) or
        (total, current)."""
        if self._destroyed:
            raise InvalidHandle("the event handle was destroyed")
        first, second, policy = self._parent.qos_event_status(self._event)
        if self._event in ("liveliness_changed", "matched"):
            return (first, second)
        if self._event == "incompatible_qos":
            return (first, policy)
        return (first,)

    def _counts(self, status):
        return status[:1] if self._event == "incompatible_qos" else status

    def is_ready(self):
        return self._counts(self._status()) != self._counts(self._taken)

    def take_event(self):
        """rclpy's info object of the event: the totals, and the changes since the last
        take."""
        now = self._status()
        before, self._taken = self._taken, now
        if self._event == "liveliness_changed":
            return self._info(now[0], now[1], now[0] - before[0], now[1] - before[1])
        if self._event == "matched":
            return self._info(now[0], now[0] - before[0], now[1], now[1] - before[1])
        if self._event == "incompatible_qos":
            return self._info(now[0], now[0] - before[0], now[1])
        return self._info(now[0], now[0] - before[0])

    def destroy_when_not_in_use(self):
        self._destroyed = True

    def __enter__(self):
        return self

    def __exit__(self, *_exc):
        return False


class WaitSet:
    """rcl's wait set, for event handles: ``add_event`` returns an index that
    ``is_ready('event', index)`` asks about after ``wait(timeout_ns)``."""

    def __init__(self, subscriptions=0, guards=0, timers=0, clients=0, services=0, events=0,
                 context=None):
        self._context = context
        self._capacity = events
        self._events = []
        self._ready = []

    def add_event(self, handle):
        if len(self._events) >= self._capacity:
            raise IndexError(f"the wait set holds {self._capacity} events")
        self._events.append(handle)
        return len(self._events) - 1

    def clear_entities(self):
        self._events, self._ready = [], []

    def wait(self, timeout_ns):
        """Returns once an event handle is ready, after ``timeout_ns`` (negative: no
        limit), or once the context shuts down."""
        deadline = None if timeout_ns < 0 else time.monotonic() + timeout_ns / 1e9
        while True:
            self._ready = [h.is_ready() for h in self._events]
            if any(self._ready) or not _kairos.ok():
                return
            left = None if deadline is None else deadline - time.monotonic()
            if left is not None and left <= 0:
                return
            time.sleep(0.001 if left is None else min(0.001, left))

    def is_ready(self, entity_type, index):
        if entity_type != "event":
            return False
        return index < len(self._ready) and self._ready[index]

    def __enter__(self):
        return self

    def __exit__(self, *_exc):
        return False
