"""ROS 2's ``launch.frontend`` under ``kairos.run``: XML and YAML text read into launch
actions and substitutions as ROS 2's frontend reads them (ros2/launch's own frontend,
launch_xml and launch_yaml tests run through crates/kairos-py/conformance/run.py); here,
what kairos adds: errors that say where, and the same reading for random text."""

import io
import random

import pytest

from kairos import run


@pytest.fixture(autouse=True)
def _mapped():
    run.install()


def _description(text):
    from launch.frontend import Parser
    root, parser = Parser.load(io.StringIO(text))
    return parser.parse_description(root)


def test_xml_and_yaml_read_into_the_same_actions():
    from launch import LaunchContext
    from launch.actions import ExecuteProcess, GroupAction, SetLaunchConfiguration
    xml = _description("""<launch>
        <let name="who" value="world"/>
        <group scoped="false">
          <executable cmd="echo hello $(var who)" cwd="/" name="greeter" shell="true">
            <env name="A" value="$(var who)"/>
          </executable>
        </group>
      </launch>""")
    yaml = _description("""launch:
      - let: {name: who, value: world}
      - group:
          scoped: false
          children:
            - executable:
                cmd: echo hello $(var who)
                cwd: /
                name: greeter
                shell: true
                env: [{name: A, value: $(var who)}]
      """)
    for ld in (xml, yaml):
        let, group = ld.entities
        assert isinstance(let, SetLaunchConfiguration) and isinstance(group, GroupAction)
        context = LaunchContext()
        let.visit(context)
        (executable,) = group.execute(context)
        assert isinstance(executable, ExecuteProcess)
        assert executable.command(context) == ["echo", "hello", "world"]
        assert executable.shell is True
        ((name, value),) = executable.additional_env
        assert "".join(s.perform(context) for s in name) == "A"
        assert "".join(s.perform(context) for s in value) == "world"


@pytest.mark.parametrize("text, says", [
    ("$(env A", "')' closing $(env ...)"),
    ("$(1abc)", "a substitution's name"),
    ("$(env 'A)", "the closing '"),
    ("$(env  A)", "an argument"),
])
def test_malformed_substitutions_say_where(text, says):
    from launch.frontend.parse_substitution import parse_substitution
    with pytest.raises(ValueError) as raised:
        parse_substitution(text)
    assert says in str(raised.value)
    assert repr(text) in str(raised.value)


def test_an_unknown_substitution_or_entity_is_named():
    from launch.frontend.parse_substitution import parse_substitution
    with pytest.raises(RuntimeError, match="Unknown substitution: nope"):
        parse_substitution("$(nope x)")
    with pytest.raises(RuntimeError, match="Unrecognized entity of the type: nope"):
        _description("<launch><nope/></launch>")


def test_a_misspelt_attribute_or_child_is_an_error_naming_it():
    for text in ("<launch><log message='hi' colour='red'/></launch>",
                 "launch:\n  - log: {message: hi, colour: red}\n"):
        with pytest.raises(ValueError, match="colour"):
            _description(text)


def test_substitution_arguments_count():
    from launch.frontend.parse_substitution import parse_substitution
    with pytest.raises(TypeError, match="env substitution expects 1 to 2 argument"):
        parse_substitution("$(env a b c)")


def test_text_without_substitutions_reads_as_itself():
    """Random text of the characters that matter to the grammar, with no ``$(``: one
    text substitution, escapes removed, nothing lost or added."""
    from launch.frontend.parse_substitution import (
        parse_substitution, replace_escaped_characters)
    rng = random.Random(56)
    alphabet = "ab $()'\"\\,-_"
    for _ in range(2000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randrange(0, 16)))
        if "$(" in text.replace("\\$(", ""):
            continue
        parsed = parse_substitution(text)
        performed = "".join(s.perform(None) for s in parsed)
        assert performed == (replace_escaped_characters(text) if text else ""), text


def test_nested_substitutions_read_as_values():
    """Random nesting of ``$(var ...)`` inside arguments and quotes performs as the
    value built the same way by hand."""
    from launch import LaunchContext
    from launch.frontend.parse_substitution import parse_substitution
    rng = random.Random(5656)
    context = LaunchContext()
    context.launch_configurations.update({"a": "A", "b": "B", "c": "C"})

    def make(depth, may_quote=True):
        """(text, value) of a random substitution; a quoted argument only where the
        grammar has them (not inside another quoted one)."""
        if depth == 0 or rng.random() < 0.4:
            name = rng.choice("abc")
            return f"$(var {name})", name.upper()
        quote = rng.choice(["", "'", '"']) if may_quote else ""
        inner, value = make(depth - 1, may_quote and not quote)
        if quote:
            return f"$(var zz {quote}x {inner}y{quote})", f"x {value}y"
        return f"$(var zz {inner}y)", f"{value}y"

    for _ in range(300):
        text, value = make(4)
        assert "".join(s.perform(context) for s in parse_substitution(text)) == value, text
