"""rclpy's ``rclpy.service_introspection``: what a service or client publishes about its
calls on ``<service>/_service_event`` once ``configure_introspection`` is called."""

import enum


class ServiceIntrospectionState(enum.IntEnum):
    """Nothing (``OFF``, the default), an event per moment of each call (``METADATA``),
    or the events with the request or response in them (``CONTENTS``)."""

    OFF = 0
    METADATA = 1
    CONTENTS = 2
