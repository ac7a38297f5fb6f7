"""``launch_ros.utilities``: namespaces, remapping rules and node-name counts, as
launch_ros' helpers compute them."""

from kairos._layout import stands_for_package

# ROS 2's launch_ros.utilities.<module> paths are this module (see kairos._layout).
stands_for_package(__name__, (
    "evaluate_parameters", "namespace_utils", "normalize_parameters",
    "normalize_remap_rule", "plugin_support", "to_parameters_list", "track_node_names"))

from collections import defaultdict

from kairos.launch._core import normalize_to_list_of_substitutions
from kairos.launch.utilities import ensure_argument_type


def is_root_namespace(ns):
    return ns == "/"


def is_namespace_absolute(ns):
    return ns.startswith("/")


def prefix_namespace(base_ns, ns):
    """``ns`` under ``base_ns`` when relative, else ``ns``; either alone when the other is
    None (None when both are); trailing slashes dropped (but for the root)."""
    if base_ns is None and ns is None:
        return None
    if ns is None:
        combined = base_ns
    elif not base_ns or is_namespace_absolute(ns):
        combined = ns
    else:
        combined = ("" if is_root_namespace(base_ns) else base_ns) + "/" + ns
    return combined if is_root_namespace(combined) else combined.rstrip("/")


def make_namespace_absolute(ns):
    if ns is None:
        return None
    return ns if is_namespace_absolute(ns) else "/" + ns


def normalize_remap_rule(remap_rule):
    """A ``(from, to)`` rule as two tuples of substitutions; ``TypeError`` for anything
    but a pair."""
    ensure_argument_type(remap_rule, (tuple,), "remap_rule")
    if len(remap_rule) != 2:
        raise TypeError(f"remap_rule must be a tuple of length 2, got length {len(remap_rule)}")
    return (tuple(normalize_to_list_of_substitutions(remap_rule[0])),
            tuple(normalize_to_list_of_substitutions(remap_rule[1])))


def normalize_remap_rules(remap_rules):
    yield from map(normalize_remap_rule, remap_rules)


def add_node_name(context, node_name):
    """Counts one more node of this fully qualified name in the launch."""
    names = getattr(context, "_unique_ros_node_names", None)
    if names is None:
        names = context._unique_ros_node_names = defaultdict(int)
    names[node_name] += 1


def get_node_name_count(context, node_name):
    """How many nodes of this name the launch has counted."""
    return getattr(context, "_unique_ros_node_names", {}).get(node_name, 0)


__all__ = ["add_node_name", "get_node_name_count", "is_namespace_absolute",
           "is_root_namespace", "make_namespace_absolute", "normalize_remap_rule",
           "normalize_remap_rules", "prefix_namespace"]


from kairos.launch_ros._parameters import (  # noqa: E402  (imports this module's helpers)
    evaluate_parameter_dict, evaluate_parameters, normalize_parameter_dict,
    normalize_parameters)
