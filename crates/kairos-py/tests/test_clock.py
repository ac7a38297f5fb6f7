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


def test_a_rate_is_never_early(session):
    import kairos

    clock = kairos.Clock("steady")
    rate = Node("rated").create_rate(200, clock)  # 5 ms
    start = clock.now().nanoseconds
    for k in range(1, 11):
        assert rate.sleep() is True
        # Deadlines are start' + k * period with start' >= start: k periods at least.
        assert clock.now().nanoseconds - start >= k * 5_000_000
