"""``launch_ros.actions``: ROS nodes of installed packages, namespaces, global parameters
and remappings, for ``kairos launch``.

A node's executable is found in its package (``lib/PACKAGE`` under ament's index); a
Python node (a ``#!...python`` first line) runs under ``kairos.run``, so that its
``import rclpy`` is kairos, as ``kairos run`` runs it."""

import json
import os
import sys

from kairos.launch._core import (
    Action, InvalidLaunchFileError, normalize_to_list_of_substitutions,
    perform_substitutions, perform_text)
from kairos.launch.actions import ExecuteProcess, GroupAction
from kairos.launch_ros.parameter_descriptions import Parameter, ParameterFile, ParameterValue
from kairos.launch_ros.substitutions import executable_in_package


def is_python_script(path):
    try:
        with open(path, "rb") as f:
            first = f.readline(256)
    except OSError:
        return False
    return first.startswith(b"#!") and b"python" in first


def command_for(path):
    """How to run an executable: a Python node under ``kairos.run``."""
    if is_python_script(path):
        return [sys.executable, "-m", "kairos.run", path]
    return [path]


def join_namespace(outer, inner):
    if not inner:
        return outer
    if inner.startswith("/"):
        return "/" + inner.strip("/")
    inner = inner.strip("/")
    return (outer.rstrip("/") + "/" + inner) if outer else "/" + inner


def _yaml_value(value):
    """A parameter value as ``-p name:=VALUE`` takes it (YAML)."""
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_yaml_value(v) for v in value) + "]"
    return str(value)


def _flatten(prefix, value, out):
    if isinstance(value, dict):
        for k, v in value.items():
            _flatten(f"{prefix}.{k}" if prefix else str(k), v, out)
    else:
        out.append((prefix, value))


def _parameter_arguments(context, parameters):
    """``-p`` and ``--params-file`` arguments for a node's ``parameters=[...]``."""
    from kairos.launch._core import Substitution
    args = []
    for entry in parameters or []:
        if isinstance(entry, ParameterFile):
            args += ["--params-file", entry.evaluate(context)]
        elif isinstance(entry, (str, Substitution, os.PathLike)) or (
                isinstance(entry, list) and entry):
            args += ["--params-file", perform_text(context, entry)]
        elif isinstance(entry, dict):
            for key, value in entry.items():
                name = perform_text(context, key) if not isinstance(key, str) else key
                if isinstance(value, ParameterValue):
                    value = value.evaluate(context)
                elif isinstance(value, (Substitution,)) or (
                        isinstance(value, list) and value
                        and any(isinstance(v, Substitution) for v in value)):
                    value = ParameterValue(value).evaluate(context)
                flat = []
                _flatten(name, value, flat)
                for n, v in flat:
                    args += ["-p", f"{n}:={_yaml_value(v)}"]
        elif isinstance(entry, Parameter):
            value = entry.value
            if not isinstance(value, (int, float, bool, list, dict)):
                value = ParameterValue(value).evaluate(context)
            args += ["-p", f"{perform_text(context, entry.name)}:={_yaml_value(value)}"]
        else:
            raise InvalidLaunchFileError(
                f"a node's parameters are dicts, parameter files or paths, not "
                f"{type(entry).__name__}")
    return args


class Node(ExecuteProcess):
    """A ROS node: an executable of a package, with its name, namespace, parameters and
    remappings as ROS arguments."""

    def __init__(self, *, executable, package=None, name=None, namespace=None,
                 exec_name=None, parameters=None, remappings=None, ros_arguments=None,
                 arguments=None, **kwargs):
        kwargs.setdefault("output", "log")
        super().__init__(cmd=[executable], name=exec_name, **kwargs)
        self.node_executable = executable
        self.node_package = package
        self.node_name_sub = name
        self.node_namespace_sub = namespace
        self.parameters = parameters
        self.remappings = remappings
        self.ros_arguments = ros_arguments
        self.arguments = arguments
        self.node_name = None

    def command(self, context):
        executable = perform_text(context, self.node_executable)
        if self.node_package is not None:
            path = executable_in_package(executable, perform_text(context, self.node_package))
        elif "/" in executable:
            path = executable
        else:
            import shutil
            path = shutil.which(executable, path=context.environment.get("PATH"))
            if path is None:
                raise InvalidLaunchFileError(
                    f"executable '{executable}' not found on PATH (give package=...)")
        words = command_for(path)
        if self.prefix is not None:
            import shlex
            words = shlex.split(perform_text(context, self.prefix)) + words
        for argument in self.arguments or []:
            words.append(perform_text(context, argument))
        ros = []
        name = perform_text(context, self.node_name_sub)
        if name:
            ros += ["-r", f"__node:={name}"]
            self.node_name = name
        namespace = join_namespace(context.ros_namespace,
                                   perform_text(context, self.node_namespace_sub) or "")
        if namespace:
            ros += ["-r", f"__ns:={namespace}"]
        ros += _parameter_arguments(context, context.global_parameters)
        ros += _parameter_arguments(context, self.parameters)
        for source, target in list(context.global_remaps) + list(self.remappings or []):
            ros += ["-r", f"{perform_text(context, source)}:={perform_text(context, target)}"]
        for argument in self.ros_arguments or []:
            ros.append(perform_text(context, argument))
        if ros:
            words += ["--ros-args", *ros]
        self._executable_name = os.path.basename(path)
        return words

    def base_name(self, context, words):
        if self.name is not None:
            return perform_text(context, self.name)
        return self._executable_name


class LifecycleNode(Node):
    """A managed node; it starts as a process as any node does. Driving its transitions
    from the launch file (``ChangeState``, ``OnStateTransition``) is not supported yet:
    use ``kairos lifecycle set``."""

    def __init__(self, *, name, namespace, autostart=False, **kwargs):
        if autostart:
            raise NotImplementedError(
                "LifecycleNode(autostart=True) is not supported by kairos launch yet")
        super().__init__(name=name, namespace=namespace, **kwargs)


class PushRosNamespace(Action):
    def __init__(self, namespace, **kwargs):
        super().__init__(**kwargs)
        self.namespace = normalize_to_list_of_substitutions(namespace)

    def execute(self, context):
        context.ros_namespace = join_namespace(context.ros_namespace,
                                               perform_substitutions(context, self.namespace))


PushROSNamespace = PushRosNamespace


class SetParameter(Action):
    """A parameter every node after it (in its scope) gets."""

    def __init__(self, name, value, **kwargs):
        super().__init__(**kwargs)
        self.name = name
        self.value = value

    def execute(self, context):
        context.global_parameters.append({self.name: self.value})


class SetParametersFromFile(Action):
    def __init__(self, filename, **kwargs):
        super().__init__(**kwargs)
        self.filename = filename

    def execute(self, context):
        context.global_parameters.append(ParameterFile(self.filename))


class SetRemap(Action):
    """A remapping every node after it (in its scope) gets."""

    def __init__(self, src, dst, **kwargs):
        super().__init__(**kwargs)
        self.src = src
        self.dst = dst

    def execute(self, context):
        context.global_remaps.append((self.src, self.dst))


class SetROSLogDir(Action):
    def __init__(self, log_dir, **kwargs):
        super().__init__(**kwargs)
        self.log_dir = log_dir

    def execute(self, context):
        context.set_env("ROS_LOG_DIR", perform_text(context, self.log_dir))


class ComposableNodeContainer(Node):
    def __init__(self, *args, **kwargs):
        raise NotImplementedError(
            "ComposableNodeContainer: kairos launch cannot compose nodes into one process "
            "yet; start each node as a Node of its own")


class LoadComposableNodes(Action):
    def __init__(self, *args, **kwargs):
        raise NotImplementedError(
            "LoadComposableNodes: kairos launch cannot compose nodes into one process yet; "
            "start each node as a Node of its own")


__all__ = ["Node", "LifecycleNode", "PushRosNamespace", "PushROSNamespace", "SetParameter",
           "SetParametersFromFile", "SetRemap", "SetROSLogDir", "ComposableNodeContainer",
           "LoadComposableNodes", "GroupAction"]
