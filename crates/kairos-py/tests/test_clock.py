"""A node's clock follows use_sim_time, as rclpy's parameter does."""

from kairos.node import Node
from kairos.parameter import Parameter


def test_use_sim_time_switches_the_node_clock(session):
    node = Node("sim_node", parameter_overrides=[Parameter("use_sim_time", value=True)])
    assert node.get_parameter("use_sim_time").value is True
    assert node.get_clock().clock_type == "sim"
    # Before the first /clock sample simulated time is zero.
    assert node.get_clock().now().nanoseconds == 0
    node.set_parameters([Parameter("use_sim_time", value=False)])
    assert node.get_clock().clock_type == "system"
    assert node.get_clock().now().nanoseconds > 1_600_000_000 * 10**9


def test_a_plain_node_runs_on_system_time(session):
    assert Node("wall_node").get_clock().clock_type == "system"
