"""``rosidl_runtime_py.utilities``: an interface's class from its name, as ROS 2 tools
and rosbag2 scripts look them up (``get_message('std_msgs/msg/String')``).

A name of the wrong shape raises ``ValueError``; a type kairos does not ship raises
``ModuleNotFoundError`` naming it, as rosidl does for a package that is not installed."""

from kairos import _interfaces


def _parts(identifier, kind):
    parts = identifier.split("/")
    if len(parts) == 2:
        parts = [parts[0], kind, parts[1]]
    if len(parts) != 3 or parts[1] != kind or not all(parts):
        raise ValueError(f"Invalid {'message' if kind == 'msg' else kind} type "
                         f"'{identifier}': expected 'package/{kind}/Name' or 'package/Name'")
    return "/".join(parts)


def _load(find, name):
    try:
        return find(name)
    except ImportError as e:
        raise ModuleNotFoundError(str(e), name=name.split("/")[0]) from None


def get_message(identifier):
    """The message class of ``pkg/msg/Type`` (or ``pkg/Type``)."""
    return _load(_interfaces.message_class, _parts(identifier, "msg"))


def get_service(identifier):
    """The service class of ``pkg/srv/Type`` (or ``pkg/Type``)."""
    return _load(_interfaces.service_class, _parts(identifier, "srv"))


def get_action(identifier):
    """The action class of ``pkg/action/Type`` (or ``pkg/Type``)."""
    return _load(_interfaces.action_class, _parts(identifier, "action"))


def get_interface(identifier):
    """The class of a message, service or action by its full name."""
    parts = identifier.split("/")
    if len(parts) != 3:
        raise ValueError(f"Expected the full name of an interface, e.g. "
                         f"'std_msgs/msg/String', got '{identifier}'")
    finders = {"msg": get_message, "srv": get_service, "action": get_action}
    if parts[1] not in finders:
        raise ValueError(f"'{identifier}' is not a msg, srv or action")
    return finders[parts[1]](identifier)


def is_message(cls):
    return hasattr(cls, "get_fields_and_field_types")


def is_service(cls):
    return hasattr(cls, "Request") and hasattr(cls, "Response")


def is_action(cls):
    return hasattr(cls, "Goal") and hasattr(cls, "Result") and hasattr(cls, "Feedback")
