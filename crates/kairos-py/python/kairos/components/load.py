"""Loads components into a running container, as launch_ros' ``LoadComposableNodes``
does: ``python -m kairos.components.load CONTAINER REQUEST_JSON... [--timeout S]``.

Each request is a JSON object with LoadNode's fields (``package_name``, ``plugin_name``,
``node_name``, ``node_namespace``, ``log_level``, ``remap_rules``) plus ``parameters``
and ``extra_arguments`` as ``{name: value}`` and ``params_files`` (paths). The requests
are sent in order; the first refused ends the program with status 1 and the container's
reason. The wait for the container is bounded (``--timeout``, 30 s by default): a
container that never comes up is an error naming it, not a launch that waits forever.
"""

import json
import sys

import kairos
from kairos.components.container import PARAMS_FILES
from kairos.composition_interfaces.srv import LoadNode
from kairos.node import Node
from kairos.parameter import Parameter

DEFAULT_TIMEOUT_SEC = 30.0


def request_from(description):
    """A LoadNode request from a JSON description (see the module doc)."""
    known = {"package_name", "plugin_name", "node_name", "node_namespace", "log_level",
             "remap_rules", "parameters", "extra_arguments", "params_files"}
    unknown = set(description) - known
    if unknown:
        raise ValueError(f"unknown fields {sorted(unknown)} (known: {sorted(known)})")
    request = LoadNode.Request(
        package_name=description["package_name"], plugin_name=description["plugin_name"],
        node_name=description.get("node_name", ""),
        node_namespace=description.get("node_namespace", ""),
        log_level=description.get("log_level", 0),
        remap_rules=list(description.get("remap_rules", [])))
    request.parameters = [Parameter(name, value=value).to_parameter_msg()
                          for name, value in description.get("parameters", {}).items()]
    extra = [Parameter(name, value=value).to_parameter_msg()
             for name, value in description.get("extra_arguments", {}).items()]
    if description.get("params_files"):
        extra.append(Parameter(PARAMS_FILES,
                               value=list(description["params_files"])).to_parameter_msg())
    request.extra_arguments = extra
    return request


def load(node, container, requests, timeout_sec):
    """Sends each request; the responses. ``RuntimeError`` when the container does not
    answer in time."""
    service = container.rstrip("/") + "/_container/load_node"
    client = node.create_client(LoadNode, service)
    if not client.wait_for_service(timeout_sec=timeout_sec):
        raise RuntimeError(
            f"no component container answers at {service} after {timeout_sec:g} s: is the "
            f"container running under that name and namespace?")
    responses = []
    for request in requests:
        future = client.call_async(request)
        kairos.spin_until_future_complete(node, future, timeout_sec=timeout_sec)
        if not future.done():
            raise RuntimeError(f"{service} did not answer the load of "
                               f"{request.plugin_name} within {timeout_sec:g} s")
        response = future.result()
        responses.append(response)
        if not response.success:
            break
    return responses


def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    usage = "usage: python -m kairos.components.load CONTAINER REQUEST_JSON... [--timeout S]"
    timeout = DEFAULT_TIMEOUT_SEC
    if "--timeout" in argv:
        at = argv.index("--timeout")
        try:
            timeout = float(argv[at + 1])
        except (IndexError, ValueError):
            print(f"{usage}\n--timeout takes seconds", file=sys.stderr)
            return 2
        del argv[at:at + 2]
    if len(argv) < 2:
        print(usage, file=sys.stderr)
        return 2
    container, descriptions = argv[0], argv[1:]
    try:
        requests = [request_from(json.loads(d)) for d in descriptions]
    except (ValueError, KeyError, TypeError) as e:
        print(f"kairos.components.load: bad request: {e}", file=sys.stderr)
        return 2
    kairos.init(args=[])
    node = Node("load_composable_nodes")
    try:
        responses = load(node, container, requests, timeout)
    except RuntimeError as e:
        print(f"kairos.components.load: {e}", file=sys.stderr)
        return 1
    finally:
        kairos.try_shutdown()
    for request, response in zip(requests, responses):
        if response.success:
            print(f"loaded {response.full_node_name} ({request.plugin_name}, unique id "
                  f"{response.unique_id}) into {container}", flush=True)
        else:
            print(f"cannot load {request.plugin_name} into {container}: "
                  f"{response.error_message}", file=sys.stderr, flush=True)
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
