"""Helpers of ROS 2's ``launch.utilities`` that launch files use."""

from kairos._layout import stands_for_package

# ROS 2's launch.utilities.<module> paths are this module (see kairos._layout).
stands_for_package(__name__, (
    "class_tools_impl", "ensure_argument_type_impl", "normalize_to_list_of_entities_impl",
    "normalize_to_list_of_substitutions_impl", "perform_substitutions_impl",
    "signal_management", "type_utils", "typing_file_path",
    "visit_all_entities_and_collect_futures_impl"))

from kairos.launch._core import Substitution, perform_substitutions  # noqa: F401
from kairos.launch._core import normalize_to_list_of_substitutions as _normalize
# launch.utilities.type_utils (see kairos.launch._type_utils).
from kairos.launch._type_utils import (  # noqa: F401
    coerce_list, coerce_to_type, extract_type, get_typed_value, is_instance_of,
    is_instance_of_valid_type, is_normalized_substitution, is_substitution, is_typing_list,
    is_valid_scalar_type, normalize_typed_substitution, perform_typed_substitution)


def normalize_to_list_of_substitutions(subs):
    """Text, a substitution, or an iterable of both, as a list of substitutions; anything
    else (``None``, a number, a nested list) is a ``TypeError`` naming it, as in ROS 2.
    (kairos's own actions also take numbers where ROS 2's take them as text.)"""
    items = [subs] if isinstance(subs, (str, Substitution)) else subs
    try:
        items = list(items)
    except TypeError:
        raise TypeError(f"expected text, a Substitution or a list of them, not "
                        f"{type(subs).__name__} ({subs!r})") from None
    for item in items:
        if not isinstance(item, (str, Substitution)):
            raise TypeError(f"expected text or a Substitution in the list, not "
                            f"{type(item).__name__} ({item!r})")
    return _normalize(items)


def isclassinstance(obj):
    """Whether ``obj`` is an instance of a class (not a class or a module)."""
    return hasattr(obj, "__class__") and not isinstance(obj, type) and \
        type(obj).__name__ != "module"


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
