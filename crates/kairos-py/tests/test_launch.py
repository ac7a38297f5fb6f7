"""ROS 2's ``launch``, ``launch_ros`` and ``ament_index_python`` names under
``kairos.run``: what a Python launch file imports is kairos's, and behaves as ROS 2's.
The launch files themselves run under ``kairos launch`` (crates/kairos-cli/tests/launch.rs)."""

import os
import subprocess
import sys

import pytest

from kairos import run


def _install(prefix, package, executables=(), share=()):
    index = prefix / "share/ament_index/resource_index/packages"
    index.mkdir(parents=True, exist_ok=True)
    (index / package).write_text("")
    lib = prefix / "lib" / package
    lib.mkdir(parents=True, exist_ok=True)
    for name in executables:
        (lib / name).write_text("#!/usr/bin/env python3\n")
        (lib / name).chmod(0o755)
    for name in share:
        path = prefix / "share" / package / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("")


def test_launch_names_are_kairos_under_kairos_run(tmp_path, monkeypatch):
    run.install()
    import ament_index_python.packages as packages
    import launch
    import launch_ros.actions
    assert launch.LaunchDescription.__module__ == "kairos.launch.launch_description"
    assert launch_ros.actions.Node.__module__ == "kairos.launch_ros.actions"
    overlay, underlay = tmp_path / "overlay", tmp_path / "underlay"
    _install(overlay, "robot", ["driver.py"], ["launch/a.launch.py"])
    _install(underlay, "robot")
    _install(underlay, "base")
    monkeypatch.setenv("AMENT_PREFIX_PATH", f"{overlay}{os.pathsep}{underlay}")
    assert packages.get_package_prefix("robot") == str(overlay)
    assert packages.get_package_share_directory("base", print_warning=False) == str(underlay / "share/base")
    assert set(packages.get_packages_with_prefixes()) == {"robot", "base"}
    with pytest.raises(packages.PackageNotFoundError, match="not found in AMENT_PREFIX_PATH"):
        packages.get_package_prefix("nope")


def test_substitutions_perform_as_ros_2_s(tmp_path, monkeypatch):
    run.install()
    from launch import LaunchContext
    from launch.actions import DeclareLaunchArgument
    from launch.substitutions import (
        AnonName, EnvironmentVariable, LaunchConfiguration, PathJoinSubstitution,
        PythonExpression)
    from launch_ros.substitutions import FindPackageShare
    _install(tmp_path, "robot")
    monkeypatch.setenv("AMENT_PREFIX_PATH", str(tmp_path))
    monkeypatch.setenv("KAIROS_TEST_VAR", "from env")
    context = LaunchContext()
    DeclareLaunchArgument("rate", default_value="5").visit(context)
    assert LaunchConfiguration("rate").perform(context) == "5"
    assert PythonExpression([LaunchConfiguration("rate"), " * 2"]).perform(context) == "10"
    assert EnvironmentVariable("KAIROS_TEST_VAR").perform(context) == "from env"
    assert PathJoinSubstitution([FindPackageShare("robot"), "launch"]).perform(context) \
        == str(tmp_path / "share/robot/launch")
    anon = AnonName("node").perform(context)
    assert anon.startswith("node_") and anon == AnonName("node").perform(context)
    # An unknown keyword argument is an error, as rclpy's and launch's are, never ignored.
    with pytest.raises(TypeError, match="unexpected keyword argument 'defualt_value'"):
        DeclareLaunchArgument("x", defualt_value="1")


def test_the_driver_reports_an_error_with_the_file_s_line(tmp_path):
    file = tmp_path / "bad.launch.py"
    file.write_text("from launch import LaunchDescription\n"
                    "def generate_launch_description():\n"
                    "    raise RuntimeError('broken on purpose')\n")
    result = subprocess.run([sys.executable, "-m", "kairos.launch.driver", str(file)],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 2
    import json
    message = json.loads(result.stdout.strip().splitlines()[-1])
    assert message == {"op": "error", "file": str(file), "line": 3,
                       "what": "RuntimeError: broken on purpose"}



def test_lifecycle_events_match_as_launch_ros_s():
    """``launch.events.matches_action`` is called on the action (ROS 2's matchers are);
    ``OnStateTransition`` matches a managed node's transition by node and labels."""
    run.install()
    from launch.events import matches_action
    from launch_ros.actions import LifecycleNode
    from launch_ros.event_handlers import OnStateTransition
    from launch_ros.events.lifecycle import ChangeState, StateTransition
    from lifecycle_msgs.msg import State, Transition, TransitionEvent
    talker = LifecycleNode(executable="talker", name="talker", namespace="")
    other = LifecycleNode(executable="talker", name="other", namespace="")
    change = ChangeState(lifecycle_node_matcher=matches_action(talker),
                         transition_id=Transition.TRANSITION_CONFIGURE)
    assert change.lifecycle_node_matcher(talker) and not change.lifecycle_node_matcher(other)
    msg = TransitionEvent(transition=Transition(id=1, label="configure"),
                          start_state=State(id=10, label="configuring"),
                          goal_state=State(id=2, label="inactive"))
    handler = OnStateTransition(target_lifecycle_node=talker, goal_state="inactive",
                                entities=[])
    assert handler.matches(StateTransition(action=talker, msg=msg))
    assert not handler.matches(StateTransition(action=other, msg=msg))
    assert not OnStateTransition(target_lifecycle_node=talker, goal_state="active",
                                 entities=[]).matches(StateTransition(action=talker, msg=msg))
    assert OnStateTransition(start_state="configuring", entities=[]).matches(
        StateTransition(action=other, msg=msg))


def test_ros_2_s_module_layout_imports_what_its_package_holds():
    """ROS 2 keeps one class per module (``launch.actions.execute_process``); under
    ``kairos.run`` those modules are the kairos module that holds the class."""
    run.install()
    from launch.action import Action
    from launch.actions.execute_process import ExecuteProcess
    from launch.launch_context import LaunchContext
    from launch_ros.actions.node import Node
    import launch
    assert ExecuteProcess is launch.actions.ExecuteProcess
    assert Action is launch.Action and LaunchContext is launch.LaunchContext
    assert Node.__module__ == "kairos.launch_ros.actions"
    assert isinstance(launch.LaunchDescription([]), launch.SomeEntitiesType_types_tuple)
    with pytest.raises(ImportError,
                       match="launch.launch_introspector has no counterpart in kairos"):
        import launch.launch_introspector  # noqa: F401
    # Only the submodules ROS 2 has; importing one does not bind the module over the
    # function of that name.
    with pytest.raises(ImportError, match="launch.actions.typo has no counterpart"):
        import launch.actions.typo  # noqa: F401
    from launch_ros.descriptions.composable_node import ComposableNode  # noqa: F401
    import launch_ros.utilities.normalize_remap_rule  # noqa: F401
    from launch_ros.utilities import normalize_remap_rule
    assert callable(normalize_remap_rule)


def test_scoped_state_lives_in_the_launch_configurations():
    """launch_ros' namespace, global parameters and remappings are launch configurations
    (where ROS 2's tests and launch files read them), and a group's stay in it."""
    run.install()
    from launch import LaunchContext
    from launch.actions import GroupAction
    from launch._core import visit_all
    from launch_ros.actions import PushRosNamespace, SetParameter, SetRemap
    context = LaunchContext()
    visit_all([PushRosNamespace("robot"), SetParameter("rate", 5)], context)
    inner = []
    visit_all([GroupAction([
        PushRosNamespace("arm"), SetParameter("gain", 0.5), SetRemap("a", "b"),
        _Probe(lambda c: inner.append(dict(c.launch_configurations)))])], context)
    assert inner == [{"ros_namespace": "/robot/arm",
                      "global_params": [("rate", 5), ("gain", 0.5)],
                      "ros_remaps": [("a", "b")]}]
    assert context.launch_configurations == {"ros_namespace": "/robot",
                                             "global_params": [("rate", 5)]}


class _Probe:
    """An action that calls ``see(context)`` when visited."""

    def __new__(cls, see):
        from launch.actions import OpaqueFunction
        return OpaqueFunction(function=lambda context: see(context))


def test_configuration_environment_and_boolean_actions_behave_as_ros_2_s(monkeypatch):
    run.install()
    from launch import LaunchContext
    from launch._core import visit_all
    from launch.actions import (
        PopEnvironment, PushEnvironment, ResetEnvironment, ResetLaunchConfigurations,
        SetEnvironmentVariable, SetLaunchConfiguration, UnsetLaunchConfiguration)
    from launch.conditions import IfCondition, InvalidConditionExpressionError
    from launch.substitutions import (
        AllSubstitution, AnySubstitution, IfElseSubstitution, LaunchConfiguration)
    monkeypatch.delenv("KAIROS_TEST_ENV", raising=False)
    context = LaunchContext()
    visit_all([SetLaunchConfiguration("a", "1"), SetLaunchConfiguration("b", "x"),
               UnsetLaunchConfiguration("b")], context)
    assert context.launch_configurations == {"a": "1"}
    visit_all([ResetLaunchConfigurations({"kept": LaunchConfiguration("a")})], context)
    assert context.launch_configurations == {"kept": "1"}
    visit_all([PushEnvironment(), SetEnvironmentVariable("KAIROS_TEST_ENV", "on")], context)
    assert context.environment["KAIROS_TEST_ENV"] == "on"
    visit_all([PopEnvironment()], context)
    assert "KAIROS_TEST_ENV" not in context.environment
    visit_all([SetEnvironmentVariable("KAIROS_TEST_ENV", "on"), ResetEnvironment()], context)
    assert "KAIROS_TEST_ENV" not in context.environment and context._extra_env == {}
    assert AnySubstitution("false", "1").perform(context) == "true"
    assert AllSubstitution("true", "0").perform(context) == "false"
    assert IfElseSubstitution("on", if_value="yes", else_value="no").perform(context) == "yes"
    with pytest.raises(InvalidConditionExpressionError, match="expected one of"):
        IfCondition("maybe").evaluate(context)


def test_a_composable_node_s_load_request_is_what_launch_ros_sends():
    run.install()
    from launch import LaunchContext
    from launch._core import visit_all
    from launch_ros.actions import PushRosNamespace, SetParameter, SetRemap
    from launch_ros.actions.load_composable_nodes import get_composable_node_load_request
    from launch_ros.descriptions import ComposableNode
    context = LaunchContext()
    visit_all([PushRosNamespace("robot"), SetParameter("rate", 5), SetRemap("a", "b")],
              context)
    request = get_composable_node_load_request(ComposableNode(
        package="pkg", plugin="pkg::Talker", name="talker", namespace="front",
        parameters=[{"greeting": "hey"}], remappings=[("c", "d")],
        extra_arguments=[{"use_intra_process_comms": True}]), context)
    assert (request.package_name, request.plugin_name, request.node_name,
            request.node_namespace) == ("pkg", "pkg::Talker", "talker", "/robot/front")
    assert list(request.remap_rules) == ["a:=b", "c:=d"]
    assert [(p.name, p.value.integer_value or p.value.string_value)
            for p in request.parameters] == [("rate", 5), ("greeting", "hey")]
    assert [(p.name, p.value.bool_value) for p in request.extra_arguments] == [
        ("use_intra_process_comms", True)]


# -- LaunchService: a launch run from Python code, on the kairos launcher ----------------

def _service(monkeypatch):
    from conftest import kairos_bin
    monkeypatch.setenv("KAIROS_BIN", kairos_bin())
    run.install()
    import launch
    return launch


def test_a_launch_service_runs_its_processes_and_their_handlers(monkeypatch, tmp_path):
    launch = _service(monkeypatch)
    from launch.actions import ExecuteProcess, RegisterEventHandler
    from launch.event_handlers import OnProcessExit, OnProcessIO
    seen, said = [], []
    quitter = ExecuteProcess(cmd=["sh", "-c", "echo hello; exit 3"], name="quitter")
    ld = launch.LaunchDescription([
        RegisterEventHandler(OnProcessIO(target_action=quitter,
                                         on_stdout=lambda e: said.append(e.text))),
        RegisterEventHandler(OnProcessExit(target_action=quitter,
                                           on_exit=lambda e, c: seen.append(e.returncode))),
        quitter,
    ])
    ls = launch.LaunchService()
    ls.include_launch_description(ld)
    # A process that fails is a launch that ran: 0, as ROS 2's service returns.
    assert ls.run() == 0
    assert seen == [3]
    assert said == [b"hello\n"]
    assert quitter.process_details["name"] == "quitter-1"


def test_env_is_the_whole_environment_and_additional_env_adds_to_it(monkeypatch, tmp_path):
    launch = _service(monkeypatch)
    from launch.actions import ExecuteProcess
    monkeypatch.setenv("KAIROS_TEST_INHERITED", "from the caller")
    out = tmp_path / "env.txt"
    replaced = ExecuteProcess(cmd=["sh", "-c", f"env > {out}.replaced"],
                              env={"PATH": os.environ["PATH"], "ONLY": "this"})
    added = ExecuteProcess(cmd=["sh", "-c", f"env > {out}.added"],
                           additional_env={"ALSO": "that"})
    ls = launch.LaunchService()
    ls.include_launch_description(launch.LaunchDescription([replaced, added]))
    assert ls.run() == 0
    replaced_env = dict(line.split("=", 1) for line in
                        (tmp_path / "env.txt.replaced").read_text().splitlines() if "=" in line)
    added_env = dict(line.split("=", 1) for line in
                     (tmp_path / "env.txt.added").read_text().splitlines() if "=" in line)
    assert replaced_env.get("ONLY") == "this"
    assert "KAIROS_TEST_INHERITED" not in replaced_env
    assert added_env.get("ALSO") == "that"
    assert added_env.get("KAIROS_TEST_INHERITED") == "from the caller"
    assert replaced.process_details["env"]["ONLY"] == "this"
    assert "KAIROS_TEST_INHERITED" not in replaced.process_details["env"]
    assert added.process_details["env"]["KAIROS_TEST_INHERITED"] == "from the caller"


def test_respawn_stops_after_its_retries(monkeypatch):
    launch = _service(monkeypatch)
    from launch.actions import ExecuteProcess, RegisterEventHandler
    from launch.event_handlers import OnProcessExit
    exits = []
    flaky = ExecuteProcess(cmd=["sh", "-c", "exit 1"], respawn=True, respawn_max_retries=2)
    ls = launch.LaunchService()
    ls.include_launch_description(launch.LaunchDescription([
        RegisterEventHandler(OnProcessExit(target_action=flaky,
                                           on_exit=lambda e, c: exits.append(e.returncode))),
        flaky,
    ]))
    assert ls.run() == 0
    assert exits == [1, 1, 1]  # the first run and two retries


def test_execution_complete_comes_when_each_action_is_done(monkeypatch):
    """A log at once, a timer once it has fired, a respawned process once its last run
    has exited (ROS 2's ``OnExecutionComplete``)."""
    launch = _service(monkeypatch)
    from launch.actions import ExecuteProcess, LogInfo, RegisterEventHandler, TimerAction
    from launch.event_handlers import OnExecutionComplete, OnProcessExit
    order = []
    flaky = ExecuteProcess(cmd=["sh", "-c", "exit 1"], respawn=True, respawn_max_retries=1)
    log = LogInfo(msg="logged")
    timer = TimerAction(period=0.0, actions=[LogInfo(msg="fired")])
    handlers = [RegisterEventHandler(OnProcessExit(
        target_action=flaky, on_exit=lambda e, c: order.append("exit")))]
    for action, name in ((flaky, "flaky"), (log, "log"), (timer, "timer")):
        handlers.append(RegisterEventHandler(OnExecutionComplete(
            target_action=action, on_completion=lambda e, c, name=name: order.append(name))))
    ls = launch.LaunchService()
    ls.include_launch_description(launch.LaunchDescription([*handlers, log, timer, flaky]))
    assert ls.run() == 0
    assert sorted(order) == ["exit", "exit", "flaky", "log", "timer"], order
    assert order.index("log") < order.index("flaky")
    assert order[-1] == "flaky" and order[-2] == "exit", order
    with pytest.raises(TypeError):
        OnExecutionComplete(target_action="not an action", on_completion=lambda *a: None)


def test_launch_configurations_emulate_tty_and_argument_choices(monkeypatch, tmp_path):
    """``emulate_tty`` set as a launch configuration reaches every process (as ROS 2's);
    a default outside its argument's choices is refused when the argument is made."""
    launch = _service(monkeypatch)
    from launch.actions import DeclareLaunchArgument, ExecuteProcess, SetLaunchConfiguration
    out = tmp_path / "tty.txt"
    ls = launch.LaunchService()
    ls.include_launch_description(launch.LaunchDescription([
        SetLaunchConfiguration("emulate_tty", "true"),
        ExecuteProcess(cmd=["sh", "-c", f"[ -t 1 ] && echo tty > {out}"]),
    ]))
    assert ls.run() == 0
    assert out.read_text() == "tty\n"
    with pytest.raises(RuntimeError, match="not in provided choices"):
        DeclareLaunchArgument("mode", default_value="fast", choices=["slow", "safe"])


def test_shutdown_from_another_thread_ends_a_launch_kept_alive(monkeypatch):
    import threading
    launch = _service(monkeypatch)
    from launch.actions import ExecuteProcess, RegisterEventHandler
    from launch.event_handlers import OnProcessStart, OnShutdown
    reasons = []
    sleeper = ExecuteProcess(cmd=["sleep", "3600"])
    ls = launch.LaunchService()
    ls.include_launch_description(launch.LaunchDescription([
        RegisterEventHandler(OnProcessStart(
            target_action=sleeper,
            on_start=lambda e, c: threading.Thread(target=ls.shutdown).start())),
        RegisterEventHandler(OnShutdown(on_shutdown=lambda e, c: reasons.append(e.reason))),
        sleeper,
    ]))
    assert ls.run(shutdown_when_idle=False) == 0
    assert reasons == ["LaunchService.shutdown() was called"]


def test_each_shutdown_event_reaches_the_handlers_with_its_own_reason(monkeypatch):
    launch = _service(monkeypatch)
    from launch.actions import ExecuteProcess, RegisterEventHandler, Shutdown, TimerAction
    from launch.event_handlers import OnShutdown
    reasons = []
    ls = launch.LaunchService()
    ls.include_launch_description(launch.LaunchDescription([
        ExecuteProcess(cmd=["sleep", "3600"]),
        RegisterEventHandler(OnShutdown(on_shutdown=lambda e, c: reasons.append(e.reason))),
        TimerAction(period=0.1, actions=[Shutdown(reason="first")]),
        # Not cancelled by the stop: it keeps the launch until it fires, within the
        # stop's bound, and its Shutdown reaches the handlers too.
        TimerAction(period=0.5, actions=[Shutdown(reason="second")],
                    cancel_on_shutdown=False),
    ]))
    assert ls.run() == 0
    assert reasons == ["first", "second"]


def test_a_launch_service_without_the_kairos_binary_says_what_to_install(monkeypatch):
    run.install()
    import launch
    monkeypatch.setenv("KAIROS_BIN", "")
    monkeypatch.setenv("PATH", "/nonexistent")
    ls = launch.LaunchService()
    with pytest.raises(RuntimeError, match="no kairos binary was found"):
        ls.run()


def test_type_utils_read_text_as_ros_2_does():
    run.install()
    from typing import List

    from launch.utilities.type_utils import (
        coerce_list, coerce_to_type, get_typed_value, is_instance_of)
    # YAML's rules when no type is asked for; a list holds one type.
    assert coerce_to_type("on") is True and coerce_to_type("'1'") == "1"
    assert coerce_to_type(".3") == 0.3 and coerce_to_type("[asd, bsd]") == ["asd", "bsd"]
    assert coerce_to_type("[asd, 2.0]", can_be_str=True) == ["asd", 2.0]
    for bad in ("[1, 2.0]", "{1}", "''1''"):
        with pytest.raises(ValueError):
            coerce_to_type(bad)
    # A type asked for.
    assert coerce_to_type("'1'", data_type=str) == "'1'"
    assert coerce_to_type("0", data_type=bool) is False
    with pytest.raises(ValueError):
        coerce_to_type("1000.5", data_type=int)
    assert coerce_list(["asd", "1000"], int, can_be_str=True) == ["asd", 1000]
    with pytest.raises(ValueError):
        coerce_list(["1.", "1000"])
    with pytest.raises(TypeError):
        get_typed_value(["1", "2"], int)
    assert is_instance_of(["1", 2], List[int], can_be_str=True)
    with pytest.raises(ValueError):
        is_instance_of([1], List)


def test_run_async_s_shutdown_is_awaitable_and_nodes_of_one_name_are_counted(monkeypatch,
                                                                             capsys):
    import asyncio

    launch = _service(monkeypatch)
    from launch.actions import ExecuteProcess
    from launch_ros.actions import Node
    from launch_ros.utilities import get_node_name_count

    first = Node(executable="true", name="twin", namespace="ns")
    second = Node(executable="true", name="twin", namespace="ns")
    unnamed = Node(executable="true", namespace="ns")
    service = launch.LaunchService()
    service.include_launch_description(launch.LaunchDescription([
        first, second, unnamed, ExecuteProcess(cmd=["sleep", "60"], name="keeps_it_up")]))
    assert launch.LaunchService().shutdown() is None  # not running: nothing to await

    async def launch_then_stop():
        running = asyncio.ensure_future(service.run_async())
        for _ in range(6000):
            if service._running or running.done():
                break
            await asyncio.sleep(0.01)
        await service.shutdown()
        return await running

    assert asyncio.run(launch_then_stop()) == 0
    assert get_node_name_count(service.context, "/ns/twin") == 2
    assert "there are now at least 2 nodes with the name /ns/twin" in capsys.readouterr().out


def test_event_handlers_register_describe_and_unregister_as_ros_2_s(capsys):
    run.install()
    from launch import LaunchContext
    from launch.actions import LogInfo, RegisterEventHandler, UnregisterEventHandler
    from launch.event_handlers import OnProcessExit

    said = LogInfo(msg="it ended")
    handler = OnProcessExit(target_action=lambda action: True, on_exit=said)
    register = RegisterEventHandler(handler)
    assert [entities for _, entities in register.describe_conditional_sub_entities()] == \
        [[said]]
    context = LaunchContext()
    register.execute(context)
    UnregisterEventHandler(handler).execute(context)
    with pytest.raises(ValueError):
        UnregisterEventHandler(handler).execute(context)
    # A context of no launch logs to the launch logger.
    said.execute(context)
    assert "[INFO] [launch.user]: it ended" in capsys.readouterr().out


def test_a_description_source_with_nothing_to_load_says_so():
    run.install()
    from launch import LaunchContext, LaunchDescription, LaunchDescriptionSource
    with pytest.raises(RuntimeError, match="without a launch description"):
        LaunchDescriptionSource().get_launch_description(LaunchContext())
    given = LaunchDescription()
    source = LaunchDescriptionSource(given, "named")
    assert source.get_launch_description(LaunchContext()) is given
    assert source.location == "named"


def test_base_entities_conditions_and_normalizing_as_ros_2_s(capsys):
    run.install()
    from launch import Condition, LaunchContext, LaunchDescription, LaunchDescriptionEntity
    from launch.utilities import normalize_to_list_of_substitutions
    with pytest.raises(NotImplementedError):
        LaunchDescriptionEntity().describe()
    assert LaunchDescriptionEntity().get_asyncio_future() is None
    assert Condition().evaluate(LaunchContext()) is False
    for bad in (None, 1, [1.4142, "bar"], ["foo", ["bar"]]):
        with pytest.raises(TypeError):
            normalize_to_list_of_substitutions(bad)
    old = LaunchDescription([], deprecated_reason="use new.launch.py")
    assert old.deprecated and old.visit(LaunchContext()) == []
    assert "is deprecated: use new.launch.py" in capsys.readouterr().out
