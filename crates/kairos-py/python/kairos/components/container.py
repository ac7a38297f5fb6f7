"""A component container: ``python -m kairos.components.container [--multi-threaded]
[--ros-args ...]``, what ``kairos launch`` runs for ``rclcpp_components``'
``component_container`` (``_mt``: ``--multi-threaded``).

One node (``ComponentManager`` unless renamed) serves ``~/_container/load_node``,
``~/_container/unload_node`` and ``~/_container/list_nodes``; every loaded node joins the
container's executor and context. A load that fails answers ``success=False`` with the
reason and leaves the container as it was. Loading runs in the service's callback, so
a component's constructor must not wait for its own executor (kairos raises
``WouldDeadlock`` if it does, rather than hanging the container).
"""

import sys
import threading

import kairos
from kairos.components.plugins import ComponentError, find
from kairos.composition_interfaces.srv import ListNodes, LoadNode, UnloadNode
from kairos.executors import (
    ExternalShutdownException, MultiThreadedExecutor, SingleThreadedExecutor)
from kairos.node import Node, _component_options
from kairos.parameter import Parameter
from kairos.run import install as install_rclpy_on_kairos

#: The extra argument (a string array) by which kairos's loader passes parameter files,
#: read by the loaded node as ``--params-file`` is (wildcards and node sections alike).
PARAMS_FILES = "kairos.params_files"

#: rcl's log severities a LoadNode request may carry (0: leave the level alone).
_LOG_LEVELS = (10, 20, 30, 40, 50)


def _destroy_made(options):
    """Destroys the node a failed component made before it failed, if any."""
    node = options["node"]() if options["node"] is not None else None
    if node is not None:
        try:
            node.destroy_node()
        except Exception:  # noqa: BLE001 - the load's own error is what the caller hears
            pass


class ComponentManager:
    """The container's node and what it has loaded, by unique id."""

    def __init__(self, executor, *, node_name="ComponentManager"):
        self.executor = executor
        self.node = Node(node_name)
        self.loaded = {}
        self._next_id = 1
        self._lock = threading.Lock()
        self.node.create_service(LoadNode, "~/_container/load_node", self._on_load)
        self.node.create_service(UnloadNode, "~/_container/unload_node", self._on_unload)
        self.node.create_service(ListNodes, "~/_container/list_nodes", self._on_list)
        executor.add_node(self.node)

    def load(self, request):
        """Makes the component's node and adds it to the executor; its unique id and full
        name. :class:`ComponentError` when it cannot be composed."""
        if request.log_level and request.log_level not in _LOG_LEVELS:
            raise ComponentError(f"log_level {request.log_level} is not one of "
                                 f"{sorted(_LOG_LEVELS)}")
        made = find(request.package_name, request.plugin_name)
        ros_args = []
        if request.node_name:
            ros_args += ["-r", f"__node:={request.node_name}"]
        if request.node_namespace:
            ros_args += ["-r", f"__ns:={request.node_namespace}"]
        for rule in request.remap_rules:
            ros_args += ["-r", rule]
        forward_global_arguments = False
        for argument in request.extra_arguments:
            value = Parameter.from_parameter_msg(argument).value
            if argument.name in ("use_intra_process_comms", "forward_global_arguments"):
                # In-process delivery is what nodes of one context always get.
                if not isinstance(value, bool):
                    raise ComponentError(
                        f"extra argument '{argument.name}' must be a boolean, not {value!r}")
                if argument.name == "forward_global_arguments":
                    forward_global_arguments = value
            elif argument.name == PARAMS_FILES:
                for path in value or []:
                    ros_args += ["--params-file", path]
        options = {
            "ros_args": ros_args,
            "parameters": [Parameter.from_parameter_msg(p) for p in request.parameters],
            # The container's own arguments (its name among them) are not the
            # component's, unless the request forwards them, as rclcpp's container does.
            "use_global_arguments": forward_global_arguments,
            "taken": False,
            "node": None,
        }
        token = _component_options.set(options)
        try:
            result = made()
        except Exception as e:
            _destroy_made(options)
            if isinstance(e, ComponentError):
                raise
            raise ComponentError(
                f"component '{request.plugin_name}' failed while making its node: "
                f"{type(e).__name__}: {e}") from e
        finally:
            _component_options.reset(token)
        node = options["node"]() if options["node"] is not None else None
        if node is None:
            raise ComponentError(
                f"component '{request.plugin_name}' made no node (it returned "
                f"{type(result).__name__}): a component is a callable that makes a Node")
        if request.log_level:
            node.get_logger().set_level(request.log_level)
        with self._lock:
            unique_id = self._next_id
            self._next_id += 1
            # The object the component made keeps the node's callbacks alive.
            self.loaded[unique_id] = (node, result)
        self.executor.add_node(node)
        return unique_id, node.get_fully_qualified_name()

    def unload(self, unique_id):
        with self._lock:
            entry = self.loaded.pop(unique_id, None)
        if entry is None:
            raise ComponentError(f"no node with unique id {unique_id} is loaded")
        node, _ = entry
        self.executor.remove_node(node)
        node.destroy_node()

    def _on_load(self, request, response):
        # Any failure is a refusal: an exception out of this callback would end the
        # container's spin, and every node in it.
        try:
            response.unique_id, response.full_node_name = self.load(request)
            response.success = True
            self.node.get_logger().info(
                f"loaded {response.full_node_name} ({request.package_name} "
                f"{request.plugin_name}) as {response.unique_id}")
        except Exception as e:  # noqa: BLE001
            reason = str(e) if isinstance(e, ComponentError) else f"{type(e).__name__}: {e}"
            response.success, response.error_message = False, reason
            self.node.get_logger().error(f"cannot load {request.plugin_name}: {reason}")
        return response

    def _on_unload(self, request, response):
        try:
            self.unload(request.unique_id)
            response.success = True
        except Exception as e:  # noqa: BLE001 - a refusal, never the container's end
            response.success, response.error_message = False, str(e)
        return response

    def _on_list(self, request, response):
        with self._lock:
            entries = sorted(self.loaded.items())
        response.unique_ids = [unique_id for unique_id, _ in entries]
        response.full_node_names = [node.get_fully_qualified_name() for _, (node, _) in entries]
        return response


def main(argv=None):
    argv = list(sys.argv if argv is None else argv)
    multi = "--multi-threaded" in argv
    argv = [a for a in argv if a != "--multi-threaded"]
    # A component's `import rclpy` (and its message packages) are kairos's.
    install_rclpy_on_kairos()
    kairos.init(args=argv)
    executor = MultiThreadedExecutor() if multi else SingleThreadedExecutor()
    manager = ComponentManager(executor)
    try:
        executor.spin()
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    finally:
        for unique_id in sorted(manager.loaded, reverse=True):
            manager.unload(unique_id)
        kairos.try_shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())
