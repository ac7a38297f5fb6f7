"""rclpy's ``TimeSource``: feeds ``/clock`` to the ROS clocks attached to it while its
node's ``use_sim_time`` is true.

A node's own clock needs no time source in kairos (the node follows ``use_sim_time`` and
``/clock`` itself); a ``TimeSource`` is for other ``ROSClock`` objects, as in rclpy: an
attached clock is told when ROS time turns on or off and, while it is on, reads the last
``/clock`` message (0 before the first) with its jump callbacks called.
"""

import weakref

from kairos.clock import ROSClock
from kairos.clock_type import ClockType
from kairos.parameter import Parameter
from kairos.time import Time

USE_SIM_TIME_NAME = "use_sim_time"
CLOCK_TOPIC = "/clock"


class TimeSource:
    def __init__(self, *, node=None):
        self._clock_sub = None
        self._node_weak_ref = None
        self._associated_clocks = set()
        self._last_time_set = Time(clock_type=ClockType.ROS_TIME)
        self._ros_time_is_active = False
        if node is not None:
            self.attach_node(node)

    @property
    def ros_time_is_active(self):
        return self._ros_time_is_active

    @ros_time_is_active.setter
    def ros_time_is_active(self, enabled):
        enabled = bool(enabled)
        if enabled == self._ros_time_is_active:
            return
        self._ros_time_is_active = enabled
        for clock in self._associated_clocks:
            clock._set_ros_time_is_active(enabled)
        node = self._get_node()
        if enabled and node is not None and self._clock_sub is None:
            from kairos.qos import QoSProfile
            from kairos.rosgraph_msgs.msg import Clock as ClockMsg

            self._clock_sub = node.create_subscription(
                ClockMsg, CLOCK_TOPIC, self.clock_callback, QoSProfile(depth=1))
        elif not enabled and self._clock_sub is not None:
            if node is not None:
                node.destroy_subscription(self._clock_sub)
            self._clock_sub = None

    def attach_node(self, node):
        from kairos.node import Node

        if not isinstance(node, Node):
            raise TypeError("Node must be of type rclpy.node.Node")
        if self._node_weak_ref is not None:
            self.detach_node()
        self._node_weak_ref = weakref.ref(node)
        if not node.has_parameter(USE_SIM_TIME_NAME):
            node.declare_parameter(USE_SIM_TIME_NAME, False)
        parameter = node.get_parameter(USE_SIM_TIME_NAME)
        if parameter.type_ == Parameter.Type.BOOL:
            self.ros_time_is_active = parameter.value
        node.add_post_set_parameters_callback(self._on_parameters_set)

    def detach_node(self):
        node = self._get_node()
        if self._clock_sub is not None and node is not None:
            node.destroy_subscription(self._clock_sub)
        self._clock_sub = None
        if node is not None and self._on_parameters_set in node._post_set_parameters_callbacks:
            node.remove_post_set_parameters_callback(self._on_parameters_set)
        self._node_weak_ref = None

    def destroy(self):
        self.detach_node()

    def attach_clock(self, clock):
        if not isinstance(clock, ROSClock):
            raise ValueError("Only clocks with type ROS_TIME can be attached.")
        clock.set_ros_time_override(self._last_time_set)
        clock._set_ros_time_is_active(self._ros_time_is_active)
        self._associated_clocks.add(clock)

    def clock_callback(self, msg):
        self._last_time_set = Time.from_msg(msg.clock)
        for clock in self._associated_clocks:
            clock.set_ros_time_override(self._last_time_set)

    def _on_parameters_set(self, parameters):
        for parameter in parameters:
            if parameter.name == USE_SIM_TIME_NAME and parameter.type_ == Parameter.Type.BOOL:
                self.ros_time_is_active = parameter.value

    def _get_node(self):
        return None if self._node_weak_ref is None else self._node_weak_ref()
