"""Actions from Python: rclpy's ActionServer and ActionClient on kairos, in one process,
across processes, against kairos's Rust action client (`kairos action send_goal`), and
rclpy programs run unmodified with `python -m kairos.run`."""

import gc
import itertools
import json
import pathlib
import signal
import subprocess
import sys
import threading
import time
import uuid

import pytest

import kairos
from kairos import _kairos
from conftest import LIMIT, kairos_bin, run, spin_in_thread, wait_until
from kairos.action import (
    ActionClient,
    ActionServer,
    CancelResponse,
    GoalResponse,
    GoalTransitionError,
)
from kairos.action_msgs.msg import GoalStatus
from kairos.callback_groups import ReentrantCallbackGroup
from kairos.example_interfaces.action import Fibonacci
from kairos.executors import MultiThreadedExecutor, SingleThreadedExecutor

PROGRAMS = pathlib.Path(__file__).resolve().parent / "programs"


def fibonacci(goal_handle):
    feedback = Fibonacci.Feedback(sequence=[0, 1])
    for i in range(1, goal_handle.request.order):
        feedback.sequence.append(feedback.sequence[i] + feedback.sequence[i - 1])
        goal_handle.publish_feedback(feedback)
    goal_handle.succeed()
    return Fibonacci.Result(sequence=feedback.sequence)


_actions = itertools.count()


def action_name():
    """A name no other test of this process uses (nodes outlive their test)."""
    return f"fibonacci_{next(_actions)}"


class System:
    """A server node and a client node on one multi-threaded executor."""

    def __init__(self, execute=fibonacci, **server_options):
        name = action_name()
        self.server_node = kairos.create_node("fibonacci_server")
        self.client_node = kairos.create_node("fibonacci_client")
        self.server = ActionServer(self.server_node, Fibonacci, name, execute,
                                   callback_group=ReentrantCallbackGroup(), **server_options)
        self.client = ActionClient(self.client_node, Fibonacci, name)
        self.executor = MultiThreadedExecutor(num_threads=2)
        self.executor.add_node(self.server_node)
        self.executor.add_node(self.client_node)
        spin_in_thread(self.executor)
        assert self.client.wait_for_server(timeout_sec=LIMIT)

    def wait(self, future):
        return completed(future)


def completed(future):
    """The future's result, once the spinning executor completed it."""
    done = threading.Event()
    future.add_done_callback(lambda _: done.set())
    assert done.wait(LIMIT), "the future did not complete"
    return future.result()


def test_a_goal_runs_with_feedback_and_its_result_reaches_every_asker(session):
    system = System()
    feedback = []
    handle = system.wait(system.client.send_goal_async(
        Fibonacci.Goal(order=6), feedback_callback=lambda m: feedback.append(m)))
    assert handle.accepted
    # Feedback and result travel apart, and (as in rclpy) a goal's feedback callback goes
    # when its result comes: the feedback is taken first.
    assert wait_until(lambda: len(feedback) == 5), feedback
    first = system.wait(handle.get_result_async())
    again = system.wait(handle.get_result_async())
    for response in (first, again):
        assert response.status == GoalStatus.STATUS_SUCCEEDED
        assert response.result.sequence.tolist() == [0, 1, 1, 2, 3, 5, 8]
    assert [list(m.feedback.sequence) for m in feedback] == [
        [0, 1, 1], [0, 1, 1, 2], [0, 1, 1, 2, 3], [0, 1, 1, 2, 3, 5], [0, 1, 1, 2, 3, 5, 8]]
    assert all(bytes(m.goal_id.uuid) == bytes(handle.goal_id.uuid) for m in feedback)
    assert handle.status == GoalStatus.STATUS_SUCCEEDED
    # The blocking forms, from a thread the executor does not run.
    assert system.client.send_goal(Fibonacci.Goal(order=3)).result.sequence.tolist() == [0, 1, 1, 2]


def test_a_canceled_goal_ends_canceled_and_the_cancel_names_it(session):
    asked = threading.Event()

    def cancel(goal_handle):
        asked.set()
        return CancelResponse.ACCEPT

    def execute(goal_handle):
        assert asked.wait(LIMIT)
        while not goal_handle.is_cancel_requested:
            asked.wait(0.001)
        goal_handle.canceled()
        return Fibonacci.Result(sequence=[7])

    system = System(execute, cancel_callback=cancel)
    handle = system.wait(system.client.send_goal_async(Fibonacci.Goal(order=100)))
    canceling = system.wait(handle.cancel_goal_async())
    assert canceling.return_code == 0
    assert [bytes(i.goal_id.uuid) for i in canceling.goals_canceling] == [
        bytes(handle.goal_id.uuid)]
    result = completed(handle.get_result_async())
    assert result.status == GoalStatus.STATUS_CANCELED
    assert result.result.sequence.tolist() == [7]
    # A goal that ended cannot be canceled: ROS 2's return code says so.
    again = system.wait(handle.cancel_goal_async())
    assert again.return_code == again.ERROR_GOAL_TERMINATED
    assert list(again.goals_canceling) == []


def test_the_default_cancel_policy_rejects_and_unknown_goals_are_named(session):
    release = threading.Event()

    def execute(goal_handle):
        assert release.wait(LIMIT)
        goal_handle.succeed()
        return Fibonacci.Result()

    system = System(execute)
    handle = system.wait(system.client.send_goal_async(Fibonacci.Goal(order=1)))
    rejected = system.wait(handle.cancel_goal_async())
    assert rejected.return_code == rejected.ERROR_REJECTED
    release.set()
    assert system.wait(handle.get_result_async()).status == GoalStatus.STATUS_SUCCEEDED
    from kairos.action_msgs.msg import GoalInfo
    from kairos.unique_identifier_msgs.msg import UUID

    # A goal the server never had, asked about through the action's own services.
    stranger = UUID(uuid=[9] * 16)
    services = f"{system.server._action_name}/_action/"
    cancel = system.client_node.create_client(
        Fibonacci.Impl.CancelGoalService, services + "cancel_goal")
    unknown = system.wait(cancel.call_async(
        Fibonacci.Impl.CancelGoalService.Request(goal_info=GoalInfo(goal_id=stranger))))
    assert unknown.return_code == unknown.ERROR_UNKNOWN_GOAL_ID
    result = system.client_node.create_client(
        Fibonacci.Impl.GetResultService, services + "get_result")
    asked = system.wait(result.call_async(
        Fibonacci.Impl.GetResultService.Request(goal_id=stranger)))
    assert asked.status == GoalStatus.STATUS_UNKNOWN


def test_a_rejected_goal_is_not_accepted_and_has_no_result(session):
    system = System(goal_callback=lambda goal: GoalResponse.REJECT)
    handle = system.wait(system.client.send_goal_async(Fibonacci.Goal(order=3)))
    assert not handle.accepted
    with pytest.raises(RuntimeError, match="rejected"):
        handle.get_result_async()
    assert system.client.send_goal(Fibonacci.Goal(order=3)) is None


def test_an_execute_callback_that_raises_aborts_its_goal_and_says_why(session, capfd):
    def execute(goal_handle):
        raise ValueError("the arm is not homed")

    system = System(execute)
    handle = system.wait(system.client.send_goal_async(Fibonacci.Goal(order=3)))
    result = system.wait(handle.get_result_async())
    assert result.status == GoalStatus.STATUS_ABORTED
    assert result.result.sequence.tolist() == []
    err = capfd.readouterr().err
    assert "raised ValueError: the arm is not homed; the goal is aborted" in err


def test_a_goal_left_without_an_end_is_aborted_with_a_warning(session, capfd):
    system = System(lambda goal_handle: Fibonacci.Result(sequence=[1]))
    handle = system.wait(system.client.send_goal_async(Fibonacci.Goal(order=3)))
    result = system.wait(handle.get_result_async())
    assert result.status == GoalStatus.STATUS_ABORTED
    assert result.result.sequence.tolist() == [1]
    assert "returned without succeed(), abort() or canceled()" in capfd.readouterr().err


def test_a_goal_ends_once(session):
    seen = []

    def execute(goal_handle):
        goal_handle.succeed()
        for end in (goal_handle.succeed, goal_handle.abort, goal_handle.canceled):
            try:
                end()
            except GoalTransitionError as error:
                seen.append(str(error))
        return Fibonacci.Result()

    system = System(execute)
    handle = system.wait(system.client.send_goal_async(Fibonacci.Goal(order=3)))
    assert system.wait(handle.get_result_async()).status == GoalStatus.STATUS_SUCCEEDED
    assert len(seen) == 3 and all("is succeeded" in text for text in seen), seen


def test_the_server_asks_the_state_machine_rust_servers_run():
    """Python goals move by kairos-action's machine: every pair of statuses gets ROS 2's
    actions design's answer (a goal executes, may be canceled while accepted or
    executing, may be aborted before it executes, and ends once)."""
    s = GoalStatus
    allowed = {
        (s.STATUS_ACCEPTED, s.STATUS_EXECUTING), (s.STATUS_ACCEPTED, s.STATUS_CANCELING),
        (s.STATUS_ACCEPTED, s.STATUS_ABORTED), (s.STATUS_EXECUTING, s.STATUS_CANCELING),
        (s.STATUS_EXECUTING, s.STATUS_SUCCEEDED), (s.STATUS_EXECUTING, s.STATUS_ABORTED),
        (s.STATUS_CANCELING, s.STATUS_SUCCEEDED), (s.STATUS_CANCELING, s.STATUS_ABORTED),
        (s.STATUS_CANCELING, s.STATUS_CANCELED),
    }
    for frm, to in itertools.product(range(7), repeat=2):
        assert _kairos.goal_can_become(frm, to) == ((frm, to) in allowed), (frm, to)
    ended = {s.STATUS_SUCCEEDED, s.STATUS_CANCELED, s.STATUS_ABORTED}
    assert [code for code in range(7) if _kairos.goal_is_terminal(code)] == sorted(ended)


def test_canceled_without_a_cancel_request_is_refused(session):
    seen = []

    def execute(goal_handle):
        try:
            goal_handle.canceled()
        except GoalTransitionError as error:
            seen.append(str(error))
        goal_handle.succeed()
        return Fibonacci.Result()

    system = System(execute)
    handle = system.wait(system.client.send_goal_async(Fibonacci.Goal(order=3)))
    assert system.wait(handle.get_result_async()).status == GoalStatus.STATUS_SUCCEEDED
    assert len(seen) == 1 and "is executing: canceled is not a transition" in seen[0], seen


def test_goal_and_cancel_callbacks_may_await_before_they_decide(session):
    """rclpy's goal and cancel callbacks may be ``async def``: kairos-action's server waits
    for their decision on the executor."""
    node = kairos.create_node("deciding_server")
    clock = node.get_clock()
    decided = []
    release = threading.Event()

    async def goal_callback(goal):
        await clock.sleep_async(0.01)
        decided.append(("goal", goal.order))
        return GoalResponse.ACCEPT if goal.order >= 0 else GoalResponse.REJECT

    async def cancel_callback(goal_handle):
        await clock.sleep_async(0.01)
        decided.append(("cancel", goal_handle.request.order))
        return CancelResponse.ACCEPT

    def execute(goal_handle):
        assert release.wait(LIMIT)
        assert goal_handle.is_cancel_requested
        goal_handle.canceled()
        return Fibonacci.Result(sequence=[goal_handle.request.order])

    name = action_name()
    ActionServer(node, Fibonacci, name, execute, goal_callback=goal_callback,
                 cancel_callback=cancel_callback, callback_group=ReentrantCallbackGroup())
    client_node = kairos.create_node("deciding_client")
    client = ActionClient(client_node, Fibonacci, name)
    executor = MultiThreadedExecutor(num_threads=3)
    executor.add_node(node)
    executor.add_node(client_node)
    spin_in_thread(executor)
    assert client.wait_for_server(timeout_sec=LIMIT)
    assert not completed(client.send_goal_async(Fibonacci.Goal(order=-1))).accepted
    handle = completed(client.send_goal_async(Fibonacci.Goal(order=5)))
    assert handle.accepted
    cancel = completed(handle.cancel_goal_async())
    assert [bytes(g.goal_id.uuid) for g in cancel.goals_canceling] == [bytes(handle.goal_id.uuid)]
    release.set()
    result = completed(handle.get_result_async())
    assert result.status == GoalStatus.STATUS_CANCELED
    assert result.result.sequence.tolist() == [5]
    assert decided == [("goal", -1), ("goal", 5), ("cancel", 5)]


def test_destroying_the_node_takes_its_action_servers_off_the_graph(session):
    """The Rust server's services go with the node, as rclpy destroys a node's waitables:
    a goal sent afterwards finds no server instead of one no executor runs."""
    name = action_name()
    node = kairos.create_node("leaving_server")
    server = ActionServer(node, Fibonacci, name, fibonacci)
    client_node = kairos.create_node("staying_client")
    client = ActionClient(client_node, Fibonacci, name)
    assert client.wait_for_server(timeout_sec=LIMIT)
    node.destroy_node()
    assert wait_until(lambda: not client.server_is_ready()), "the server stayed on the graph"
    server.destroy()  # after the node, as rclpy allows: nothing left to do


def test_destroying_the_node_takes_its_action_clients_off_the_graph(session):
    """The Rust client's services and topics go with the node too."""
    from kairos.action import get_action_names_and_types

    name = f"/{action_name()}"
    observer = kairos.create_node("observer")
    node = kairos.create_node("leaving_client")
    ActionClient(node, Fibonacci, name)

    def listed():
        return name in dict(get_action_names_and_types(observer))

    assert wait_until(listed), get_action_names_and_types(observer)
    node.destroy_node()
    assert wait_until(lambda: not listed()), "the client stayed on the graph"


def test_a_dropped_goal_handle_keeps_its_feedback_callback_until_the_goal_ends(session):
    """rclpy's rule: a goal's feedback callback outlives its handle; once the status says
    the goal ended, its feedback is counted, not delivered."""
    release = threading.Event()
    publish = threading.Event()

    def execute(goal_handle):
        assert publish.wait(LIMIT)
        goal_handle.publish_feedback(Fibonacci.Feedback(sequence=[1]))
        assert release.wait(LIMIT)
        goal_handle.succeed()
        return Fibonacci.Result()

    system = System(execute)
    got = []
    handle = system.wait(system.client.send_goal_async(
        Fibonacci.Goal(order=1), feedback_callback=got.append))
    goal_id = handle.goal_id
    del handle
    gc.collect()
    publish.set()
    assert wait_until(lambda: len(got) == 1), "the dropped handle's feedback was lost"
    release.set()
    # Once the client heard the end, feedback for the goal is counted, not delivered.
    late = system.client_node.create_publisher(
        Fibonacci.Impl.FeedbackMessage, f"{system.server._action_name}/_action/feedback", 10)
    sent = 0
    while system.client.unmatched_feedback == 0 and sent < 5000:
        late.publish(Fibonacci.Impl.FeedbackMessage(goal_id=goal_id))
        sent += 1
        time.sleep(0.002)
    assert system.client.unmatched_feedback > 0, "the goal's end never ended its feedback"


def test_goal_ids_print_as_the_uuid_module_prints_them():
    for _ in range(100):
        raw = uuid.uuid4().bytes
        assert _kairos.goal_id_text(raw) == str(uuid.UUID(bytes=raw))
    with pytest.raises(ValueError, match="a goal id is 16 bytes"):
        _kairos.goal_id_text(b"short")


def test_an_async_execute_callback_awaits_and_holds_no_worker(session):
    """Two goals whose coroutines await a sleep run at once on a one-thread executor:
    awaiting does not hold the worker."""
    node = kairos.create_node("async_server")
    clock = node.get_clock()
    running = []

    async def execute(goal_handle):
        running.append(goal_handle.request.order)
        await clock.sleep_async(0.05)
        goal_handle.succeed()
        return Fibonacci.Result(sequence=list(running))

    name = action_name()
    ActionServer(node, Fibonacci, name, execute, callback_group=ReentrantCallbackGroup())
    client = ActionClient(node, Fibonacci, name, callback_group=ReentrantCallbackGroup())
    executor = SingleThreadedExecutor()
    executor.add_node(node)
    spin_in_thread(executor)
    results = []
    for order in (1, 2):
        goal = client.send_goal_async(Fibonacci.Goal(order=order))
        done = threading.Event()
        goal.add_done_callback(lambda _: done.set())
        assert done.wait(LIMIT)
        results.append(goal.result().get_result_async())
    for future in results:
        done = threading.Event()
        future.add_done_callback(lambda _: done.set())
        assert done.wait(LIMIT)
    # Each goal's result saw both goals running: the second started before the first ended.
    assert [sorted(f.result().result.sequence) for f in results] == [[1, 2], [1, 2]]


def test_a_blocking_send_goal_that_could_never_complete_raises_would_deadlock(session):
    node = kairos.create_node("lonely")
    name = action_name()
    ActionServer(node, Fibonacci, name, fibonacci)
    client = ActionClient(node, Fibonacci, name)
    raised = []

    def tick():
        timer.cancel()
        try:
            client.send_goal(Fibonacci.Goal(order=2))
        except kairos.WouldDeadlock as error:
            raised.append(str(error))

    timer = node.create_timer(0.001, tick)
    executor = SingleThreadedExecutor()
    executor.add_node(node)
    thread = spin_in_thread(executor)
    for _ in range(int(LIMIT * 100)):
        if raised:
            break
        thread.join(0.01)
    assert raised and f"{name}/_action/send_goal" in raised[0], raised


def test_an_asyncio_task_awaits_a_kairos_future(session):
    """A kairos future awaited in an asyncio task, the executor spun by that loop
    (rclpy's `client_asyncio` shape)."""
    import asyncio

    node = kairos.create_node("asyncio_client")
    name = action_name()
    ActionServer(node, Fibonacci, name, fibonacci, callback_group=ReentrantCallbackGroup())
    client = ActionClient(node, Fibonacci, name)

    async def goal():
        handle = await client.send_goal_async(Fibonacci.Goal(order=4))
        return await handle.get_result_async()

    async def main():
        task = asyncio.get_running_loop().create_task(goal())
        for _ in range(int(LIMIT * 100)):
            if task.done():
                break
            kairos.spin_once(node, timeout_sec=0.01)
            await asyncio.sleep(0)
        return task.result()

    result = asyncio.run(main())
    assert result.status == GoalStatus.STATUS_SUCCEEDED
    assert result.result.sequence.tolist() == [0, 1, 1, 2, 3]


def test_rclpy_action_programs_run_unmodified_across_processes(router):
    """The server and client of tests/programs, written for rclpy, run with
    `python -m kairos.run` on Zenoh; Ctrl-C ends the server cleanly."""
    client, out = run_action_programs(router.env())
    assert client.stdout.splitlines() == [
        "result True [0, 1, 1, 2, 3, 5, 8]",
        "feedback 5 [0, 1, 1, 2, 3, 5, 8]",
        "rejected True",
        "canceling 1",
        "canceled True",
    ], client.stdout + client.stderr
    assert "serving fibonacci" in out and "goal canceled" in out, out


def run_action_programs(env):
    """Runs the rclpy action server and client programs with `python -m kairos.run`, the
    client to its end, then Ctrl-C to the server; the client's run and the server's
    output, both having exited with status 0."""
    server = subprocess.Popen(
        [sys.executable, "-m", "kairos.run", str(PROGRAMS / "fibonacci_action_server.py")],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        client = run([sys.executable, "-m", "kairos.run",
                      str(PROGRAMS / "fibonacci_action_client.py")], env)
        assert client.returncode == 0, client.stdout + client.stderr
    finally:
        server.send_signal(signal.SIGINT)
        try:
            out, _ = server.communicate(timeout=LIMIT)
        except subprocess.TimeoutExpired:
            server.kill()
            pytest.fail("the server did not stop within the limit after Ctrl-C")
    assert server.returncode == 0, out
    return client, out


def test_kairos_send_goal_drives_a_python_action_server(router):
    """kairos's Rust action client (the CLI) and the Python server, across processes."""
    env = router.env()
    server = subprocess.Popen(
        [sys.executable, "-m", "kairos.run", str(PROGRAMS / "fibonacci_action_server.py")],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        sent = run([kairos_bin(), "action", "send_goal", "/fibonacci",
                    "example_interfaces/action/Fibonacci", "{order: 4}", "--feedback"], env)
        assert sent.returncode == 0, sent.stdout + sent.stderr
        # The server sends all its feedback at once, just before the result: the CLI
        # hands it over before it prints the result.
        for line in ("Goal accepted with ID: ", "Result:\n    sequence: [0,1,1,2,3]",
                     "Goal finished with status: SUCCEEDED"):
            assert line in sent.stdout, sent.stdout
        before_result = sent.stdout.split("Result:")[0]
        for feedback in ("[0,1,1]", "[0,1,1,2]", "[0,1,1,2,3]"):
            assert f"Feedback:\n    sequence: {feedback}\n" in before_result, sent.stdout
    finally:
        server.send_signal(signal.SIGINT)
        try:
            server.communicate(timeout=LIMIT)
        except subprocess.TimeoutExpired:
            server.kill()
    assert server.returncode == 0


def test_kairos_run_names_an_rclpy_module_kairos_lacks(tmp_path):
    program = tmp_path / "lifecycle_talker.py"
    program.write_text("import rclpy.no_such_module\n")
    done = run([sys.executable, "-m", "kairos.run", str(program)], None)
    assert done.returncode != 0
    assert "rclpy.no_such_module has no counterpart in kairos yet" in done.stderr, done.stderr


def test_kairos_run_maps_sensor_msgs_py(tmp_path):
    program = tmp_path / "cloud.py"
    program.write_text(
        "from sensor_msgs_py import point_cloud2\n"
        "from std_msgs.msg import Header\n"
        "cloud = point_cloud2.create_cloud_xyz32(Header(), [(1.0, 2.0, 3.0)])\n"
        "print(type(cloud).__name__, point_cloud2.read_points_list(cloud))\n")
    done = run([sys.executable, "-m", "kairos.run", str(program)], None)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "PointCloud2 [Point(x=1.0, y=2.0, z=3.0)]\n", done.stdout


def test_feedback_of_a_goal_no_one_follows_is_counted(session):
    system = System()
    got = []
    handle = system.wait(system.client.send_goal_async(
        Fibonacci.Goal(order=4), feedback_callback=got.append))
    # Its feedback callback goes when its result comes (as rclpy): take the feedback first.
    assert wait_until(lambda: len(got) == 3)
    result = system.wait(handle.get_result_async())
    assert result.status == GoalStatus.STATUS_SUCCEEDED
    # A goal sent by another client of the same action: its feedback reaches this
    # client's subscription, which follows no such goal.
    other = ActionClient(system.client_node, Fibonacci, system.server._action_name)
    other_handle = system.wait(other.send_goal_async(Fibonacci.Goal(order=4)))
    system.wait(other_handle.get_result_async())
    assert wait_until(lambda: system.client.unmatched_feedback == 3)
    # Feedback for the first goal after its result: counted, no longer delivered.
    late = system.client_node.create_publisher(
        Fibonacci.Impl.FeedbackMessage, f"{system.server._action_name}/_action/feedback", 10)
    late.publish(Fibonacci.Impl.FeedbackMessage(goal_id=handle.goal_id))
    assert wait_until(lambda: system.client.unmatched_feedback == 4)
    assert len(got) == 3


def test_goals_of_rclpy_programs_are_traced_and_joined_across_processes(router, tmp_path):
    """The rclpy action programs, traced (KAIROS_TRACE) in two processes: `kairos trace
    goals` joins each goal's client and server steps by its id and says how it ended."""
    env = dict(router.env(), KAIROS_TRACE=str(tmp_path))
    run_action_programs(env)
    goals = run([kairos_bin(), "trace", "goals", "--json", str(tmp_path)], env)
    assert goals.returncode == 0, goals.stderr
    report = json.loads(goals.stdout)
    [action] = [a for a in report["actions"] if a["action"] == "/fibonacci"]
    assert action["outcomes"] == {"succeeded": 1, "rejected": 1, "canceled": 1}, action
    for goal in action["goals"]:
        assert goal["client"] and goal["server"], goal  # both ends, two processes
    done = next(g for g in action["goals"] if g["outcome"] == "succeeded")
    assert done["feedback_published"] == done["feedback_received"] == 5, done
    assert done["accept_ns"] >= 0 and done["total_ns"] >= done["run_ns"] >= 0, done
    canceled = next(g for g in action["goals"] if g["outcome"] == "canceled")
    steps = [(s["side"], s["event"]) for s in canceled["steps"]]
    for step in [("client", "sent"), ("server", "accepted"), ("client", "cancel_sent"),
                 ("server", "canceling"), ("client", "canceling"), ("server", "canceled"),
                 ("client", "result")]:
        assert step in steps, steps
    assert steps.index(("client", "cancel_sent")) < steps.index(("server", "canceling"))
    assert steps.index(("server", "canceled")) < steps.index(("client", "result"))
