"""A Python node's parameters, with rclpy's rules: declaration, static typing, descriptors
(ranges, read-only), the three kinds of set callbacks, atomic sets, the parameter events
and the six parameter services another node (or `ros2 param`) calls; and where their
values come from: the node's own ROS arguments, its context's, a parameter file."""

import pytest

from conftest import LIMIT
import kairos
from kairos.context import Context
from kairos.exceptions import (
    InvalidParameterTypeException,
    InvalidParameterValueException,
    ParameterAlreadyDeclaredException,
    ParameterImmutableException,
    ParameterNotDeclaredException,
    ParameterUninitializedException,
    RCLInvalidROSArgsError,
    UnknownROSArgsError,
)
from kairos.executors import SingleThreadedExecutor
from kairos.node import Node
from kairos.parameter import Parameter, parameter_dict_from_yaml_file
from kairos.rcl_interfaces.msg import (
    FloatingPointRange,
    IntegerRange,
    ParameterDescriptor,
    ParameterEvent,
    SetParametersResult,
)
from kairos.rcl_interfaces.srv import GetParameters, ListParameters, SetParameters


def test_a_declared_parameter_keeps_its_type_its_range_and_read_only(session):
    node = Node("p_typed", parameter_overrides=[Parameter("count", value="many")])
    speed = node.declare_parameter("speed", 5, ParameterDescriptor(
        integer_range=[IntegerRange(from_value=0, to_value=10, step=5)]))
    assert (speed.type_, speed.value) == (Parameter.Type.INTEGER, 5)

    results = node.set_parameters([
        Parameter("speed", value=10),      # the upper bound
        Parameter("speed", value=7),       # not on a step
        Parameter("speed", value=15),      # out of range
        Parameter("speed", value=2.5),     # another type
    ])
    assert [r.successful for r in results] == [True, False, False, False]
    assert "not a valid step" in results[1].reason
    assert "out of range" in results[2].reason
    assert "Wrong parameter type" in results[3].reason
    assert node.get_parameter("speed").value == 10

    node.declare_parameter("gain", 0.5, ParameterDescriptor(
        floating_point_range=[FloatingPointRange(from_value=0.0, to_value=1.0, step=0.25)]))
    assert node.set_parameters([Parameter("gain", value=0.75)])[0].successful
    assert not node.set_parameters([Parameter("gain", value=0.8)])[0].successful

    node.declare_parameter("frame", "map", ParameterDescriptor(read_only=True))
    refused = node.set_parameters([Parameter("frame", value="odom")])[0]
    assert not refused.successful and "read-only" in refused.reason
    with pytest.raises(ParameterImmutableException):
        node.undeclare_parameter("frame")

    with pytest.raises(ParameterAlreadyDeclaredException):
        node.declare_parameter("speed", 1)
    # An override of another type than the default's is refused when declared.
    with pytest.raises(InvalidParameterTypeException):
        node.declare_parameter("count", 3)
    with pytest.raises(InvalidParameterValueException):
        node.declare_parameter("too_fast", 20, ParameterDescriptor(
            integer_range=[IntegerRange(from_value=0, to_value=10, step=1)]))
    assert not node.has_parameter("too_fast")

    # Typed but not set yet: reading it is an error that says so, not None.
    node.declare_parameter("port", Parameter.Type.STRING)
    with pytest.raises(ParameterUninitializedException):
        node.get_parameter("port")
    assert node.get_parameter_or("port", Parameter("port", value="ttyS0")).value == "ttyS0"


def test_undeclared_parameters_are_refused_unless_the_node_allows_them(session):
    strict = Node("p_strict")
    with pytest.raises(ParameterNotDeclaredException):
        strict.get_parameter("missing")
    with pytest.raises(ParameterNotDeclaredException):
        strict.set_parameters([Parameter("missing", value=1)])

    loose = Node("p_loose", allow_undeclared_parameters=True)
    assert loose.get_parameter("missing").type_ == Parameter.Type.NOT_SET
    assert loose.set_parameters([Parameter("new", value=1)])[0].successful
    # Dynamically typed: another type is accepted; NOT_SET takes it away.
    assert loose.set_parameters([Parameter("new", value="one")])[0].successful
    assert loose.set_parameters([Parameter("new")])[0].successful
    assert not loose.has_parameter("new")


def test_callbacks_run_in_order_and_a_refusal_changes_nothing(session):
    node = Node("p_callbacks")
    node.declare_parameter("a", 1)
    node.declare_parameter("b", 1)
    seen = []

    def pre(parameters):
        seen.append(("pre", [p.name for p in parameters]))
        # Setting `a` also sets `b`.
        extra = [Parameter("b", value=p.value) for p in parameters if p.name == "a"]
        return parameters + extra

    def on_set(parameters):
        seen.append(("on", [p.name for p in parameters]))
        ok = all(p.value < 100 for p in parameters)
        return SetParametersResult(successful=ok, reason="" if ok else "too big")

    def post(parameters):
        seen.append(("post", [p.name for p in parameters]))

    node.add_pre_set_parameters_callback(pre)
    node.add_on_set_parameters_callback(on_set)
    node.add_post_set_parameters_callback(post)

    assert node.set_parameters_atomically([Parameter("a", value=5)]).successful
    assert (node.get_parameter("a").value, node.get_parameter("b").value) == (5, 5)
    assert seen == [("pre", ["a"]), ("on", ["a", "b"]), ("post", ["a", "b"])]

    seen.clear()
    refused = node.set_parameters_atomically([Parameter("a", value=500)])
    assert (refused.successful, refused.reason) == (False, "too big")
    assert (node.get_parameter("a").value, node.get_parameter("b").value) == (5, 5)
    assert seen == [("pre", ["a"]), ("on", ["a", "b"])]

    node.remove_pre_set_parameters_callback(pre)
    node.remove_on_set_parameters_callback(on_set)
    node.remove_post_set_parameters_callback(post)
    seen.clear()
    assert node.set_parameters([Parameter("a", value=500)])[0].successful
    assert seen == []


def test_parameter_services_and_events_serve_another_node(session):
    """The six services answer a client as `ros2 param` would call them, and every change
    is published on /parameter_events."""
    server = Node("p_server", namespace="/robot")
    server.declare_parameter("rate", 10)
    server.declare_parameter("sensor.range", 4.5)
    client_node = Node("p_client")
    events = []
    client_node.create_subscription(
        ParameterEvent, "/parameter_events",
        lambda e: events.append(e) if e.node == "/robot/p_server" else None, 100)
    executor = SingleThreadedExecutor()
    executor.add_node(server)
    executor.add_node(client_node)

    def call(srv_type, name, request):
        client = client_node.create_client(srv_type, name)
        assert client.wait_for_service(timeout_sec=LIMIT)
        future = client.call_async(request)
        executor.spin_until_future_complete(future, timeout_sec=LIMIT)
        assert future.done(), f"{name} did not answer within {LIMIT} s"
        return future.result()

    listed = call(ListParameters, "/robot/p_server/list_parameters", ListParameters.Request())
    assert {"rate", "sensor.range", "use_sim_time"} <= set(listed.result.names)
    assert "sensor" in listed.result.prefixes

    answer = call(SetParameters, "/robot/p_server/set_parameters", SetParameters.Request(
        parameters=[Parameter("rate", value=20).to_parameter_msg(),
                    Parameter("rate", value="fast").to_parameter_msg(),
                    Parameter("undeclared", value=1).to_parameter_msg()]))
    assert [r.successful for r in answer.results] == [True, False, False]
    assert server.get_parameter("rate").value == 20

    got = call(GetParameters, "/robot/p_server/get_parameters",
               GetParameters.Request(names=["rate", "sensor.range"]))
    assert [(v.integer_value, v.double_value) for v in got.values] == [(20, 0.0), (0, 4.5)]

    for _ in range(100):
        if any(p.name == "rate" for e in events for p in e.changed_parameters):
            break
        executor.spin_once(timeout_sec=0.1)
    changed = [p for e in events for p in e.changed_parameters if p.name == "rate"]
    assert changed and changed[-1].value.integer_value == 20, events
    executor.shutdown()


def test_a_nodes_own_arguments_win_over_its_contexts(tmp_path):
    params = tmp_path / "params.yaml"
    params.write_text(
        "/**:\n  ros__parameters:\n    everywhere: 1\n    rate: 1\n"
        "/arm/driver:\n  ros__parameters:\n    rate: 2\n    limits:\n      max: 3.5\n")
    context = Context()
    kairos.init(args=["prog", "--ros-args", "-r", "__ns:=/arm", "-p", "mode:=auto",
                      "--params-file", str(params)], context=context)
    try:
        node = Node("driver", context=context, cli_args=["--ros-args", "-p", "mode:=manual"],
                    automatically_declare_parameters_from_overrides=True)
        assert node.get_fully_qualified_name() == "/arm/driver"
        values = {name: node.get_parameter(name).value
                  for name in ("everywhere", "rate", "limits.max", "mode")}
        assert values == {"everywhere": 1, "rate": 2, "limits.max": 3.5, "mode": "manual"}
        assert node.resolve_topic_name("~/state") == "/arm/driver/state"

        alone = Node("driver", context=context, use_global_arguments=False,
                     cli_args=["--ros-args", "-r", "state:=/elsewhere"])
        assert alone.get_fully_qualified_name() == "/driver"
        assert alone.resolve_topic_name("state") == "/elsewhere"
        assert alone.resolve_topic_name("state", only_expand=True) == "/state"
        with pytest.raises(RCLInvalidROSArgsError, match="Failed to parse ROS arguments"):
            Node("bad", context=context, cli_args=["--ros-args", "-r", "not-a-remap"])
        with pytest.raises(UnknownROSArgsError, match="--my-flag"):
            Node("bad", context=context, cli_args=["--ros-args", "--my-flag"])
    finally:
        kairos.shutdown(context=context)

    read = parameter_dict_from_yaml_file(str(params), target_nodes=["/arm/driver"])
    assert read["limits.max"].value.double_value == 3.5


def test_use_sim_time_moves_the_clock_only_when_the_set_is_accepted(session):
    node = Node("p_sim")
    clock = node.get_clock()
    assert not clock.ros_time_is_active
    assert not node.set_parameters([Parameter("use_sim_time", value=1)])[0].successful
    assert not clock.ros_time_is_active
    assert node.set_parameters([Parameter("use_sim_time", value=True)])[0].successful
    assert clock.ros_time_is_active
    assert node.set_parameters([Parameter("use_sim_time", value=False)])[0].successful
    assert not clock.ros_time_is_active


def test_a_parameter_client_and_an_event_handler_follow_another_node(session):
    """AsyncParameterClient sets another node's parameter; a ParameterEventHandler on a
    third node hears that exact parameter change; wait_for_message gets the next event."""
    from kairos.parameter_client import AsyncParameterClient
    from kairos.parameter_event_handler import ParameterEventHandler
    from kairos.wait_for_message import wait_for_message

    server = Node("pc_server", namespace="/pc")
    server.declare_parameter("gain", 1.0)
    asker = Node("pc_asker")
    watcher = Node("pc_watcher", namespace="/pc")
    heard = []
    handler = ParameterEventHandler(watcher)
    handle = handler.add_parameter_callback("gain", "pc_server", heard.append)
    executor = SingleThreadedExecutor()
    for node in (server, asker, watcher):
        executor.add_node(node)

    client = AsyncParameterClient(asker, "/pc/pc_server")
    assert client.wait_for_services(timeout_sec=LIMIT)
    future = client.set_parameters([Parameter("gain", value=2.5)])
    executor.spin_until_future_complete(future, timeout_sec=LIMIT)
    assert [r.successful for r in future.result().results] == [True]
    for _ in range(100):
        if heard:
            break
        executor.spin_once(timeout_sec=0.1)
    assert [(p.name, p.value.double_value) for p in heard] == [("gain", 2.5)]
    handler.remove_parameter_callback(handle)
    with pytest.raises(RuntimeError):
        handler.remove_parameter_callback(handle)
    executor.shutdown()

    # No executor spins these nodes now: wait_for_message makes one for its wait, and
    # its deadline holds when nothing comes.
    ok, msg = wait_for_message(ParameterEvent, asker, "/parameter_events", time_to_wait=0.2)
    assert (ok, msg) == (False, None)
