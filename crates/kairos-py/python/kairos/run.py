"""Runs an rclpy program on kairos as it is: ``python -m kairos.run prog.py [args]`` (or
``python -m kairos.run -m package.module [args]``).

For that run, ``rclpy`` and ``rclpy.<module>`` are kairos's modules of the same name
(``rclpy.node`` is ``kairos.node``, ``rclpy.action`` is ``kairos.action``), and every
interface package kairos ships is importable under its ROS name (``std_msgs.msg``,
``example_interfaces.action``, ...), as is ``sensor_msgs_py``. A module of rclpy that
kairos does not have is an ``ImportError`` that names it, never a different module. The program's arguments,
``--ros-args`` included, are its own ``sys.argv``.
"""

import importlib
import importlib.abc
import importlib.util
import os
import runpy
import sys

from kairos import _interfaces
from kairos._layout import stands_for


#: Python packages of ROS 2 that kairos has under the same name: helpers, the launch API
#: (``kairos launch FILE.launch.py``) and the package index.
_HELPERS = ("sensor_msgs_py", "launch", "launch_ros", "launch_testing", "launch_xml",
            "launch_yaml", "ament_index_python",
            "tf2_py", "tf2_ros", "tf2_geometry_msgs", "rosbag2_py", "rosidl_runtime_py")


#: Modules of ROS 2's packages whose names live elsewhere in kairos (ROS 2 keeps one class
#: per module, and its tests import them from there).
_MODULE_ALIASES = {
    "kairos.launch.action": "kairos.launch._core",
    "kairos.launch.condition": "kairos.launch._core",
    "kairos.launch.event_handler": "kairos.launch._core",
    "kairos.launch.invalid_launch_file_error": "kairos.launch._core",
    "kairos.launch.launch_context": "kairos.launch._core",
    "kairos.launch.launch_description_entity": "kairos.launch._core",
    "kairos.launch.substitution": "kairos.launch._core",
    "kairos.launch.event": "kairos.launch.events",
    "kairos.launch.launch_description_source": "kairos.launch.launch_description_sources",
}


def _counterpart(name):
    """The kairos module that ``name`` (a kairos module path) is: itself, an alias, or,
    for one of ROS 2's one-class modules of a package kairos keeps in one module
    (``launch.actions.execute_process``), that module (see ``kairos._layout``)."""
    if name in _MODULE_ALIASES:
        return _MODULE_ALIASES[name]
    parent, _, child = name.rpartition(".")
    if parent and stands_for(importlib.import_module(parent), child):
        return parent
    if importlib.util.find_spec(name) is not None:
        return name
    return None


class _Alias(importlib.abc.Loader):
    def __init__(self, target):
        self.target = target

    def create_module(self, spec):
        return importlib.import_module(self.target)

    def exec_module(self, module):
        pass


class RclpyOnKairos(importlib.abc.MetaPathFinder):
    """Finds ``rclpy`` (and its modules) and the ROS interface packages in kairos."""

    def __init__(self):
        self.packages = set(_interfaces.packages())

    def target(self, fullname):
        top, _, rest = fullname.partition(".")
        if top == "rclpy":
            return "kairos" + ("." + rest if rest else "")
        if top in self.packages or top in _HELPERS:
            return "kairos." + fullname
        return None

    def find_spec(self, fullname, path=None, target=None):
        name = self.target(fullname)
        if name is None:
            return None
        found = _counterpart(name)
        if found is None:
            raise ImportError(
                f"{fullname} has no counterpart in kairos yet (kairos has no module {name})",
                name=fullname)
        return importlib.util.spec_from_loader(fullname, _Alias(found))


def install():
    """Maps ``rclpy`` and the interface packages to kairos in this interpreter."""
    if not any(isinstance(finder, RclpyOnKairos) for finder in sys.meta_path):
        sys.meta_path.insert(0, RclpyOnKairos())


def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    usage = "usage: python -m kairos.run (PROGRAM.py | -m MODULE) [ARGS...]"
    if not argv or argv[0] in ("-h", "--help"):
        print(usage, file=sys.stderr)
        return 0 if argv else 2
    install()
    if argv[0] == "-m":
        if len(argv) < 2:
            print(usage, file=sys.stderr)
            return 2
        sys.argv = [argv[1]] + argv[2:]
        runpy.run_module(argv[1], run_name="__main__", alter_sys=True)
    else:
        sys.argv = argv
        sys.path[0] = os.path.dirname(os.path.abspath(argv[0]))  # as `python PROGRAM.py`
        runpy.run_path(argv[0], run_name="__main__")
    return 0


if __name__ == "__main__":
    sys.exit(main())
