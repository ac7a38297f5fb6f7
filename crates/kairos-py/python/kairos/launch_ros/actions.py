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
import pathlib
import sys
from collections.abc import Mapping
from typing import List

from kairos.launch._core import (
    Action, InvalidLaunchFileError, Substitution, normalize_to_list_of_substitutions,
    perform_substitutions, perform_text)
from kairos.launch.actions import ExecuteProcess, TimerAction, parse_name_and_value
from kairos.launch.frontend.entity import Entity
from kairos.launch.frontend.expose import expose_action
from kairos.launch_ros._parameters import evaluate_parameters, normalize_parameters
from kairos.launch_ros.parameter_descriptions import Parameter, ParameterFile, ParameterValue
from kairos.launch_ros.substitutions import executable_in_package
from kairos.launch_ros.utilities import normalize_remap_rules


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


def parameter_entries(context, parameters):
    """A node's parameters, substitutions performed, as ROS 2 reads them (see
    ``_parameters``): ``("file", path)`` and ``("value", name, value)`` entries, in order
    (later ones win). Global parameters (``SetParameter``) come as ``(name, value)``
    pairs, evaluated already."""
    out = []
    for entry in parameters or []:
        if isinstance(entry, tuple) and len(entry) == 2 and isinstance(entry[0], str):
            out.append(("value", entry[0], entry[1]))
            continue
        if not isinstance(entry, (dict, Parameter, ParameterFile, str, os.PathLike, list)) \
                and not isinstance(entry, Substitution):
            raise InvalidLaunchFileError(
                f"a node's parameters are dicts, parameter files or paths, not "
                f"{type(entry).__name__}")
        for evaluated in evaluate_parameters(context, normalize_parameters([entry])):
            if isinstance(evaluated, pathlib.Path):
                out.append(("file", os.fspath(evaluated)))
            elif isinstance(evaluated, Parameter):
                out.append(("value", *evaluated.evaluate(context)))
            else:
                out.extend(("value", name, value) for name, value in evaluated.items())
    return out


def _expanded_parameters(context, parameters):
    """A node's parameters as launch_ros expands them: ``(path, True)`` for a file,
    ``("name:=value", False)`` for a value."""
    return [(entry[1], True) if entry[0] == "file" else
            (f"{entry[1]}:={_yaml_value(entry[2])}", False)
            for entry in parameter_entries(context, parameters)]


def _parameter_arguments(expanded):
    """``-p`` and ``--params-file`` arguments for expanded parameters."""
    args = []
    for item, is_file in expanded:
        args += ["--params-file" if is_file else "-p", item]
    return args


@expose_action("node")
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
        # As launch_ros keeps them (normalized when the node is made: a value no node
        # could take is a TypeError here, at the line that made the node).
        self.__parameters = [] if parameters is None else normalize_parameters(parameters)
        if isinstance(remappings, Mapping):
            raise TypeError("remappings are a list of (from, to) pairs, not a mapping: "
                            f"{remappings!r}")
        # Checked now (a pair each, TypeError otherwise), performed when launched.
        self.remappings = None if remappings is None else list(normalize_remap_rules(remappings))
        self.__expanded_remappings = None
        self.__expanded_parameter_arguments = None
        self.ros_arguments = ros_arguments
        self.arguments = arguments
        self.node_name = None
        self.node_fully_qualified_name = None
        self.expanded_node_namespace = self.UNSPECIFIED_NODE_NAMESPACE

    @classmethod
    def parse(cls, entity, parser):
        """``<node pkg= exec= name= namespace= exec_name= args= ros_args=>`` with
        ``<param>`` (values, nested groups, ``from=`` files), ``<remap>`` and ``<env>``
        children, and what an ``executable`` takes."""
        _, kwargs = super().parse(entity, parser, ignore=["cmd"])
        for attribute, key, words in (("args", "arguments", True),
                                      ("ros_args", "ros_arguments", True),
                                      ("name", "name", False), ("exec_name", "exec_name", False),
                                      ("pkg", "package", False), ("namespace", "namespace", False)):
            value = entity.get_attr(attribute, optional=True)
            if value is not None:
                kwargs[key] = ExecuteProcess._parse_cmdline(value, parser) if words \
                    else parser.parse_substitution(value)
        kwargs["executable"] = parser.parse_substitution(entity.get_attr("exec"))
        remaps = entity.get_attr("remap", data_type=List[Entity], optional=True)
        if remaps is not None:
            kwargs["remappings"] = [(parser.parse_substitution(r.get_attr("from")),
                                     parser.parse_substitution(r.get_attr("to")))
                                    for r in remaps]
            for r in remaps:
                r.assert_entity_completely_parsed()
        params = entity.get_attr("param", data_type=List[Entity], optional=True)
        if params is not None:
            kwargs["parameters"] = cls.parse_nested_parameters(params, parser)
        return cls, kwargs

    @staticmethod
    def parse_nested_parameters(params, parser):
        """``<param>`` entities as a node's ``parameters``: ``from=`` a file (with
        ``allow_substs``), or ``name=`` with a ``value=`` (and a ``type=``) or nested
        ``<param>``s, as ``{name: value}`` mappings."""
        from kairos.launch.frontend.type_utils import get_data_type_from_identifier

        def nested(entities):
            values = {}
            for param in entities:
                name = tuple(parser.parse_substitution(param.get_attr("name")))
                identifier = param.get_attr("type", data_type=None, optional=True)
                data_type = None if identifier is None else \
                    get_data_type_from_identifier(identifier)
                value = param.get_attr("value", data_type=data_type, optional=True)
                inner = param.get_attr("param", data_type=List[Entity], optional=True)
                param.assert_entity_completely_parsed()
                if inner and (value is not None or data_type is not None):
                    raise RuntimeError(
                        "a <param> has nested parameters or a value (and a type), not both")
                if value is not None:
                    values[name] = ParameterValue(parser.parse_if_substitutions(value),
                                                  value_type=data_type)
                elif inner:
                    values[name] = nested(inner)
                else:
                    raise RuntimeError("either a value attribute or nested params are needed")
            return values

        parameters = []
        for param in params:
            source = param.get_attr("from", optional=True)
            allow_substs = param.get_attr("allow_substs", data_type=bool, optional=True)
            name = param.get_attr("name", optional=True)
            if source is not None and name is not None:
                raise RuntimeError("name and from attributes are mutually exclusive")
            if source is not None:
                if isinstance(allow_substs, str):
                    allow_substs = parser.parse_substitution(allow_substs)
                param.assert_entity_completely_parsed()
                parameters.append(ParameterFile(parser.parse_substitution(source),
                                                allow_substs=bool(allow_substs)
                                                if not isinstance(allow_substs, list)
                                                else allow_substs))
            elif name is not None:
                if allow_substs is not None:
                    raise RuntimeError(
                        "'allow_substs' can only be used together with 'from' attribute")
                parameters.append(nested([param]))
            else:
                raise ValueError("param Entity should have name or from attribute")
        return parameters

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

    def execute(self, context):
        from kairos.launch.logging import get_logger
        from kairos.launch_ros.utilities import add_node_name, get_node_name_count
        result = super().execute(context)
        if self.is_node_name_fully_specified():
            add_node_name(context, self.node_name)
            count = get_node_name_count(context, self.node_name)
            if count > 1:
                get_logger("launch_ros").warning(
                    f"there are now at least {count} nodes with the name {self.node_name} "
                    "created within this launch context")
        return result

    @property
    def __remappings(self):
        # launch_ros keeps the normalized rules under this name; its tests read it.
        return self.remappings

    def is_node_name_fully_specified(self):
        """Whether the launch gives both the node's name and its namespace (after
        ``_perform_substitutions``)."""
        return self.node_name is not None and not any(
            unspecified in self.node_name
            for unspecified in (self.UNSPECIFIED_NODE_NAME, self.UNSPECIFIED_NODE_NAMESPACE))

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
        # The node's own ROS arguments first, as launch_ros writes them.
        ros = [perform_text(context, argument) for argument in self.ros_arguments or []]
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
        ros += _parameter_arguments(_expanded_parameters(context, context.global_parameters))
        self.__expanded_parameter_arguments = _expanded_parameters(context, self.__parameters)
        ros += _parameter_arguments(self.__expanded_parameter_arguments)
        self.__expanded_remappings = [(perform_text(context, source),
                                       perform_text(context, target))
                                      for source, target in self.remappings or []]
        for source, target in list(context.global_remaps):
            ros += ["-r", f"{perform_text(context, source)}:={perform_text(context, target)}"]
        ros += [arg for rule in self.__expanded_remappings for arg in ("-r", ":=".join(rule))]
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


@expose_action("push_ros_namespace")
@expose_action("push-ros-namespace")
class PushRosNamespace(Action):
    def __init__(self, namespace, **kwargs):
        super().__init__(**kwargs)
        self.namespace = normalize_to_list_of_substitutions(namespace)

    @classmethod
    def parse(cls, entity, parser):
        _, kwargs = super().parse(entity, parser)
        kwargs["namespace"] = parser.parse_substitution(entity.get_attr("namespace"))
        return cls, kwargs

    def execute(self, context):
        from kairos.launch_ros.utilities import make_namespace_absolute, prefix_namespace
        pushed = perform_substitutions(context, self.namespace)
        previous = context.launch_configurations.get("ros_namespace")
        context.launch_configurations["ros_namespace"] = make_namespace_absolute(
            prefix_namespace(previous, pushed))


PushROSNamespace = PushRosNamespace


@expose_action("set_parameter")
class SetParameter(Action):
    """A parameter every node after it (in its scope) gets."""

    def __init__(self, name, value, **kwargs):
        super().__init__(**kwargs)
        self.name = name
        self.value = value

    parse = classmethod(parse_name_and_value)

    def execute(self, context):
        name = self.name if isinstance(self.name, str) else \
            tuple(normalize_to_list_of_substitutions(self.name))
        values = [(entry[1], entry[2]) for entry in
                  parameter_entries(context, [{name: self.value}])]
        _append_scoped(context, "global_params", *values)


@expose_action("set_parameters_from_file")
class SetParametersFromFile(Action):
    def __init__(self, filename, **kwargs):
        super().__init__(**kwargs)
        self.filename = filename

    @classmethod
    def parse(cls, entity, parser):
        _, kwargs = super().parse(entity, parser)
        kwargs["filename"] = parser.parse_substitution(entity.get_attr("filename"))
        return cls, kwargs

    def execute(self, context):
        _append_scoped(context, "global_params", perform_text(context, self.filename))


@expose_action("set_remap")
class SetRemap(Action):
    """A remapping every node after it (in its scope) gets."""

    def __init__(self, src, dst, **kwargs):
        super().__init__(**kwargs)
        self.src = src
        self.dst = dst

    @classmethod
    def parse(cls, entity, parser):
        _, kwargs = super().parse(entity, parser)
        kwargs["src"] = parser.parse_substitution(entity.get_attr("from"))
        kwargs["dst"] = parser.parse_substitution(entity.get_attr("to"))
        return cls, kwargs

    def execute(self, context):
        _append_scoped(context, "ros_remaps", (perform_text(context, self.src),
                                             perform_text(context, self.dst)))


@expose_action("set_ros_log_dir")
class SetROSLogDir(Action):
    """``ROS_LOG_DIR`` for the nodes after it (in its scope); a relative folder is under
    the current one."""

    def __init__(self, new_log_dir, **kwargs):
        super().__init__(**kwargs)
        self.new_log_dir = normalize_to_list_of_substitutions(new_log_dir)

    @classmethod
    def parse(cls, entity, parser):
        _, kwargs = super().parse(entity, parser)
        kwargs["new_log_dir"] = parser.parse_substitution(entity.get_attr("new_log_dir"))
        return cls, kwargs

    def execute(self, context):
        folder = perform_text(context, self.new_log_dir)
        if not os.path.isabs(folder):
            env = context.environment
            base = env.get("ROS_LOG_DIR") or os.path.join(
                env.get("ROS_HOME") or os.path.join(os.path.expanduser("~"), ".ros"), "log")
            folder = os.path.join(base, folder)
        context.set_env("ROS_LOG_DIR", folder)


@expose_action("ros_timer")
class ROSTimer(TimerAction):
    """A ``TimerAction`` on ROS time: the launch's own ROS node's clock
    (``launch_ros.ros_adapters``), which is simulated time after ``SetUseSimTime(True)``
    once ``/clock`` is heard. Never early on that clock; cancelled by the launch's stop
    as a ``TimerAction`` is; a timer whose clock never gets there ends with the launch."""

    def describe(self):
        return f"ROSTimer(period={self.period}, actions=<actions>)"

    def execute(self, context):
        from kairos.launch_ros.ros_adapters import get_ros_adapter
        get_ros_adapter(context).start_timer(self, self._period(context), context)


@expose_action("set_use_sim_time")
class SetUseSimTime(Action):
    """Sets ``use_sim_time`` on the launch's own ROS node (what ``ROSTimer`` waits on);
    the launched nodes take theirs from their parameters, as in ROS 2."""

    def __init__(self, value, **kwargs):
        super().__init__(**kwargs)
        self._value = value

    @property
    def value(self):
        return self._value

    @classmethod
    def parse(cls, entity, parser):
        _, kwargs = super().parse(entity, parser)
        kwargs["value"] = parser.parse_substitution(entity.get_attr("value"))
        return cls, kwargs

    def execute(self, context):
        from kairos.launch_ros.ros_adapters import get_ros_adapter
        from kairos.launch.substitutions import _bool
        value = self._value
        if not isinstance(value, bool):
            value = _bool(context, normalize_to_list_of_substitutions(value))
        get_ros_adapter(context).set_use_sim_time(value)


class LifecycleTransition(Action):
    """Takes the managed nodes ``lifecycle_node_names`` through ``transition_ids`` in
    order (``lifecycle_msgs.msg.Transition``'s ids, as numbers or text): each node is
    asked for the next transition once it has reached the goal state of the one before,
    each node at its own pace. A node that ends in ``errorprocessing`` is asked for no
    more, and the launch log says why.

    The nodes are ``LifecycleNode`` actions of the launch (a name without a leading
    ``/`` is in the root namespace). An id that is not a transition a launch can ask
    for is a ``ValueError`` naming it; so are empty lists."""

    #: What each transition a launch can ask for goes through: (start, goal) states.
    TRANSITION_STATES = {
        1: ("configuring", "inactive"),        # TRANSITION_CONFIGURE
        2: ("cleaningup", "unconfigured"),     # TRANSITION_CLEANUP
        3: ("activating", "active"),           # TRANSITION_ACTIVATE
        4: ("deactivating", "inactive"),       # TRANSITION_DEACTIVATE
        5: ("shuttingdown", "finalized"),      # TRANSITION_UNCONFIGURED_SHUTDOWN
        6: ("shuttingdown", "finalized"),      # TRANSITION_INACTIVE_SHUTDOWN
        7: ("shuttingdown", "finalized"),      # TRANSITION_ACTIVE_SHUTDOWN
    }

    def __init__(self, *, lifecycle_node_names, transition_ids, **kwargs):
        super().__init__(**kwargs)
        lifecycle_node_names = list(lifecycle_node_names)
        transition_ids = list(transition_ids)
        if not transition_ids:
            raise ValueError("LifecycleTransition: no transition_ids given")
        if not lifecycle_node_names:
            raise ValueError("LifecycleTransition: no lifecycle_node_names given")
        self.lifecycle_node_names = [normalize_to_list_of_substitutions(name)
                                     for name in lifecycle_node_names]
        self.transition_ids = [
            normalize_to_list_of_substitutions(str(tid) if isinstance(tid, int) else tid)
            for tid in transition_ids]
        self._handlers = {}

    def _ids(self, context):
        ids = []
        for tid in self.transition_ids:
            text = perform_text(context, tid).strip()
            try:
                number = int(text)
            except ValueError:
                raise ValueError(
                    f"LifecycleTransition: expected an integer transition id, got {text!r}")
            if number not in self.TRANSITION_STATES:
                raise ValueError(
                    f"LifecycleTransition: {number} is not a transition a launch can ask "
                    f"for; give one of {sorted(self.TRANSITION_STATES)} "
                    "(lifecycle_msgs.msg.Transition.TRANSITION_CONFIGURE, ...)")
            ids.append(number)
        return ids

    def _forget(self, context, node_name, reason=None):
        if reason is not None:
            from kairos.launch.logging import get_logger
            get_logger("launch_ros.lifecycle_transition").info(
                f"Stopping transitions for {node_name} because '{reason}'")
        for handler in self._handlers.pop(node_name, []):
            try:
                context.unregister_event_handler(handler)
            except ValueError:
                pass  # a handler that handles once has taken itself out

    def execute(self, context):
        from kairos.launch._core import EventHandler
        from kairos.launch.actions import EmitEvent, OpaqueFunction, RegisterEventHandler
        from kairos.launch_ros.event_handlers import OnStateTransition
        from kairos.launch_ros.events.lifecycle import ChangeState, StateTransition

        names = [perform_text(context, name) for name in self.lifecycle_node_names]
        names = [name if name.startswith("/") else "/" + name for name in names]
        ids = self._ids(context)

        def ask(name, tid):
            return EmitEvent(event=ChangeState(
                lifecycle_node_matcher=lambda action: getattr(
                    action, "node_fully_qualified_name", None) == name,
                transition_id=tid))

        def reached(name, start, goal):
            return lambda event: (event.action.node_fully_qualified_name == name
                                  and event.start_state == start
                                  and event.goal_state == goal)

        actions = []
        for index, tid in enumerate(ids):
            start, goal = self.TRANSITION_STATES[tid]
            for name in names:
                if index + 1 < len(ids):
                    then = [ask(name, ids[index + 1])]
                else:
                    then = [OpaqueFunction(function=lambda ctx, name=name:
                                           self._forget(ctx, name))]
                handler = OnStateTransition(matcher=reached(name, start, goal),
                                            entities=then, handle_once=True)
                self._handlers.setdefault(name, []).append(handler)
                actions.append(RegisterEventHandler(event_handler=handler))
        for name in names:
            failed = EventHandler(
                matcher=lambda event, name=name: isinstance(event, StateTransition)
                and event.action.node_fully_qualified_name == name
                and event.goal_state == "errorprocessing",
                entities=[OpaqueFunction(function=lambda ctx, name=name: self._forget(
                    ctx, name, "error occured during transitions"))],
                handle_once=True)
            self._handlers.setdefault(name, []).append(failed)
            context.register_event_handler(failed)
        actions.extend(ask(name, ids[0]) for name in names)
        return actions


# Containers and load requests live in their own module; ROS 2 keeps them here.
from kairos.launch_ros._composition import (  # noqa: E402,F401
    ComposableNodeContainer, LoadComposableNodes, get_composable_node_load_request,
    load_request_fields)

__all__ = ["ComposableNodeContainer", "LifecycleNode", "LifecycleTransition",
           "LoadComposableNodes", "Node", "PushROSNamespace", "PushRosNamespace",
           "ROSTimer", "SetParameter", "SetParametersFromFile", "SetROSLogDir", "SetRemap",
           "SetUseSimTime", "get_composable_node_load_request"]
