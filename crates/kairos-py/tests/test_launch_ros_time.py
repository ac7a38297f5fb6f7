"""launch_ros' actions on ROS time: ``ROSTimer`` waits on the launch's own ROS node's
clock, simulated once ``SetUseSimTime(True)`` is given, never early on it; the launch's
stop ends a timer whose clock never gets there. ROS 2's own tests of them are in its
suite (``test_ros_timer.py``, CONFORMANCE.md)."""

import threading

import pytest

from conftest import kairos_bin
from kairos import run


@pytest.fixture
def launch(monkeypatch):
    monkeypatch.setenv("KAIROS_BIN", kairos_bin())
    run.install()
    import launch
    return launch


def test_a_ros_timer_on_simulated_time_fires_when_clock_gets_there(launch, session):
    import rclpy
    from launch.actions import OpaqueFunction, Shutdown
    from launch_ros.actions import ROSTimer, SetUseSimTime
    from launch_ros.ros_adapters import get_ros_node
    from rosgraph_msgs.msg import Clock as ClockMsg

    simulator = rclpy.create_node("simulator")
    clock_publisher = simulator.create_publisher(ClockMsg, "/clock", 10)
    read = {}

    def note(key):
        def at(context):
            read[key] = get_ros_node(context).get_clock().now().nanoseconds
        return OpaqueFunction(function=at)

    fired = threading.Event()
    ld = launch.LaunchDescription([
        SetUseSimTime(True),
        note("started"),
        ROSTimer(period=5.0, actions=[note("fired"),
                                      OpaqueFunction(function=lambda c: fired.set()),
                                      Shutdown(reason="the timer fired")]),
    ])
    service = launch.LaunchService()
    service.include_launch_description(ld)

    def simulate():
        # One simulated second per step, until the timer has fired (bounded: 2000 steps).
        for second in range(1, 2001):
            msg = ClockMsg()
            msg.clock.sec = 1000 + second
            clock_publisher.publish(msg)
            if fired.wait(0.02):
                return
        service.shutdown()

    simulation = threading.Thread(target=simulate)
    simulation.start()
    assert service.run() == 0
    simulation.join(60)
    assert fired.is_set(), f"the ROS timer never fired: {read}"
    assert read["fired"] - read["started"] >= 5 * 10**9, read


def test_the_launch_s_stop_ends_a_ros_timer_its_clock_never_reaches(launch):
    from launch.actions import OpaqueFunction, Shutdown, TimerAction
    from launch_ros.actions import ROSTimer, SetUseSimTime

    ran = []
    ros_timer = ROSTimer(period=10.0**6, actions=[
        OpaqueFunction(function=lambda context: ran.append("ros timer"))])
    ld = launch.LaunchDescription([
        SetUseSimTime(True),  # and no /clock at all
        ros_timer,
        TimerAction(period=0.1, actions=[Shutdown(reason="enough")]),
    ])
    service = launch.LaunchService()
    service.include_launch_description(ld)
    assert service.run() == 0
    assert ran == [] and ros_timer.cancelled
    from launch_ros.ros_adapters import ROSAdapter
    adapter = service._driver.attachments[ROSAdapter]
    assert adapter.closed and not any(t.is_alive() for t in adapter.waits)


def test_set_use_sim_time_takes_true_or_false_and_names_anything_else(launch):
    from launch.actions import OpaqueFunction
    from launch_ros.actions import SetUseSimTime
    from launch_ros.ros_adapters import get_ros_node

    seen = []
    ld = launch.LaunchDescription([
        SetUseSimTime("true"),
        OpaqueFunction(function=lambda c: seen.append(
            get_ros_node(c).get_parameter("use_sim_time").value)),
        SetUseSimTime(False),
        OpaqueFunction(function=lambda c: seen.append(
            get_ros_node(c).get_parameter("use_sim_time").value)),
    ])
    service = launch.LaunchService()
    service.include_launch_description(ld)
    assert service.run() == 0
    assert seen == [True, False]

    bad = launch.LaunchService()
    bad.include_launch_description(launch.LaunchDescription([SetUseSimTime("maybe")]))
    assert bad.run() == 1
