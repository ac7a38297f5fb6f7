"""The driver of a launch test, run by ``kairos launch-test FILE`` as ``python3 -m
kairos.launch_testing.driver [--run N] [--junit-xml PATH] FILE [name:=value ...]``.

It is the launch driver (``kairos.launch.driver``: the launcher owns the processes and
the bounded stop) with ``launch_test``'s runner on top:
- the file's ``generate_test_description()`` is evaluated as a launch file's description;
  a parametrized one is several launches, and this driver runs launch ``--run N`` of them
  (it tells the launcher how many there are);
- the tests that run during the launch run on a thread of their own once ``ReadyToTest``
  is reached; the launch's events fill ``proc_info`` and ``proc_output`` from the
  driver's loop, and the tests' requests (shut down, launch a process) reach that loop
  through a pipe, so the loop alone talks to the launcher;
- when those tests end, the launch is shut down; once the launcher has stopped every
  process and closed this driver's input, the post-shutdown tests run on what was
  recorded, and the exit status says how the tests went: 0 passed, 1 failed, 2 the file
  cannot be a launch test.
"""

import argparse
import functools
import inspect
import os
import sys
import threading
import time
import traceback
import unittest
import xml.etree.ElementTree as ET

from kairos.launch import driver as launch_driver
from kairos.launch._core import InvalidLaunchFileError, eprint
from kairos.launch.events import Shutdown
from kairos.launch.events.process import ProcessExited, ProcessIO, ProcessStarted
from kairos.launch.launch_description import LaunchDescription
from kairos.launch_testing.actions import ReadyToTest
from kairos.launch_testing.io_handler import ActiveIoHandler
from kairos.launch_testing.proc_info_handler import ActiveProcInfoHandler

#: How long the tests wait for ``ReadyToTest`` unless the description says otherwise.
READY_TIMEOUT = 15.0


class LaunchServiceProxy:
    """What a test gets as ``launch_service``: it can shut the launch down and emit
    events into it (``launch_testing.tools.launch_process`` includes a process so)."""

    def __init__(self, driver):
        self._driver = driver

    @property
    def context(self):
        return self._driver.context

    def shutdown(self, force_sync=False):
        self._driver.wake.put(("shutdown", "a test shut the launch down"))

    def emit_event(self, event):
        self._driver.wake.put(("event", event))


class _Result(unittest.TextTestResult):
    """unittest's text result, also keeping each test's outcome and time for the report."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.outcomes = []
        self._started = {}

    def startTest(self, test):  # noqa: N802
        self._started[test] = time.monotonic()
        super().startTest(test)

    def _record(self, test, outcome, detail=""):
        took = time.monotonic() - self._started.get(test, time.monotonic())
        self.outcomes.append((test, outcome, detail, took))

    def addSuccess(self, test):  # noqa: N802
        super().addSuccess(test)
        self._record(test, "passed")

    def addFailure(self, test, err):  # noqa: N802
        super().addFailure(test, err)
        self._record(test, "failure", self.failures[-1][1])

    def addError(self, test, err):  # noqa: N802
        super().addError(test, err)
        self._record(test, "error", self.errors[-1][1])

    def addSkip(self, test, reason):  # noqa: N802
        super().addSkip(test, reason)
        self._record(test, "skipped", reason)

    def addExpectedFailure(self, test, err):  # noqa: N802
        super().addExpectedFailure(test, err)
        self._record(test, "passed")

    def addUnexpectedSuccess(self, test):  # noqa: N802
        super().addUnexpectedSuccess(test)
        self._record(test, "failure", "unexpected success")


def _run_suite(suite):
    runner = unittest.TextTestRunner(stream=sys.stderr, verbosity=2, resultclass=_Result)
    return runner.run(suite)


class _Loader(unittest.TestLoader):
    """Loads either the tests that run during the launch or the post-shutdown ones, each
    class as a subclass of its own (binding the tests' arguments changes the class)."""

    def __init__(self, post_shutdown):
        super().__init__()
        self.post_shutdown = post_shutdown

    def loadTestsFromTestCase(self, case):  # noqa: N802
        if bool(getattr(case, "__post_shutdown_test__", False)) != self.post_shutdown:
            return self.suiteClass()
        isolated = type(case.__name__, (case,), {"__module__": case.__module__})
        return super().loadTestsFromTestCase(isolated)


def _tests(suite):
    if isinstance(suite, unittest.TestSuite):
        for test in suite:
            yield from _tests(test)
    else:
        yield suite


def _bind(function, values):
    """``function`` with the ``values`` whose names are among its parameters bound."""
    try:
        parameters = inspect.signature(function).parameters
    except (TypeError, ValueError):
        return function
    wanted = {name: value for name, value in values.items() if name in parameters}
    return functools.partial(function, **wanted) if wanted else function


def _bind_suite(suite, values, attributes):
    """Gives each test of ``suite`` the ``values`` its methods name as arguments, and
    ``attributes`` as attributes of its class (``self.proc_info``, as ROS 2 still does)."""
    classes = []
    for test in _tests(suite):
        if type(test) not in classes:
            classes.append(type(test))
        name = test._testMethodName
        setattr(test, name, _bind(getattr(test, name), values))
        test.setUp = _bind(test.setUp, values)
        test.tearDown = _bind(test.tearDown, values)
    for case in classes:
        for name, value in attributes.items():
            setattr(case, name, value)
        case.setUpClass = _bind(case.setUpClass, values)
        case.tearDownClass = _bind(case.tearDownClass, values)


def _find_ready(entities):
    for entity in entities or []:
        if isinstance(entity, ReadyToTest):
            yield entity
        describe = getattr(entity, "describe_sub_entities", None)
        yield from _find_ready(describe() if describe else [])
        get = getattr(entity, "get_sub_entities", None)
        if get is not None and describe is None:
            yield from _find_ready(get())
        for _, conditional in getattr(entity, "describe_conditional_sub_entities",
                                      lambda: [])():
            yield from _find_ready(conditional)
        actions = getattr(entity, "actions", None)  # TimerAction's
        if isinstance(actions, (list, tuple)):
            yield from _find_ready(actions)


def parametrizations(generate):
    """The launches a test description is: each one's description function and the
    values it was given (``launch_testing.parametrize``)."""
    if not getattr(generate, "__parametrized__", False):
        return [(generate, {})]
    launches = list(generate())
    if not launches:
        raise InvalidLaunchFileError("parametrize: no values to run the test with")
    return launches


class TestDriver(launch_driver.Driver):
    def __init__(self, file, argv, out, run_index=0):
        super().__init__(file, argv, out)
        self.run_index = run_index
        self.params = {}
        self.proc_info = ActiveProcInfoHandler()
        self.proc_output = ActiveIoHandler()
        self.ready_to_test = threading.Event()
        self.tests_done = threading.Event()
        self.keep_alive = False
        self.ready_timeout = READY_TIMEOUT
        self.wake = launch_driver.ThreadRequests(self.on_wake)
        self.add_source(self.wake)
        self.active = unittest.TestSuite()
        self.post = unittest.TestSuite()
        self.results = []
        self.ended_early = False

    # -- the launch's side
    def wants_io(self):
        return True

    def dispatch(self, event):
        if isinstance(event, ProcessStarted):
            self.proc_info.append(event)
            self.proc_output.track(event.process_name)
        elif isinstance(event, ProcessExited):
            self.proc_info.append(event)
        elif isinstance(event, ProcessIO):
            self.proc_output.append(event)
        super().dispatch(event)

    def busy(self):
        # Kept alive for the tests, until they are done or the launch stops.
        waiting = (self.keep_alive and not self.tests_done.is_set()
                   and not self.context.is_shutdown)
        self.send({"op": "busy", "busy": self.timers_pending() or waiting, "seen": self.seen})

    def on_wake(self, request):
        kind, value = request
        if kind == "shutdown":
            if not self.context.is_shutdown:
                self.emit(Shutdown(reason=value))
        elif kind == "event":
            self.emit(value)

    def evaluate(self):
        from kairos.launch.launch_description_sources import load_python_launch_file
        module = load_python_launch_file(self.file)
        generate = getattr(module, "generate_test_description", None)
        if generate is None:
            raise InvalidLaunchFileError(
                f"{self.file} is not a launch test: it has no generate_test_description() "
                "(a launch file, with generate_launch_description(), runs with kairos launch)")
        runs = parametrizations(generate)
        if len(runs) > 1:
            self.send({"op": "runs", "count": len(runs)})
        if self.run_index >= len(runs):
            raise InvalidLaunchFileError(
                f"run {self.run_index} asked of a test description of {len(runs)} runs")
        describe, self.params = runs[self.run_index]
        self.keep_alive = bool(getattr(generate, "__markers__", {}).get("keep_alive"))
        self.ready_timeout = float(getattr(generate, "__ready_to_test_action_timeout__",
                                           READY_TIMEOUT))
        arguments = {}
        takes_ready_fn = "ready_fn" in inspect.signature(describe).parameters
        if takes_ready_fn:
            arguments["ready_fn"] = self.ready_to_test.set
        result = describe(**arguments)
        description, test_context = result if isinstance(result, tuple) else (result, {})
        if not isinstance(description, LaunchDescription):
            raise InvalidLaunchFileError(
                f"generate_test_description() returned {type(description).__name__}, not a "
                "LaunchDescription (or a LaunchDescription and a dict)")
        readies = list(_find_ready(description.entities))
        if not readies and not takes_ready_fn:
            raise InvalidLaunchFileError(
                "generate_test_description() must return a LaunchDescription containing a "
                "ReadyToTest action (launch_testing.actions.ReadyToTest()): the tests start "
                "when it is reached")
        for ready in readies:
            ready._add_callback(self.ready_to_test.set)

        test_args = {name: value for name, value in
                     (arg.partition(":=")[::2] for arg in self.argv)}
        self.active = _Loader(False).loadTestsFromModule(module)
        self.post = _Loader(True).loadTestsFromModule(module)
        values = dict(test_context or {}, **self.params)
        live = {"launch_service": LaunchServiceProxy(self), "proc_info": self.proc_info,
                "proc_output": self.proc_output, "test_args": test_args}
        _bind_suite(self.active, dict(values, **live), live)
        recorded = {"proc_info": self.proc_info._proc_info_handler,
                    "proc_output": self.proc_output._io_handler, "test_args": test_args}
        _bind_suite(self.post, dict(values, **recorded), recorded)

        self.evaluate_description(description)
        threading.Thread(target=self.run_active_tests, name="launch-test-active",
                         daemon=True).start()

    # -- the tests' side
    def run_active_tests(self):
        if not self.ready_to_test.wait(self.ready_timeout):
            eprint(f"Timed out waiting for processes to start up: ReadyToTest was not "
                   f"reached within {self.ready_timeout:g} s")
            self.wake.put(("shutdown", "ReadyToTest was not reached in time"))
            return
        try:
            self.results.append(("during the launch", _run_suite(self.active)))
        finally:
            self.tests_done.set()
            self.wake.put(("shutdown", "the tests are done"))

    def conclude(self, junit_xml=None):
        """Runs the post-shutdown tests (when the tests during the launch ended), reports,
        and returns the exit status."""
        if not self.tests_done.is_set():
            self.ended_early = True
            eprint("Processes under test stopped before tests completed")
            self.summarise_failed_processes()
        else:
            self.results.append(("after shutdown", _run_suite(self.post)))
        if junit_xml:
            self.write_junit(junit_xml)
        counts = {"passed": 0, "failure": 0, "error": 0, "skipped": 0}
        for _, result in self.results:
            for _, outcome, _, _ in result.outcomes:
                counts[outcome] += 1
        failed = counts["failure"] + counts["error"]
        ran = sum(counts.values())
        where = f" [{self._params_text()}]" if self.params else ""
        if self.ended_early:
            eprint(f"kairos launch-test: {os.path.basename(self.file)}{where}: FAILED: the "
                   f"launch ended before its tests ({ran} ran)")
            return 1
        verdict = "FAILED" if failed else "passed"
        eprint(f"kairos launch-test: {os.path.basename(self.file)}{where}: {verdict}: "
               f"{counts['passed']} passed, {counts['failure']} failed, {counts['error']} "
               f"errors, {counts['skipped']} skipped")
        return 1 if failed else 0

    def summarise_failed_processes(self):
        for event in list(self.proc_info):
            if not isinstance(event, ProcessExited) or event.returncode == 0:
                continue
            eprint(f"Process '{event.process_name}' exited with {event.returncode}")
            eprint(f"##### '{event.process_name}' output #####")
            try:
                for io in self.proc_output[event.action]:
                    eprint(io.text.decode(errors="replace").rstrip("\n"))
            except KeyError:
                pass
            eprint("#" * (len(event.process_name) + 21))

    def _params_text(self):
        return ", ".join(f"{k}={v}" for k, v in self.params.items())

    def write_junit(self, path):
        """Writes (or, for a later run of a parametrized test, adds to) a JUnit report."""
        suite_name = os.path.basename(self.file)
        if self.params:
            suite_name += f"[{self._params_text()}]"
        root = ET.Element("testsuites")
        if self.run_index > 0 and os.path.exists(path):
            try:
                root = ET.parse(path).getroot()
            except ET.ParseError:
                pass
        suite = ET.SubElement(root, "testsuite", name=suite_name)
        counts = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
        for _, result in self.results:
            for test, outcome, detail, took in result.outcomes:
                counts["tests"] += 1
                case = ET.SubElement(suite, "testcase", classname=type(test).__qualname__,
                                     name=test._testMethodName, time=f"{took:.3f}")
                if outcome == "failure":
                    counts["failures"] += 1
                    ET.SubElement(case, "failure", message=detail.splitlines()[-1]
                                  if detail else "").text = detail
                elif outcome == "error":
                    counts["errors"] += 1
                    ET.SubElement(case, "error", message=detail.splitlines()[-1]
                                  if detail else "").text = detail
                elif outcome == "skipped":
                    counts["skipped"] += 1
                    ET.SubElement(case, "skipped", message=detail)
        if self.ended_early:
            counts["tests"] += 1
            counts["errors"] += 1
            case = ET.SubElement(suite, "testcase", classname=suite_name, name="launch")
            ET.SubElement(case, "error", message="the launch ended before its tests")
        for key, value in counts.items():
            suite.set(key, str(value))
        ET.ElementTree(root).write(path, encoding="unicode", xml_declaration=True)


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m kairos.launch_testing.driver")
    parser.add_argument("--run", type=int, default=0)
    parser.add_argument("--junit-xml")
    parser.add_argument("--log-dir")
    parser.add_argument("file")
    parser.add_argument("launch_arguments", nargs="*")
    options = parser.parse_args(sys.argv[1:] if argv is None else argv)
    if options.log_dir:
        launch_driver.use_log_dir(options.log_dir)
    out = launch_driver.take_protocol_stream()
    driver = TestDriver(options.file, options.launch_arguments, out, options.run)
    try:
        status = launch_driver.run_with_arguments(driver, options.launch_arguments)
        if status != 0:
            return status
        return driver.conclude(options.junit_xml)
    except BrokenPipeError:
        os._exit(1)
    except Exception:  # noqa: BLE001 - the run's own failure is reported, never hidden
        traceback.print_exc()
        return 1


if __name__ == "__main__":
    sys.exit(main())
