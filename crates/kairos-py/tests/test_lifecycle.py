"""Lifecycle (managed) nodes from Python: rclpy's `rclpy.lifecycle` shapes on
kairos-lifecycle's state machine, in one process and driven by `kairos lifecycle` from
another process."""

import queue
import signal
import subprocess
import sys
import threading
import time

import pytest

import kairos
from conftest import LIMIT, kairos_bin, run, spin_in_thread
from kairos.executors import SingleThreadedExecutor
from kairos.lifecycle import LifecycleNode, TransitionCallbackReturn
from kairos.node import Node
from kairos.std_msgs.msg import String
from test_actions import PROGRAMS

SUCCESS, FAILURE, ERROR = (TransitionCallbackReturn.SUCCESS, TransitionCallbackReturn.FAILURE,
                           TransitionCallbackReturn.ERROR)


class Camera(LifecycleNode):
    def __init__(self, name, topic):
        super().__init__(name)
        self.calls = []
        self.next = {}
        self.pub = self.create_lifecycle_publisher(String, topic, 10)

    def _answer(self, method, state):
        self.calls.append((method, state.label))
        answer = self.next.pop(method, SUCCESS)
        if isinstance(answer, Exception):
            raise answer
        return answer

    def on_configure(self, state):
        return self._answer("on_configure", state)

    def on_activate(self, state):
        self.pub.publish(String(data="first, from on_activate"))
        return self._answer("on_activate", state)

    def on_error(self, state):
        return self._answer("on_error", state)


def test_transitions_drive_a_lifecycle_publisher(session):
    heard = queue.Queue()
    listener = Node("lc_listener")
    listener.create_subscription(String, "/lc/images", lambda m: heard.put(m.data), 10)
    camera = Camera("lc_camera", "/lc/images")
    executor = SingleThreadedExecutor()
    executor.add_node(listener)
    spin_in_thread(executor)
    assert camera.current_state == (1, "unconfigured")
    assert camera.pub.publish(String(data="too early")) == 0
    assert camera.trigger_configure() == SUCCESS
    assert camera.current_state.label == "inactive"
    assert not camera.pub.is_activated
    assert camera.trigger_activate() == SUCCESS
    assert camera.pub.is_activated
    camera.pub.publish(String(data="active"))
    assert heard.get(timeout=LIMIT) == "first, from on_activate"
    assert heard.get(timeout=LIMIT) == "active"
    assert camera.trigger_deactivate() == SUCCESS
    camera.pub.publish(String(data="deactivated"))
    assert camera.pub.dropped_while_inactive == 2
    assert camera.calls == [("on_configure", "unconfigured"), ("on_activate", "inactive")]
    with pytest.raises(RuntimeError, match="is inactive: deactivate is not a transition"):
        camera.trigger_deactivate()
    assert executor.shutdown(timeout_sec=30.0)
    assert heard.empty()


def test_failure_error_and_bad_returns_follow_the_state_machine(session, capfd):
    camera = Camera("lc_faulty", "/lc/faulty")
    camera.next["on_configure"] = FAILURE
    assert camera.trigger_configure() == FAILURE
    assert camera.current_state.label == "unconfigured"
    camera.next["on_configure"] = ValueError("no lens")
    assert camera.trigger_configure() == ERROR
    assert camera.current_state.label == "unconfigured", "on_error succeeded: unconfigured"
    assert camera.calls[-1] == ("on_error", "configuring")
    assert "ValueError: no lens" in capfd.readouterr().err
    camera.next["on_configure"] = "yes"
    camera.next["on_error"] = FAILURE
    assert camera.trigger_configure() == ERROR
    assert camera.current_state.label == "finalized"
    assert "returned 'yes', not a TransitionCallbackReturn" in capfd.readouterr().err


def test_without_its_interface_a_node_serves_nothing_and_still_transitions(session):
    with pytest.raises(TypeError):
        LifecycleNode("lc_quiet", enable_communication_interface="yes")
    quiet = LifecycleNode("lc_quiet", enable_communication_interface=False)
    observer = Node("lc_observer")
    services = dict(observer.get_service_names_and_types_by_node("lc_quiet", "/"))
    lifecycle = ("change_state", "get_state", "get_available_states",
                 "get_available_transitions", "get_transition_graph")
    assert not [n for n in services if n.rsplit("/", 1)[-1] in lifecycle], services
    assert not observer.count_publishers("/lc_quiet/transition_event")
    assert not quiet._state_machine.service_change_state
    assert quiet.trigger_configure() == SUCCESS
    assert quiet._state_machine.current_state == (2, "inactive")
    # The name is free for a node with the interface, which serves the services.
    served = LifecycleNode("lc_quiet")
    services = dict(observer.get_service_names_and_types_by_node("lc_quiet", "/"))
    assert "/lc_quiet/change_state" in services, services
    assert served._state_machine.service_change_state


def test_kairos_lifecycle_drives_an_rclpy_lifecycle_program(router):
    env = router.env()
    talker = subprocess.Popen(
        [sys.executable, "-m", "kairos.run", str(PROGRAMS / "lifecycle_talker.py")],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    output = []
    reader = threading.Thread(target=lambda: output.extend(talker.stdout), daemon=True)
    reader.start()

    def kairos_cli(*args):
        done = run([kairos_bin(), *args], env)
        assert done.returncode == 0, done.stdout + done.stderr
        return done.stdout

    try:
        assert kairos_cli("lifecycle", "nodes", "--spin-time", str(LIMIT), "--wait-for",
                          "/lc_talker/get_state") == "/lc_talker\n"
        assert kairos_cli("lifecycle", "get", "/lc_talker") == "unconfigured [1]\n"
        for transition in ("configure", "activate"):
            assert kairos_cli("lifecycle", "set", "/lc_talker", transition) == \
                "Transitioning successful\n"
        echoed = kairos_cli("topic", "echo", "/lifecycle_chatter", "std_msgs/msg/String",
                            "--count", "2", "--timeout", str(LIMIT))
        assert echoed.count('data: "hello ') == 2, echoed
        assert kairos_cli("lifecycle", "set", "/lc_talker", "deactivate") == \
            "Transitioning successful\n"
        # The timer's next publish (every 20 ms) is refused and reported: wait for the
        # report, so the shutdown below comes after at least one (a loaded machine may
        # run no tick between two quick CLI calls).
        waited = time.monotonic() + LIMIT
        while time.monotonic() < waited and not any("was not published" in line
                                                    for line in output):
            time.sleep(0.01)
        assert kairos_cli("lifecycle", "set", "/lc_talker", "shutdown") == \
            "Transitioning successful\n"
        assert kairos_cli("lifecycle", "get", "/lc_talker") == "finalized [4]\n"
    finally:
        talker.send_signal(signal.SIGINT)
        try:
            talker.wait(timeout=LIMIT)
        except subprocess.TimeoutExpired:
            talker.kill()
            pytest.fail("the talker did not stop within the limit after Ctrl-C")
        reader.join(LIMIT)
    out = "".join(output)
    assert talker.returncode == 0, out
    lines = [line for line in out.splitlines() if line.startswith("on_")]
    assert lines == [
        "on_configure from unconfigured",
        "on_activate from inactive",
        "on_deactivate from active",
        "on_shutdown from inactive dropped while inactive: True",
    ], out
