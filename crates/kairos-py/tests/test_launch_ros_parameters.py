"""A node's parameters as launch_ros reads them (``normalize_parameters`` then
``evaluate_parameters``; ROS 2's own tests of those run through crates/kairos-py/
conformance/run.py), and what kairos makes of them: the node's command line."""

import io

import pytest

from kairos import run


@pytest.fixture(autouse=True)
def _mapped():
    run.install()


def _ros_arguments(node, context):
    words = node.ros_arguments_for(context)
    return [f"{a} {b}" for a, b in zip(words[1::2], words[2::2])]


def test_an_xml_node_s_parameters_and_remaps_reach_its_command_line():
    from launch import LaunchContext
    from launch.frontend import Parser
    root, parser = Parser.load(io.StringIO("""<launch>
        <node exec="talker" name="n" namespace="ns">
          <param name="rate" value="10"/>
          <param name="group">
            <param name="names" value="x, y" value-sep=", "/>
            <param name="label" value="007" type="str"/>
          </param>
          <remap from="chatter" to="talk"/>
        </node></launch>"""))
    (node,) = parser.parse_description(root).entities
    args = _ros_arguments(node, LaunchContext())
    assert "-r __node:=n" in args and "-r __ns:=/ns" in args
    assert "-p rate:=10" in args
    assert '-p group.names:=["x", "y"]' in args
    assert '-p group.label:="007"' in args
    assert "-r chatter:=talk" in args


def test_substitution_results_are_read_as_yaml_plain_text_is_not():
    from launch import LaunchContext
    from launch.substitutions import TextSubstitution
    from launch_ros.utilities import evaluate_parameters, normalize_parameters
    context = LaunchContext()
    (values,) = evaluate_parameters(context, normalize_parameters(
        [{"text": "off", "substituted": TextSubstitution(text="off"),
          "nested": {"list": [TextSubstitution(text="[1, 2]")]}}]))
    assert values == {"text": "off", "substituted": False, "nested.list": (1, 2)}


def test_a_value_no_node_can_take_is_an_error_naming_the_parameter():
    from launch import LaunchContext
    from launch.substitutions import TextSubstitution
    from launch_ros.utilities import evaluate_parameters, normalize_parameters
    for value in ([1, "a"], TextSubstitution(text="{a: 1}")):
        with pytest.raises(TypeError, match='"mixed"'):
            evaluate_parameters(LaunchContext(), normalize_parameters([{"mixed": value}]))
    with pytest.raises(TypeError, match="Expecting list of parameters"):
        normalize_parameters({"not": "a list"})


def test_a_parameter_file_s_substitutions_use_the_frontend_grammar(tmp_path):
    from launch import LaunchContext
    from launch_ros.parameter_descriptions import ParameterFile
    source = tmp_path / "params.yaml"
    source.write_text("/**:\n  ros__parameters:\n    who: '$(var who)'\n"
                      "    home: \"$(env HOME_FOR_TEST 'no home')\"\n")
    context = LaunchContext()
    context.launch_configurations["who"] = "robot"
    description = ParameterFile(str(source), allow_substs=True)
    copy = description.evaluate(context)
    assert copy != source
    assert copy.read_text() == ("/**:\n  ros__parameters:\n    who: 'robot'\n"
                                "    home: \"no home\"\n")
    description.cleanup()
    assert not copy.exists()
    assert ParameterFile(str(source)).evaluate(context) == source


def test_a_node_refuses_what_no_node_could_take_when_it_is_made():
    from launch_ros.actions import Node

    def node(**kwargs):
        return Node(package="p", executable="e", name="n", namespace="ns", **kwargs)

    with pytest.raises(TypeError, match="not a mapping"):
        node(remappings={"chatter": "new_chatter"})
    with pytest.raises(TypeError, match="tuple"):
        node(remappings=[{"chatter": "new_chatter"}])
    with pytest.raises(TypeError, match="nested lists"):
        node(parameters=[{"group": {"param": [1, 2, [3, 4]]}}])
    with pytest.raises(TypeError, match=r"not int \(5\)"):
        node(parameters=[{"group": {5: "x"}}])


def test_typed_parameters_remaps_and_names_as_launch_ros_expands_them(monkeypatch):
    from typing import List

    from launch import LaunchContext
    from launch.substitutions import EnvironmentVariable
    from launch_ros.actions import Node
    from launch_ros.parameter_descriptions import Parameter

    monkeypatch.setenv("PARAM2", "param2")
    monkeypatch.setenv("TOPIC", "chatter")
    node = Node(package="p", executable="e", name="n", namespace="ns",
                remappings=[(EnvironmentVariable("TOPIC"), ["new_", EnvironmentVariable("TOPIC")])],
                parameters=[
                    Parameter(name="as_text", value="42", value_type=str),
                    Parameter(name=EnvironmentVariable("PARAM2"),
                              value=[[EnvironmentVariable("PARAM2")], "_value"],
                              value_type=List[str]),
                    Parameter(name="plain", value=[1.5, 2.5])])
    context = LaunchContext()
    assert node.ros_arguments_for(context)[:3] == ["--ros-args", "-r", "__node:=n"]
    node.ros_arguments = ["--log-level", "debug"]
    # The node's own ROS arguments first, as launch_ros writes them.
    assert node.ros_arguments_for(context)[:3] == ["--ros-args", "--log-level", "debug"]
    node.ros_arguments = None
    words = _ros_arguments(node, context)
    # A str-typed value stays text (quoted, or YAML would read 42 as a number).
    assert words[2:] == ['-p as_text:="42"', '-p param2:=["param2", "_value"]',
                         "-p plain:=[1.5, 2.5]", "-r chatter:=new_chatter"], words
    assert node._Node__expanded_remappings == [("chatter", "new_chatter")]
    assert [is_file for _, is_file in node._Node__expanded_parameter_arguments] == [False] * 3
    assert node.is_node_name_fully_specified()
    unnamed = Node(package="p", executable="e", namespace="ns")
    unnamed._perform_substitutions(context)
    assert not unnamed.is_node_name_fully_specified()


def test_parameter_values_are_checked_when_made_and_read_once_when_evaluated():
    from typing import List

    from launch import LaunchContext
    from launch.substitutions import TextSubstitution
    from launch_ros.parameter_descriptions import Parameter, ParameterValue

    with pytest.raises(TypeError):
        ParameterValue("1", value_type=int)
    typed = ParameterValue(["[", TextSubstitution(text="1, 2"), "]"], value_type=List[int])
    assert typed.evaluate(LaunchContext()) == [1, 2] and typed.value == [1, 2]
    with pytest.raises(ValueError):
        ParameterValue(TextSubstitution(text="[1, asd, 3]")).evaluate(LaunchContext())
    named = Parameter(name=["my_", TextSubstitution(text="param")], value="x")
    assert named.evaluate(LaunchContext()) == ("my_param", "x")
    assert named.name == "my_param"
