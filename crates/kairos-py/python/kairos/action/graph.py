"""rclpy's action graph queries: the actions a node serves or calls, read from the
graph's ``<action>/_action/send_goal`` services (an action's first entity)."""

_SEND_GOAL = "/_action/send_goal"
_SUFFIX = "_SendGoal"


def _actions(entities):
    found = {}
    for name, types in entities:
        if not name.endswith(_SEND_GOAL):
            continue
        found.setdefault(name[:-len(_SEND_GOAL)], set()).update(
            t[:-len(_SUFFIX)] if t.endswith(_SUFFIX) else t for t in types)
    return [(name, sorted(types)) for name, types in sorted(found.items())]


def get_action_client_names_and_types_by_node(node, remote_node_name, remote_node_namespace):
    """The actions node ``remote_node_namespace``/``remote_node_name`` has clients of."""
    return _actions(node.get_client_names_and_types_by_node(remote_node_name,
                                                            remote_node_namespace))


def get_action_server_names_and_types_by_node(node, remote_node_name, remote_node_namespace):
    """The actions node ``remote_node_namespace``/``remote_node_name`` serves."""
    return _actions(node.get_service_names_and_types_by_node(remote_node_name,
                                                             remote_node_namespace))


def get_action_names_and_types(node):
    """Every action with a server or a client in the graph."""
    return _actions(node.get_service_names_and_types())
