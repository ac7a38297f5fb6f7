"""A node's clock follows use_sim_time, as rclpy's parameter does."""

from kairos.clock_type import ClockType
from kairos.node import Node
from kairos.parameter import Parameter


def test_use_sim_time_switches_the_node_clock(session):
    node = Node("sim_node", parameter_overrides=[Parameter("use_sim_time", value=True)])
    assert node.get_parameter("use_sim_time").value is True
    assert node.get_clock().ros_time_is_active
    # Before the first /clock sample simulated time is zero.
    assert node.get_clock().now().nanoseconds == 0
    node.set_parameters([Parameter("use_sim_time", value=False)])
    assert not node.get_clock().ros_time_is_active
    assert node.get_clock().now().nanoseconds > 1_600_000_000 * 10**9


def test_a_plain_node_runs_on_system_time(session):
    clock = Node("wall_node").get_clock()
    assert clock.clock_type == ClockType.ROS_TIME and not clock.ros_time_is_active


def test_a_rate_is_never_early(session):
    import kairos

    clock = kairos.Clock("steady")
    rate = Node("rated").create_rate(200, clock)  # 5 ms
    start = clock.now().nanoseconds
    for k in range(1, 11):
        assert rate.sleep() is True
        # Deadlines are start' + k * period with start' >= start: k periods at least.
        assert clock.now().nanoseconds - start >= k * 5_000_000


def test_a_rate_is_an_executor_entity_and_its_sleeps_have_ways_out(session):
    """As rclpy's timer-backed rate: spin_once returns each period while a rate is all
    there is; destroy_rate wakes a sleep (which returns), shutdown raises
    ROSInterruptException; a frequency that is no rate is refused."""
    import threading
    import time

    import kairos
    import pytest
    from kairos.exceptions import ROSInterruptException
    from kairos.executors import SingleThreadedExecutor

    node = Node("rate_entity")
    for bad, error in ((None, TypeError), (0.0, ValueError), (-1.0, ValueError)):
        with pytest.raises(error):
            node.create_rate(bad)
    rate = node.create_rate(100)
    executor = SingleThreadedExecutor()
    executor.add_node(node)
    started = time.monotonic()
    executor.spin_once(timeout_sec=30.0)
    assert time.monotonic() - started < 10.0, "spin_once did not return with the rate"

    forever = node.create_rate(1e-7)
    outcome = []
    sleeper = threading.Thread(target=lambda: outcome.append(forever.sleep()))
    sleeper.start()
    time.sleep(0.05)
    assert node.destroy_rate(forever)
    sleeper.join(10.0)
    assert outcome == [False], "destroy_rate did not wake the sleep"

    forever = node.create_rate(1e-7)

    def sleep():
        try:
            forever.sleep()
        except ROSInterruptException:
            outcome.append("interrupted")

    sleeper = threading.Thread(target=sleep)
    sleeper.start()
    time.sleep(0.05)
    kairos.shutdown()
    sleeper.join(10.0)
    assert outcome[-1] == "interrupted"
    kairos.init()  # for the fixture's shutdown
    del rate


def publish_clock(node, sec):
    from kairos.builtin_interfaces.msg import Time
    from kairos.rosgraph_msgs.msg import Clock as ClockMsg

    publisher = node.create_publisher(ClockMsg, "/clock", 10)
    publisher.publish(ClockMsg(clock=Time(sec=sec)))


def test_a_silent_clock_fails_a_wait_under_the_fail_stall_policy(session):
    import kairos

    clock = kairos.Clock("steady")
    node = Node("stall_fail", parameter_overrides=[Parameter("use_sim_time", value=True)],
                sim_stall_policy="fail", sim_stall_timeout_sec=0.2)
    publish_clock(node, 5)
    assert node.get_clock().now().nanoseconds == 5 * 10**9
    start = clock.now().nanoseconds
    # 1 h of simulated time that will never come: the wait fails once /clock has been
    # silent for 0.2 s of steady time, with the Rust message.
    try:
        node.get_clock().sleep_for(3600.0)
    except kairos.ClockStalled as err:
        assert "simulation time stalled" in str(err) and "stall policy: fail" in str(err)
    else:
        raise AssertionError("sleep_for on a silent sim clock returned under policy fail")
    waited = clock.now().nanoseconds - start
    assert 0 < waited < 30 * 10**9, waited
    node.destroy_node()


def test_a_silent_clock_goes_on_at_rate_one_under_fallback_to_steady(session):
    import kairos

    clock = kairos.Clock("steady")
    node = Node("stall_steady", parameter_overrides=[Parameter("use_sim_time", value=True)],
                sim_stall_policy="fallback_to_steady", sim_stall_timeout_sec=0.1)
    publish_clock(node, 7)
    start = clock.now().nanoseconds
    assert node.get_clock().sleep_for(0.2) is True
    # Simulated time moved on without /clock, never ahead of steady time.
    now = node.get_clock().now().nanoseconds
    assert now >= 7 * 10**9 + 200_000_000, now
    assert clock.now().nanoseconds - start >= 200_000_000
    node.destroy_node()


def test_an_unknown_stall_policy_says_which_exist(session):
    import pytest

    with pytest.raises(ValueError, match="'wait', 'fallback_to_steady' or 'fail'"):
        Node("stall_bad", sim_stall_policy="sometimes")


def test_a_timer_tick_is_never_early_and_says_its_deadline(session):
    import threading

    import kairos
    from conftest import LIMIT, spin_in_thread

    node = Node("ticking")
    seen = []
    done = threading.Event()

    def tick():
        seen.append((kairos._kairos.steady_ns(), timer.scheduled_ns))
        if len(seen) == 10:
            timer.cancel()
            done.set()

    timer = node.create_timer(0.005, tick, clock=kairos.Clock("steady"))
    executor = kairos.SingleThreadedExecutor()
    executor.add_node(node)
    spin_in_thread(executor)
    assert done.wait(LIMIT)
    executor.shutdown()
    for now, due in seen:
        assert now >= due > 0, (now, due)
    # Deadlines are whole periods apart (a late tick skips periods, never shifts them).
    dues = [due for _, due in seen]
    assert all((b - a) % 5_000_000 == 0 and b > a for a, b in zip(dues, dues[1:])), dues
    node.destroy_node()


def test_a_time_source_drives_an_attached_clock_from_clock_messages(session):
    """A ROSClock attached to a TimeSource reads /clock once the node's use_sim_time is
    set; a sleep on it ends when /clock reaches its deadline (not before), and a switch
    of ROS time ends it with False."""
    import threading

    from kairos.clock import ROSClock
    from kairos.duration import Duration
    from kairos.executors import SingleThreadedExecutor
    from kairos.rosgraph_msgs.msg import Clock as ClockMsg
    from kairos.time import Time
    from kairos.time_source import TimeSource

    node = Node("ts_node")
    source = TimeSource(node=node)
    clock = ROSClock()
    source.attach_clock(clock)
    assert not clock.ros_time_is_active
    node.set_parameters([Parameter("use_sim_time", value=True)])
    assert clock.ros_time_is_active and source._clock_sub is not None
    assert clock.now() == Time(seconds=0, clock_type=ClockType.ROS_TIME)

    woke = []
    sleeper = threading.Thread(target=lambda: woke.append(
        (clock.sleep_until(Time(seconds=3, clock_type=ClockType.ROS_TIME)),
         clock.now().nanoseconds)))
    sleeper.start()
    publisher = node.create_publisher(ClockMsg, "/clock", 10)
    executor = SingleThreadedExecutor()
    executor.add_node(node)
    for second in (1, 2, 3):
        msg = ClockMsg()
        msg.clock.sec = second
        publisher.publish(msg)
        for _ in range(50):
            executor.spin_once(timeout_sec=0.1)
            if clock.now().nanoseconds == second * 10**9:
                break
        assert clock.now().nanoseconds == second * 10**9
        if second < 3:
            assert sleeper.is_alive(), "the sleep ended before /clock reached its deadline"
    sleeper.join(60)
    assert woke == [(True, 3 * 10**9)]

    ended = []
    sleeper = threading.Thread(target=lambda: ended.append(clock.sleep_for(Duration(seconds=5))))
    sleeper.start()
    # Switch only once the sleeper waits (it waits on the clock's condition).
    for _ in range(6000):
        if clock._changed._waiters:
            break
        threading.Event().wait(0.01)
    node.set_parameters([Parameter("use_sim_time", value=False)])
    sleeper.join(60)
    assert ended == [False] and not clock.ros_time_is_active
    executor.shutdown()


def test_a_timer_callback_that_asks_for_timer_info_gets_its_deadline(session):
    """A parameter annotated TimerInfo receives when the tick was due and when it ran:
    never early, so the actual time is at or after the expected one."""
    from kairos.executors import SingleThreadedExecutor
    from kairos.timer import TimerInfo

    node = Node("ti_node")
    infos = []

    def tick(info: TimerInfo):
        infos.append(info)

    timer = node.create_timer(0.01, tick)
    executor = SingleThreadedExecutor()
    executor.add_node(node)
    for _ in range(500):
        if len(infos) >= 3:
            break
        executor.spin_once(timeout_sec=0.1)
    assert len(infos) >= 3
    for info in infos:
        assert info.expected_call_time.clock_type == timer.clock.clock_type
        assert 0 < info.expected_call_time.nanoseconds <= info.actual_call_time.nanoseconds
    assert timer.time_until_next_call() <= 10_000_000
    timer.cancel()
    assert timer.time_until_next_call() is None
    executor.shutdown()


def _parked_in(thread, function):
    """Whether ``thread`` is asleep in the kernel (``S``) inside the Python function
    ``function``: a kairos wait there has registered with its clock before it parked."""
    import sys
    frame = sys._current_frames().get(thread.ident)
    if frame is None or frame.f_code.co_name != function:
        return False
    try:
        with open(f"/proc/self/task/{thread.native_id}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] == "S"
    except OSError:
        return False


def test_a_clock_publish_lets_the_thread_it_wakes_run_before_it_returns(session):
    """Lock-step simulated time: a ``/clock`` publish returns once every thread it woke
    is waiting on the clock again or has ended. A thread asleep on a node's simulated
    clock runs Python when woken, so the publish must not hold the interpreter while it
    waits: it did, and the woken thread could not run until the step gave up (its 2 s
    settle timeout); the publish returned with the thread still stuck."""
    import threading

    from kairos.rosgraph_msgs.msg import Clock as ClockMsg
    from kairos.time import Time

    sim = Node("lockstep_sim", parameter_overrides=[Parameter("use_sim_time", value=True)])
    clock = sim.get_clock()
    # Simulated time is the process's: it reads what an earlier /clock said, if any.
    base = clock.now().nanoseconds
    publisher = Node("lockstep_clock").create_publisher(ClockMsg, "/clock", 10)
    woke = []
    sleeper = threading.Thread(target=lambda: woke.append(clock.sleep_until(
        Time(nanoseconds=base + 2 * 10**9, clock_type=ClockType.ROS_TIME))))
    sleeper.start()
    for _ in range(6000):
        if _parked_in(sleeper, "sleep_for") or not sleeper.is_alive():
            break
        threading.Event().wait(0.01)
    assert _parked_in(sleeper, "sleep_for"), f"the sleeper did not wait on the clock: {woke}"
    for second in (1, 2):
        msg = ClockMsg()
        msg.clock.sec, msg.clock.nanosec = divmod(base + second * 10**9, 10**9)
        publisher.publish(msg)
        if second == 1:
            assert woke == [], "the sleep ended before /clock reached its deadline"
    assert woke == [True], "the /clock publish returned before the thread it woke ran"
    sleeper.join(60)
