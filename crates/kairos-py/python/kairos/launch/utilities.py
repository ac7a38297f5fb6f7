"""Helpers of ROS 2's ``launch.utilities`` that launch files use."""

#: This module stands for ROS 2's package of one-class modules of the same name:
#: ``launch.utilities.<module>`` imports as this module under ``kairos.run`` (see ``kairos.run``).
__path__ = []

from kairos.launch._core import (  # noqa: F401
    normalize_to_list_of_substitutions, perform_substitutions)


def is_a(obj, entity_type):
    return isinstance(obj, entity_type)


def is_a_subclass(obj, entity_type):
    return isinstance(obj, entity_type) or (isinstance(obj, type) and issubclass(obj, entity_type))


def ensure_argument_type(argument, types, argument_name, caller=None):
    if not isinstance(types, (list, tuple)):
        types = [types]
    if not any(isinstance(argument, t) for t in types):
        names = ", ".join(getattr(t, "__name__", str(t)) for t in types)
        raise TypeError(
            f"{caller + ': ' if caller else ''}'{argument_name}' must be of type {names}, "
            f"not {type(argument).__name__}")
