"""ROS 2's ``launch_testing`` names under ``kairos.run``: the pieces a launch test uses
besides the run itself (which ``kairos launch-test`` does: crates/kairos-cli/tests/
launch_test.rs): output matching, the sequential checker's report, parametrized
descriptions, process lookup."""

import re
import unittest.mock

import pytest

from kairos import run


@pytest.fixture(autouse=True)
def _mapped():
    run.install()


def _events(outputs):
    """Recorded output events of one started process, as the launch records them."""
    from kairos.launch.actions import ExecuteProcess
    from kairos.launch.events.process import ProcessStdout
    from kairos.launch_testing import IoHandler
    action = ExecuteProcess(cmd=["talker", "--fast"])
    action.process_details = {"name": "talker-1", "cmd": ["talker", "--fast"]}
    handler = IoHandler()
    for text in outputs:
        handler.append(ProcessStdout(action=action, name="talker-1", cmd=["talker"], pid=1,
                                     text=text.encode()))
    return handler, action


def test_launch_testing_names_are_kairos_under_kairos_run():
    import launch_testing
    import launch_testing.actions
    import launch_testing.asserts
    from launch_testing.asserts.assert_output import assertInStdout  # ROS 2's module path
    import kairos.launch_testing
    assert launch_testing is kairos.launch_testing
    assert assertInStdout is kairos.launch_testing.asserts.assertInStdout
    assert launch_testing.asserts.EXIT_OK == 0
    with pytest.raises(ImportError):
        import launch_testing.no_such_module  # noqa: F401


def test_output_is_found_as_text_a_regex_or_parts_in_order():
    from launch_testing.asserts import assertInStdout
    handler, action = _events(["Starting\n", "Loop 1\nLoop 2\n", "\x1b[31mred\x1b[0m\n"])
    assertInStdout(handler, "Loop 2", action)
    assertInStdout(handler, re.compile(r"Loop \d"), "talker")
    assertInStdout(handler, ["Starting", "Loop 1", "red"], action)
    with pytest.raises(AssertionError, match="Did not find"):
        assertInStdout(handler, ["Loop 2", "Loop 1"], action)
    with pytest.raises(AssertionError):
        assertInStdout(handler, "Loop 1", action, output_filter=lambda t: t.replace("1", "x"))


def test_strict_matches_are_whole():
    from launch_testing.tools import build_line_match, build_text_match, expect_output
    assert build_text_match("abc", strict=True)("abc") == (0, 3)
    assert build_text_match("ab", strict=True)("abc") is None
    assert build_text_match(["a", "b"], strict=True)("ab") == (0, 2)
    assert build_text_match(["a", "c"], strict=True)("abc") is None
    assert build_line_match("x", strict=True)(["x", "x"]) == (0, 2)
    assert build_line_match(["a", "b"])(["0", "a", "1", "b"]) == (1, 4)
    assert expect_output(lines=["one", "two"], expected_text="one\ntwo", strict=True)
    with pytest.raises(ValueError):
        expect_output(text="a", lines=["a"], expected_text="a")


def test_the_sequential_checker_reports_the_lines_around_its_last_match():
    from launch_testing.asserts import SequentialTextChecker
    checker = SequentialTextChecker(["one\ntwo\nthree\n", "four\nfive\nsix\nseven\n"])
    checker.assertInStdout("two")
    checker.assertInStdout("five")
    with pytest.raises(AssertionError) as error:
        checker.assertInStdout("two")
    assert "'two' not found in sequence after previous match" in str(error.value)
    # Three lines either side of where "five" ended.
    assert error.value.args[0].endswith("three\nfour\nfive\nsix\nseven")


def test_a_parametrized_description_is_one_launch_per_value():
    import launch_testing
    seen = []

    @launch_testing.parametrize("arg_1, arg_2", [(1, 2), (3, 4)])
    def describe(arg_1, arg_2, extra):
        seen.append((arg_1, arg_2, extra))

    assert describe.__parametrized__
    launches = list(describe())
    assert [params for _, params in launches] == [{"arg_1": 1, "arg_2": 2},
                                                  {"arg_1": 3, "arg_2": 4}]
    for index, (launch, _) in enumerate(launches):
        launch(extra=index)
    assert seen == [(1, 2, 0), (3, 4, 1)]


def test_a_process_is_named_by_its_action_or_its_name_and_arguments():
    from launch_testing.util import NO_CMD_ARGS, NoMatchingProcessException, resolveProcesses
    handler, action = _events(["hello\n"])
    assert resolveProcesses(handler, process=action) == [action]
    assert resolveProcesses(handler, process="talker", cmd_args=["--fast"]) == [action]
    with pytest.raises(NoMatchingProcessException, match="Procs: talker-1 --fast"):
        resolveProcesses(handler, process="talker", cmd_args=NO_CMD_ARGS)
    with pytest.raises(TypeError):
        resolveProcesses(handler, process=7)


def test_a_launch_configuration_default_that_is_not_text_is_its_str():
    # geometry2's test_buffer_client.launch.py: LaunchConfiguration('x', default=2).
    from launch.substitutions import LaunchConfiguration
    context = unittest.mock.Mock(launch_configurations={})
    assert LaunchConfiguration("sigterm_timeout", default=2).perform(context) == "2"
    assert LaunchConfiguration("x", default=["a", 1]).perform(context) == "a1"
