"""Where an included launch description comes from: a Python, XML or YAML file."""

from kairos._layout import stands_for_package

# ROS 2's launch.launch_description_sources.<module> paths are this module (see kairos._layout).
stands_for_package(__name__, (
    "any_launch_description_source", "any_launch_file_utilities",
    "frontend_launch_description_source", "frontend_launch_file_utilities",
    "python_launch_description_source", "python_launch_file_utilities"))

import importlib.util
import json
import os
import subprocess

from kairos.launch._core import (
    Action, InvalidLaunchFileError, normalize_to_list_of_substitutions,
    perform_substitutions)
from kairos.launch.launch_description import LaunchDescription


class InvalidPythonLaunchFileError(InvalidLaunchFileError):
    """A Python file that is no launch file (no ``generate_launch_description()``, or it
    does not return a ``LaunchDescription``)."""


class _MissingLaunchFile(InvalidLaunchFileError, FileNotFoundError):
    """A launch file that does not exist (``FileNotFoundError``, as in ROS 2)."""


def load_python_launch_file(path):
    """The module of a Python launch file (``import launch`` there is kairos's)."""
    from kairos import run
    run.install()
    if not os.path.isfile(path):
        raise _MissingLaunchFile(f"launch file {path} does not exist")
    name = "launch_file_" + os.path.basename(path).replace(".", "_").replace("-", "_")
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def launch_description_of(path):
    module = load_python_launch_file(path)
    generate = getattr(module, "generate_launch_description", None)
    if generate is None:
        raise InvalidPythonLaunchFileError(
            f"{path} has no generate_launch_description(): a Python launch file defines it "
            "and returns a LaunchDescription")
    description = generate()
    if not isinstance(description, LaunchDescription):
        raise InvalidPythonLaunchFileError(
            f"generate_launch_description() of {path} returned "
            f"{type(description).__name__}, not a LaunchDescription")
    return description


#: ROS 2's names for the two steps.
load_python_launch_file_as_module = load_python_launch_file
get_launch_description_from_python_launch_file = launch_description_of


class LaunchDescriptionSource:
    """Where an included description comes from: a file (``location``), or, as ROS 2's
    also takes, a ``LaunchDescription`` itself (``location`` then only names it)."""

    def __init__(self, launch_description=None, location="<string>", method="a launch file"):
        if not isinstance(launch_description, (LaunchDescription, type(None))):
            launch_description, location = None, launch_description
        self._description = launch_description
        self._location = normalize_to_list_of_substitutions(location)
        self.method = method
        self._performed = None

    def location_in(self, context):
        if self._performed is None:
            text = perform_substitutions(context, self._location)
            # A description given as it is has a name, not a file.
            self._performed = text if self._description is not None else os.path.abspath(text)
        return self._performed

    @property
    def location(self):
        """The location performed, once it is; before, its substitutions described."""
        if self._performed is None:
            return " + ".join(str(sub) for sub in self._location)
        return self._performed

    def get_launch_description(self, context):
        if self._description is not None:
            self.location_in(context)
            return self._description
        if self._location == [] or [getattr(s, "text", None) for s in self._location] == \
                ["<string>"]:
            raise RuntimeError("LaunchDescriptionSource.get_launch_description(): called "
                               "without a launch description or a file to load it from")
        path = self.location_in(context)
        if path.endswith(".py"):
            return launch_description_of(path)
        return LaunchDescription([_FrontendFile(path)])


class PythonLaunchDescriptionSource(LaunchDescriptionSource):
    def __init__(self, launch_file_path):
        super().__init__(location=launch_file_path, method="interpreted python launch file")

    def get_launch_description(self, context):
        return launch_description_of(self.location_in(context))


class FrontendLaunchDescriptionSource(LaunchDescriptionSource):
    def __init__(self, launch_file_path, *, parser=None):
        super().__init__(location=launch_file_path, method="an XML or YAML launch file")

    def get_launch_description(self, context):
        return LaunchDescription([_FrontendFile(self.location_in(context))])


AnyLaunchDescriptionSource = LaunchDescriptionSource
XMLLaunchDescriptionSource = FrontendLaunchDescriptionSource
YAMLLaunchDescriptionSource = FrontendLaunchDescriptionSource


class _FrontendFile(Action):
    """An XML or YAML launch file, read by the kairos launcher's own reader (the one
    ``kairos launch FILE`` uses), its processes started as this launch's."""

    def __init__(self, path):
        super().__init__()
        self.path = path

    def execute(self, context):
        kairos = os.environ.get("KAIROS_BIN", "kairos")
        args = [f"{k}:={v}" for k, v in context.launch_configurations.items()]
        try:
            result = subprocess.run([kairos, "launch", self.path, *args, "--print-json"],
                                    capture_output=True, text=True, timeout=60)
        except (FileNotFoundError, subprocess.TimeoutExpired) as e:
            raise InvalidLaunchFileError(f"reading {self.path}: {e}")
        if result.returncode != 0:
            raise InvalidLaunchFileError(
                result.stderr.replace("kairos launch: nothing was started", "").strip())
        from kairos.launch.actions import ExecuteProcess
        for line in result.stdout.splitlines():
            spec = json.loads(line)
            action = ExecuteProcess(cmd=[spec["program"], *spec["args"]])
            action.origin = spec["origin"]
            env = dict(context._extra_env)
            env.update(dict(spec["env"]))
            context._driver.start(
                action, name=spec["name"], cmd=[spec["program"], *spec["args"]], env=env,
                cwd=spec.get("cwd"), output=spec["output"], respawn=spec["respawn"],
                respawn_delay=spec["respawn_delay"], required=spec["required"],
                respawn_max_retries=spec.get("respawn_max_retries"),
                emulate_tty=spec.get("emulate_tty", False),
                sigterm_timeout=spec.get("sigterm_timeout"),
                sigkill_timeout=spec.get("sigkill_timeout"))
