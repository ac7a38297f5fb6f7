"""Messages as bytes, as rclpy.serialization: the CDR payload (with its encapsulation
header) that goes on the wire, byte for byte what rmw_zenoh sends."""

from kairos import _kairos


def serialize_message(message) -> bytes:
    """The CDR payload of ``message``; a ``TypeError`` if it is not a message."""
    return bytes(_kairos.serialize_message(message))


def deserialize_message(serialized_message: bytes, message_type):
    """The ``message_type`` message that ``serialized_message`` holds; a ``ValueError`` if
    the bytes are not one."""
    return _kairos.deserialize_message(bytes(serialized_message), message_type)
