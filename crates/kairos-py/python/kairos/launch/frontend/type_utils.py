"""The data types a frontend attribute may be read as, by ROS 2's identifiers."""

from typing import List

from kairos.launch._type_utils import is_typing_list
from kairos.launch.frontend.entity import Entity


def check_is_list_entity(data_type):
    """Whether ``data_type`` is ``List[Entity]`` (children read as an attribute)."""
    return is_typing_list(data_type) and isinstance(data_type.__args__[0], type) and \
        issubclass(data_type.__args__[0], Entity)


_IDENTIFIERS = {
    "str": str, "bool": bool, "float": float, "int": int,
    "list_of_str": List[str], "list_of_bool": List[bool], "list_of_float": List[float],
    "list_of_int": List[int], "yaml": None,
}


def get_data_type_from_identifier(type_identifier):
    """``'list_of_int'``: ``List[int]``; an unknown identifier is a ``ValueError``."""
    if type_identifier not in _IDENTIFIERS:
        raise ValueError(f"Got invalid type identifier '{type_identifier}'")
    return _IDENTIFIERS[type_identifier]
