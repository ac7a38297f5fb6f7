"""rclpy's lifecycle (managed) nodes on kairos: ``LifecycleNode`` (also ``Node``),
``LifecyclePublisher`` (also ``Publisher``), ``LifecycleState`` (also ``State``) and
``TransitionCallbackReturn``.

The state machine, the ``lifecycle_msgs`` services (``~/change_state``, ``~/get_state``,
...) and ``~/transition_event`` are kairos-lifecycle's, the ones Rust managed nodes use:
``ros2 lifecycle`` and ``kairos lifecycle`` drive a Python node as they drive any other.

Where kairos differs from rclpy: a lifecycle publisher follows its node's state whether
or not an overridden ``on_activate`` calls ``super()``: it publishes while the node is
activating or active. A publish at another time is not sent, but counted
(``dropped_while_inactive``) and reported once per inactive period.
"""

import enum
import weakref
from typing import NamedTuple

from kairos import _kairos
from kairos.node import Node as _Node


class TransitionCallbackReturn(enum.IntEnum):
    """What a transition callback returns (rclpy's values)."""
    SUCCESS = 97
    FAILURE = 98
    ERROR = 99


class LifecycleState(NamedTuple):
    """A state of a managed node: its ``lifecycle_msgs/msg/State`` id and label."""
    state_id: int
    label: str


class LifecyclePublisher:
    """A publisher that publishes only while its node is active."""

    def __init__(self, publisher, activation):
        self._publisher = publisher
        self._activation = activation

    @property
    def is_activated(self):
        return self._activation.is_active

    @property
    def dropped_while_inactive(self):
        return self._activation.refused

    @property
    def topic_name(self):
        return self._publisher.topic_name

    def publish(self, msg):
        """Publishes ``msg`` while the node is active; otherwise counts it, sends nothing."""
        if self._activation.is_active:
            return self._publisher.publish(msg)
        self._activation.refuse()
        return 0

    def get_subscription_count(self):
        return self._publisher.get_subscription_count()


_SUCCESS = TransitionCallbackReturn.SUCCESS


class _StateMachine:
    """What rclpy's ``LifecycleNode._state_machine`` tells of the machine: its state now
    as ``(id, label)``, and whether each service of the communication interface exists."""

    def __init__(self, node, interface):
        self._node = weakref.ref(node)
        self.service_change_state = interface
        self.service_get_state = interface
        self.service_get_available_states = interface
        self.service_get_available_transitions = interface
        self.service_get_transition_graph = interface

    @property
    def current_state(self):
        return tuple(self._node().current_state)


class LifecycleNode(_Node):
    """A managed node. Override ``on_configure``, ``on_activate``, ``on_deactivate``,
    ``on_cleanup``, ``on_shutdown`` and ``on_error``; each gets the previous
    :class:`LifecycleState` and returns a :class:`TransitionCallbackReturn` (anything
    else, or an exception, is an error: the node goes to error processing)."""

    def __init__(self, node_name, *, enable_communication_interface=True, **kwargs):
        if not isinstance(enable_communication_interface, bool):
            raise TypeError("enable_communication_interface must be a bool, not "
                            f"{type(enable_communication_interface).__name__}")
        super().__init__(node_name, **kwargs)
        # Without the interface: no lifecycle_msgs services, no ~/transition_event; only
        # the program's own trigger_*() calls move the node.
        self._lifecycle = _kairos.LifecycleCore(self._core, weakref.ref(self),
                                                enable_communication_interface)
        self._state_machine = _StateMachine(self, enable_communication_interface)

    # -- the callbacks (rclpy's defaults: success) ---------------------------------------

    def on_configure(self, state):
        return _SUCCESS

    def on_cleanup(self, state):
        return _SUCCESS

    def on_shutdown(self, state):
        return _SUCCESS

    def on_activate(self, state):
        return _SUCCESS

    def on_deactivate(self, state):
        return _SUCCESS

    def on_error(self, state):
        return _SUCCESS

    def _kairos_transition(self, method, state_id, label):
        returned = getattr(self, method)(LifecycleState(state_id, label))
        if not isinstance(returned, TransitionCallbackReturn):
            self.get_logger().error(
                f"{method}() returned {returned!r}, not a TransitionCallbackReturn: that is an "
                "error, the node goes to error processing")
            return TransitionCallbackReturn.ERROR
        return int(returned)

    # -- transitions ------------------------------------------------------------------

    @property
    def current_state(self):
        """The node's :class:`LifecycleState` now (kairos only; rclpy keeps it private)."""
        return LifecycleState(*self._lifecycle.state())

    def _trigger(self, transition):
        return TransitionCallbackReturn(self._lifecycle.trigger(transition))

    def trigger_configure(self):
        return self._trigger("configure")

    def trigger_cleanup(self):
        return self._trigger("cleanup")

    def trigger_activate(self):
        return self._trigger("activate")

    def trigger_deactivate(self):
        return self._trigger("deactivate")

    def trigger_shutdown(self):
        return self._trigger("shutdown")

    # -- managed publishers -------------------------------------------------------------

    def create_lifecycle_publisher(self, msg_type, topic, qos_profile, **kwargs):
        publisher = self.create_publisher(msg_type, topic, qos_profile, **kwargs)
        return LifecyclePublisher(publisher, self._lifecycle.activation(publisher.topic_name))

    def destroy_lifecycle_publisher(self, publisher):
        return self.destroy_publisher(publisher)

    def destroy_node(self):
        # The machine's services and its node go with it.
        self._lifecycle = None
        super().destroy_node()

    def destroy_publisher(self, publisher):
        if isinstance(publisher, LifecyclePublisher):
            publisher = publisher._publisher
        return super().destroy_publisher(publisher)


Node = LifecycleNode
Publisher = LifecyclePublisher
State = LifecycleState

__all__ = [
    "LifecycleNode", "LifecyclePublisher", "LifecycleState", "Node", "Publisher", "State",
    "TransitionCallbackReturn",
]
