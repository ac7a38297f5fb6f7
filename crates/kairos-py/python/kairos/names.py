"""ROS names as rcl and rmw check them: node names, namespaces, topic and service names
(before and after expansion), and their expansion against a node. rclpy's modules
``validate_node_name``, ``validate_namespace``, ``validate_topic_name``,
``validate_full_topic_name`` and ``expand_topic_name`` are views of this one.

A bad name raises the exception rclpy raises (``InvalidTopicNameException``, ...), with
rcl's wording of the rule it breaks and a caret under the first offending character.
"""

import re

from kairos.exceptions import (InvalidNamespaceException, InvalidNodeNameException,
                               InvalidServiceNameException, InvalidTopicNameException)

_MAX_NODE_NAME = 255


def _first(name, pattern):
    match = re.search(pattern, name)
    return match.start() if match else None


def validate_node_name(node_name):
    """True, or raises :class:`InvalidNodeNameException`."""
    if not node_name:
        raise InvalidNodeNameException(node_name, "node name must not be empty", 0)
    bad = _first(node_name, r"[^A-Za-z0-9_]")
    if bad is not None:
        raise InvalidNodeNameException(
            node_name, "node name must not contain characters other than alphanumerics or '_'",
            bad)
    if node_name[0].isdigit():
        raise InvalidNodeNameException(node_name, "node name must not start with a number", 0)
    if len(node_name) > _MAX_NODE_NAME:
        raise InvalidNodeNameException(
            node_name, f"node name should not exceed {_MAX_NODE_NAME} characters",
            _MAX_NODE_NAME)
    return True


def _check_absolute(name, what, error):
    if not name:
        raise error(name, f"{what} must not be empty", 0)
    if not name.startswith("/"):
        raise error(name, f"{what} must be absolute, it must lead with a '/'", 0)
    if len(name) > 1 and name.endswith("/"):
        raise error(name, f"{what} must not end with a forward slash", len(name) - 1)
    bad = _first(name, r"[^A-Za-z0-9_/]")
    if bad is not None:
        raise error(name, f"{what} must not contain characters other than alphanumerics, "
                          "'_', or '/'", bad)
    repeated = name.find("//")
    if repeated >= 0:
        raise error(name, f"{what} must not contain repeated forward slashes", repeated + 1)
    digit = _first(name, r"/[0-9]")
    if digit is not None:
        raise error(name, f"{what} token must not start with a number", digit + 1)
    return True


def validate_namespace(namespace):
    """True, or raises :class:`InvalidNamespaceException`."""
    return _check_absolute(namespace, "namespace", InvalidNamespaceException)


def _kind(is_service):
    if is_service:
        return "service name", InvalidServiceNameException
    return "topic name", InvalidTopicNameException


def validate_full_topic_name(name, *, is_service=False):
    """True if ``name`` is a valid expanded (absolute) topic or service name, else raises
    :class:`InvalidTopicNameException` (:class:`InvalidServiceNameException`)."""
    what, error = _kind(is_service)
    return _check_absolute(name, what, error)


def validate_topic_name(name, *, is_service=False):
    """True if ``name`` is a valid topic or service name before expansion (relative, ``~``
    and ``{node}``/``{ns}`` substitutions allowed), else raises as
    :func:`validate_full_topic_name`."""
    what, error = _kind(is_service)
    if not name:
        raise error(name, f"{what} must not be empty", 0)
    if name.endswith("/"):
        raise error(name, f"{what} must not end with a forward slash", len(name) - 1)
    bad = _first(name, r"[^A-Za-z0-9_/~{}]")
    if bad is not None:
        raise error(name, f"{what} must not contain characters other than alphanumerics, "
                          "'_', '~', '{', or '}'", bad)
    if name[0].isdigit():
        raise error(name, f"{what} must not start with a number", 0)
    repeated = name.find("//")
    if repeated >= 0:
        raise error(name, f"{what} must not contain repeated forward slashes", repeated + 1)
    tilde = name.find("~")
    if tilde > 0:
        raise error(name, f"{what} must have the tilde (~) as the first character", tilde)
    if tilde == 0 and len(name) > 1 and name[1] != "/":
        raise error(name, f"{what} must not have a tilde that is not followed by a forward "
                          "slash", 1)
    depth = 0
    for index, char in enumerate(name):
        if char == "{":
            depth += 1
        elif char == "}":
            depth -= 1
        if depth not in (0, 1):
            raise error(name, f"{what} must not have unmatched curly braces", index)
    if depth:
        raise error(name, f"{what} must not have unmatched curly braces", name.rfind("{"))
    digit = _first(name, r"/[0-9]")
    if digit is not None:
        raise error(name, f"{what} token must not start with a number", digit + 1)
    return True


def expand_topic_name(topic_name, node_name, node_namespace):
    """``topic_name`` expanded for node ``node_name`` in ``node_namespace``: relative names
    under the namespace, ``~`` as the node's own, ``{node}`` and ``{ns}`` substituted. A
    ``ValueError`` names the part that is invalid."""
    try:
        validate_node_name(node_name)
    except InvalidNodeNameException as err:
        raise ValueError(f"node name is invalid: {err}") from None
    try:
        validate_namespace(node_namespace)
    except InvalidNamespaceException as err:
        raise ValueError(f"namespace is invalid: {err}") from None
    try:
        validate_topic_name(topic_name)
    except InvalidTopicNameException as err:
        raise ValueError(f"topic name is invalid: {err}") from None
    prefix = "" if node_namespace == "/" else node_namespace
    name = topic_name
    if name.startswith("~"):
        name = f"{prefix}/{node_name}" + name[1:]
    unknown = [s for s in re.findall(r"\{([^}]*)\}", name) if s not in ("node", "ns", "namespace")]
    if unknown:
        raise ValueError(f"topic name is invalid: unknown substitution '{{{unknown[0]}}}'")
    name = name.replace("{node}", node_name)
    name = name.replace("{ns}", node_namespace).replace("{namespace}", node_namespace)
    if not name.startswith("/"):
        name = f"{prefix}/{name}"
    return name.replace("//", "/")
