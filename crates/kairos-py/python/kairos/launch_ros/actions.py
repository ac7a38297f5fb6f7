"""``launch_ros.actions``: ROS nodes of installed packages, namespaces, global parameters
and remappings, for ``kairos launch``.

A node's executable is found in its package (``lib/PACKAGE`` under ament's index); a
Python node (a ``#!...python`` first line) runs under ``kairos.run``, so that its
``import rclpy`` is kairos, as ``kairos run`` runs it."""

from kairos._layout import stands_for_package

# ROS 2's launch_ros.actions.<module> paths are this module (see kairos._layout).
stands_for_package(__name__, (
    "composable_node_container", "lifecycle_node", "lifecycle_transition",
    "load_composable_nodes", "node", "push_ros_namespace", "ros_timer", "set_parameter",
    "set_parameters_from_file", "set_remap", "set_ros_log_dir", "set_use_sim_time"))

import json
import os
import sys

from kairos.launch._core import (
    Action, InvalidLaunchFileError, normalize_to_list_of_substitutions,
    perform_substitutions, perform_text)
from kairos.launch.actions import ExecuteProcess
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


def evaluate_parameters(context, parameters):
    """A node's ``parameters=[...]``, substitutions performed: ``("file", path)`` and
    ``("value", name, value)`` entries, in order (later ones win)."""
    from kairos.launch._core import Substitution
    out = []
    for entry in parameters or []:
        if isinstance(entry, ParameterFile):
            out.append(("file", entry.evaluate(context)))
        elif isinstance(entry, (str, Substitution, os.PathLike)) or (
                isinstance(entry, list) and entry):
            out.append(("file", perform_text(context, entry)))
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
                out.extend(("value", n, v) for n, v in flat)
        elif isinstance(entry, tuple) and len(entry) == 2:
            # A global parameter (SetParameter), evaluated already.
            out.append(("value", entry[0], entry[1]))
        elif isinstance(entry, Parameter):
            value = entry.value
            if not isinstance(value, (int, float, bool, list, dict)):
                value = ParameterValue(value).evaluate(context)
            out.append(("value", perform_text(context, entry.name), value))
        else:
            raise InvalidLaunchFileError(
                f"a node's parameters are dicts, parameter files or paths, not "
                f"{type(entry).__name__}")
    return out


def _parameter_arguments(context, parameters):
    """``-p`` and ``--params-file`` arguments for a node's ``parameters=[...]``."""
    args = []
    for entry in evaluate_parameters(context, parameters):
        if entry[0] == "file":
            args += ["--params-file", entry[1]]
        else:
            args += ["-p", f"{entry[1]}:={_yaml_value(entry[2])}"]
    return args


class Node(ExecuteProcess):
    """A ROS node: an executable of a package, with its name, namespace, parameters and
    remappings as ROS arguments."""

    #: What ``node_name`` holds in place of a name or namespace the launch does not give.
    UNSPECIFIED_NODE_NAME = "<node_name_unspecified>"
    UNSPECIFIED_NODE_NAMESPACE = "<node_namespace_unspecified>"

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
        self.node_fully_qualified_name = None
        self.expanded_node_namespace = self.UNSPECIFIED_NODE_NAMESPACE

    def _perform_substitutions(self, context):
        """launch_ros' names of the node as the launch gives them: ``node_name`` (the
        fully qualified name, with ``UNSPECIFIED_*`` for what the launch leaves to the
        program) and ``expanded_node_namespace``."""
        from kairos.launch_ros.utilities import make_namespace_absolute, prefix_namespace
        name = self.UNSPECIFIED_NODE_NAME
        if self.node_name_sub is not None:
            name = perform_text(context, self.node_name_sub)
        namespace = None
        if self.node_namespace_sub is not None:
            namespace = perform_text(context, self.node_namespace_sub)
        namespace = make_namespace_absolute(
            prefix_namespace(context.launch_configurations.get("ros_namespace"), namespace))
        if namespace is not None:
            self.expanded_node_namespace = namespace
        self.node_name = prefix_namespace(self.expanded_node_namespace, name)

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
        words += self.ros_arguments_for(context)
        self._executable_name = os.path.basename(path)
        return words

    def ros_arguments_for(self, context):
        """``--ros-args`` and the node's name, namespace, parameters and remappings (none
        when it has none)."""
        ros = []
        name = perform_text(context, self.node_name_sub)
        if name:
            ros += ["-r", f"__node:={name}"]
        namespace = join_namespace(context.ros_namespace,
                                   perform_text(context, self.node_namespace_sub) or "")
        if namespace:
            ros += ["-r", f"__ns:={namespace}"]
        if name:
            self.node_fully_qualified_name = join_namespace(namespace or "/", name)
        self._perform_substitutions(context)
        ros += _parameter_arguments(context, context.global_parameters)
        ros += _parameter_arguments(context, self.parameters)
        for source, target in list(context.global_remaps) + list(self.remappings or []):
            ros += ["-r", f"{perform_text(context, source)}:={perform_text(context, target)}"]
        for argument in self.ros_arguments or []:
            ros.append(perform_text(context, argument))
        return ["--ros-args", *ros] if ros else []

    def base_name(self, context, words):
        if self.name is not None:
            return perform_text(context, self.name)
        return self._executable_name


class LifecycleNode(Node):
    """A managed node: a process as any node, whose transitions the launch file hears
    (``OnStateTransition``) and asks for (``EmitEvent(ChangeState(...))``);
    ``autostart=True`` configures and activates it once it is up."""

    def __init__(self, *, name, namespace, autostart=False, **kwargs):
        super().__init__(name=name, namespace=namespace, **kwargs)
        self.autostart = autostart

    def execute(self, context):
        from kairos.launch._core import EventHandler
        from kairos.launch.event_handlers import OnProcessStart
        from kairos.launch_ros._lifecycle import LifecycleBridge
        from kairos.launch_ros.events.lifecycle import ChangeState
        result = super().execute(context)
        bridge = LifecycleBridge.of(context._driver)
        node_name = self.node_fully_qualified_name
        if node_name is None:
            raise InvalidLaunchFileError(
                "LifecycleNode needs a name: its transitions are asked of it by name")
        autostart = self.autostart if isinstance(self.autostart, bool) else \
            perform_text(context, self.autostart).strip().lower() in ("true", "1")

        node_action = self

        class _OnChangeState(EventHandler):
            def handle(self, event, context):
                bridge.change_state(node_name, [event.transition_id])

        context.register_event_handler(_OnChangeState(
            matcher=lambda event: isinstance(event, ChangeState)
            and event.lifecycle_node_matcher(node_action)))

        def started(event, context):
            bridge.open()
            if autostart:
                # lifecycle_msgs' TRANSITION_CONFIGURE, then TRANSITION_ACTIVATE.
                bridge.change_state(node_name, [1, 3])

        bridge.watch(self, node_name)
        context.register_event_handler(OnProcessStart(target_action=self, on_start=started))
        return result


def _append_scoped(context, key, *items):
    """Adds to a list of launch_ros' scoped state (``global_params``, ``ros_remaps``),
    kept in the launch configurations as ROS 2 keeps it; a new list, so an enclosing
    scope's is left as it was."""
    scoped = context.launch_configurations
    scoped[key] = [*(scoped.get(key) or []), *items]


class PushRosNamespace(Action):
    def __init__(self, namespace, **kwargs):
        super().__init__(**kwargs)
        self.namespace = normalize_to_list_of_substitutions(namespace)

    def execute(self, context):
        from kairos.launch_ros.utilities import make_namespace_absolute, prefix_namespace
        pushed = perform_substitutions(context, self.namespace)
        previous = context.launch_configurations.get("ros_namespace")
        context.launch_configurations["ros_namespace"] = make_namespace_absolute(
            prefix_namespace(previous, pushed))


PushROSNamespace = PushRosNamespace


class SetParameter(Action):
    """A parameter every node after it (in its scope) gets."""

    def __init__(self, name, value, **kwargs):
        super().__init__(**kwargs)
        self.name = name
        self.value = value

    def execute(self, context):
        values = [(entry[1], entry[2]) for entry in
                  evaluate_parameters(context, [{self.name: self.value}])]
        _append_scoped(context, "global_params", *values)


class SetParametersFromFile(Action):
    def __init__(self, filename, **kwargs):
        super().__init__(**kwargs)
        self.filename = filename

    def execute(self, context):
        _append_scoped(context, "global_params", perform_text(context, self.filename))


class SetRemap(Action):
    """A remapping every node after it (in its scope) gets."""

    def __init__(self, src, dst, **kwargs):
        super().__init__(**kwargs)
        self.src = src
        self.dst = dst

    def execute(self, context):
        _append_scoped(context, "ros_remaps", (perform_text(context, self.src),
                                             perform_text(context, self.dst)))


class SetROSLogDir(Action):
    def __init__(self, log_dir, **kwargs):
        super().__init__(**kwargs)
        self.log_dir = log_dir

    def execute(self, context):
        context.set_env("ROS_LOG_DIR", perform_text(context, self.log_dir))


# Containers and load requests live in their own module; ROS 2 keeps them here.
from kairos.launch_ros._composition import (  # noqa: E402,F401
    ComposableNodeContainer, LoadComposableNodes, get_composable_node_load_request,
    load_request_fields)
