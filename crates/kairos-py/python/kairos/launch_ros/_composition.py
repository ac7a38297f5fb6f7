"""Composable nodes in a launch file: ``ComposableNodeContainer`` (a container process,
then its nodes loaded into it) and ``LoadComposableNodes`` (nodes loaded into a running
container through its ``load_node`` service, by a short process the launcher
supervises). ``launch_ros.actions`` holds these names, as ROS 2's does."""

import json
import os
import sys

from kairos.launch._core import Action, InvalidLaunchFileError, perform_text
from kairos.launch_ros.actions import Node, join_namespace, parameter_entries
from kairos.launch_ros.parameter_descriptions import ParameterValue

#: rclcpp_components' containers, which kairos runs as its own Python container.
_CONTAINERS = {"component_container": [], "component_container_mt": ["--multi-threaded"],
               "component_container_isolated": [],
               "component_container_event": []}


class ComposableNodeContainer(Node):
    """A component container, then its composable nodes loaded into it. rclcpp_components'
    containers are kairos's (:mod:`kairos.components.container`); another package's
    executable is run as it is and loaded the same way (its ``load_node`` service)."""

    def __init__(self, *, name, namespace, package="rclcpp_components",
                 executable="component_container", composable_node_descriptions=None,
                 **kwargs):
        super().__init__(name=name, namespace=namespace, package=package,
                         executable=executable, **kwargs)
        self.composable_node_descriptions = list(composable_node_descriptions or [])
        self.container_name = None

    def command(self, context):
        package = perform_text(context, self.node_package)
        executable = perform_text(context, self.node_executable)
        if package == "rclcpp_components" and executable in _CONTAINERS:
            words = [sys.executable, "-m", "kairos.components.container",
                     *_CONTAINERS[executable]]
            words += self.ros_arguments_for(context)
            self._executable_name = executable
        else:
            words = super().command(context)
        name = perform_text(context, self.node_name_sub)
        namespace = join_namespace(context.ros_namespace,
                                   perform_text(context, self.node_namespace_sub) or "")
        self.container_name = join_namespace(namespace or "/", name)
        return words

    def execute(self, context):
        super().execute(context)
        if self.composable_node_descriptions:
            return [LoadComposableNodes(
                composable_node_descriptions=self.composable_node_descriptions,
                target_container=self)]
        return None


def load_request_fields(context, description):
    """A composable node's LoadNode request, substitutions performed, as the loader's JSON
    object (:mod:`kairos.components.load`): the scope's namespace, global parameters and
    remappings come first, as for a ``Node``; parameter files stay paths."""
    # From the launch configurations themselves, where launch_ros keeps its scoped state
    # (launch_ros' own tests call this with a context that has nothing else).
    scoped = context.launch_configurations
    namespace = join_namespace(
        scoped.get("ros_namespace") or "",
        perform_text(context, description.node_namespace) or "")
    parameters, files = {}, []
    for entry in parameter_entries(
            context, list(scoped.get("global_params") or [])
            + list(description.parameters or [])):
        if entry[0] == "file":
            files.append(entry[1])
        else:
            parameters[entry[1]] = entry[2]
    extra = {}
    for entry in description.extra_arguments or []:
        for key, value in entry.items():
            if not isinstance(value, (bool, int, float, str)):
                value = ParameterValue(value).evaluate(context)
            extra[perform_text(context, key) if not isinstance(key, str) else key] = value
    remaps = [f"{perform_text(context, a)}:={perform_text(context, b)}"
              for a, b in list(scoped.get("ros_remaps") or [])
              + list(description.remappings or [])]
    return {"package_name": perform_text(context, description.package),
            "plugin_name": perform_text(context, description.node_plugin),
            "node_name": perform_text(context, description.node_name) or "",
            "node_namespace": namespace, "remap_rules": remaps,
            "parameters": parameters, "extra_arguments": extra, "params_files": files}


def get_composable_node_load_request(composable_node_description, context):
    """launch_ros' function: the ``composition_interfaces/srv/LoadNode`` request for a
    composable node (None when its condition is false). Its parameter files are read
    here (the ``/**`` section, then the node's own), as launch_ros sends values, not
    paths."""
    from kairos.components.load import request_from
    from kairos.parameter import parameter_dict_from_yaml_file
    description = composable_node_description
    if description.condition is not None and not description.condition.evaluate(context):
        return None
    fields = load_request_fields(context, description)
    files = fields.pop("params_files")
    name = "/".join(p for p in (fields["node_namespace"].strip("/"), fields["node_name"]) if p)
    from_files = {}
    for path in files:
        try:
            values = parameter_dict_from_yaml_file(path, True, ["/" + name] if name else None)
        except RuntimeError:
            values = parameter_dict_from_yaml_file(path, True, None)
        from_files.update(values)
    request = request_from(fields)
    request.parameters = [*from_files.values(), *request.parameters]
    return request


class LoadComposableNodes(Action):
    """Loads composable nodes into a running container (a ``ComposableNodeContainer``
    or its node name), through its ``~/_container/load_node`` service: a short process
    (:mod:`kairos.components.load`) the launcher supervises, whose wait for the container
    is bounded, so a missing container ends it with an error, never a hung launch."""

    def __init__(self, *, composable_node_descriptions, target_container, **kwargs):
        super().__init__(**kwargs)
        self.composable_node_descriptions = list(composable_node_descriptions)
        self.target_container = target_container

    def _container(self, context):
        if isinstance(self.target_container, ComposableNodeContainer):
            if self.target_container.container_name is None:
                raise InvalidLaunchFileError(
                    "LoadComposableNodes: its target ComposableNodeContainer has not been "
                    "started (put the container before it in the launch description, and "
                    "check the container's condition)")
            return self.target_container.container_name
        name = perform_text(context, self.target_container)
        return name if name.startswith("/") else join_namespace(context.ros_namespace or "/",
                                                                 name)

    def execute(self, context):
        container = self._container(context)
        requests = [json.dumps(load_request_fields(context, d))
                    for d in self.composable_node_descriptions
                    if d.condition is None or d.condition.evaluate(context)]
        if not requests:
            return None
        context._driver.start(
            self, name="load_composable_nodes",
            cmd=[sys.executable, "-m", "kairos.components.load", container, *requests],
            env=dict(context._extra_env), cwd=None, output="screen", respawn=False,
            respawn_delay=0.0, required=False)
        return None
