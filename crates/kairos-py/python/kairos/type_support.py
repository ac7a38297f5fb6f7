"""rclpy.type_support: checks that a class is a message or a service kairos can carry."""

from kairos.exceptions import NoTypeSupportImportedException


def check_for_type_support(msg_or_srv_type):
    """Passes for a kairos message or service class; for a class of rosidl's shape (a
    metaclass with ``_TYPE_SUPPORT``), imports its type support and raises
    ``NoTypeSupportImportedException`` if there is none. Anything else is an
    ``AttributeError``, as in rclpy."""
    if isinstance(msg_or_srv_type, type) and getattr(msg_or_srv_type, "_type", ""):
        return
    meta = type(msg_or_srv_type)
    if meta._TYPE_SUPPORT is None:
        meta.__import_type_support__()
    if meta._TYPE_SUPPORT is None:
        raise NoTypeSupportImportedException()


def _is_service(cls):
    return hasattr(cls, "Request") and hasattr(cls, "Response")


def check_is_valid_msg_type(msg_type):
    check_for_type_support(msg_type)
    if _is_service(msg_type) or not hasattr(msg_type, "get_fields_and_field_types"):
        raise RuntimeError(f"{msg_type!r} is not a message type")


def check_is_valid_srv_type(srv_type):
    check_for_type_support(srv_type)
    if not _is_service(srv_type):
        raise RuntimeError(f"{srv_type!r} is not a service type")
