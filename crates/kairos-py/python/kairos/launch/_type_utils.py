"""ROS 2's ``launch.utilities.type_utils``: the values a launch argument or parameter may
take (``int``, ``float``, ``bool``, ``str`` and ``List`` of one of them), and text
turned into them by YAML's rules (``on`` is true, ``'1'`` is text, ``[1, 2]`` a list)
or by a type asked for. A list holds one type; ``can_be_str`` lets text sit beside it.

Errors say which: ``ValueError`` for a value or a type that is not allowed,
``TypeError`` for an argument of the wrong kind."""

import typing

import yaml

from kairos.launch._core import (
    Substitution, normalize_to_list_of_substitutions, perform_substitutions)

#: The types of a value, in a list or alone.
SCALAR_TYPES = (int, float, bool, str)

_TRUE = ("true", "on", "yes", "1")
_FALSE = ("false", "off", "no", "0")


def is_typing_list(data_type):
    """Whether ``data_type`` is ``typing.List`` (with or without its member type)."""
    return data_type is typing.List or typing.get_origin(data_type) is list and \
        data_type is not list


def is_valid_scalar_type(data_type):
    return data_type in SCALAR_TYPES


def extract_type(data_type):
    """``(member type, is a list)`` of an allowed type; anything else is a ValueError."""
    if is_valid_scalar_type(data_type):
        return data_type, False
    if is_typing_list(data_type):
        args = typing.get_args(data_type)
        if len(args) == 1 and is_valid_scalar_type(args[0]):
            return args[0], True
    raise ValueError(f"{data_type!r} is not an allowed type: int, float, bool, str or a "
                     "typing.List of one of them")


def _one_type(members, can_be_str):
    kinds = {type(m) for m in members}
    if not kinds <= set(SCALAR_TYPES):
        return False
    if can_be_str:
        kinds.discard(str)
    return len(kinds) <= 1


def is_instance_of_valid_type(value, *, can_be_str=False):
    """Whether ``value`` is an allowed scalar, or a list of one type (text beside it
    when ``can_be_str``)."""
    if isinstance(value, list):
        return _one_type(value, can_be_str)
    return type(value) in SCALAR_TYPES


def is_instance_of(value, data_type, *, can_be_str=False):
    """Whether ``value`` is of ``data_type`` (``None``: of any allowed type), text
    standing for it too when ``can_be_str``."""
    if data_type is None:
        return is_instance_of_valid_type(value, can_be_str=can_be_str)
    member, is_list = extract_type(data_type)

    def fits(x):
        return type(x) is member or (can_be_str and isinstance(x, str))
    if is_list:
        return isinstance(value, list) and all(fits(x) for x in value)
    return fits(value)


def _as_bool(text):
    if text.lower() in _TRUE:
        return True
    if text.lower() in _FALSE:
        return False
    raise ValueError(f"'{text}' is not a boolean (true, false, on, off, yes, no, 1, 0)")


def coerce_to_type(value, data_type=None, *, can_be_str=False):
    """The text ``value`` as ``data_type`` (``None``: what YAML reads it as)."""
    if not isinstance(value, str):
        raise TypeError(f"coerce_to_type takes text, not {type(value).__name__}")
    if data_type is str:
        return value
    if data_type is not None:
        member, is_list = extract_type(data_type)
        if not is_list:
            try:
                if member is bool:
                    return _as_bool(value)
                return member(value)
            except ValueError:
                if can_be_str:
                    return value
                raise ValueError(f"'{value}' is not a {member.__name__}") from None
    if data_type is None and value == "":
        return value
    try:
        read = yaml.safe_load(value)
    except yaml.YAMLError as e:
        raise ValueError(f"'{value}' cannot be read as YAML: {e}") from None
    if not is_instance_of(read, data_type, can_be_str=can_be_str):
        raise ValueError(f"'{value}' reads as {read!r}, which is not "
                         f"{'an allowed value' if data_type is None else data_type}")
    return read


def coerce_list(value, data_type=None, *, can_be_str=False):
    """A list of text, each member as ``data_type`` (``None``: as YAML reads it), all
    of one type."""
    if not isinstance(value, list) or not all(isinstance(x, str) for x in value):
        raise TypeError(f"coerce_list takes a list of text, not {value!r}")
    result = [coerce_to_type(x, data_type, can_be_str=can_be_str) for x in value]
    wanted = None if data_type is None else typing.List[data_type]
    if not is_instance_of(result, wanted, can_be_str=can_be_str):
        raise ValueError(f"{value!r} reads as {result!r}, not a list of one type")
    return result


def get_typed_value(value, data_type, *, can_be_str=False):
    """Text, or a list of text, as ``data_type``."""
    if isinstance(value, str):
        return coerce_to_type(value, data_type, can_be_str=can_be_str)
    if isinstance(value, list):
        member = None
        if data_type is not None:
            member, is_list = extract_type(data_type)
            if not is_list:
                raise TypeError(f"a list cannot be a {data_type.__name__}")
        return coerce_list(value, member, can_be_str=can_be_str)
    raise TypeError(f"get_typed_value takes text or a list of text, not {value!r}")


def is_substitution(x):
    """Whether ``x`` is a substitution, or a list of text and substitutions with one."""
    if isinstance(x, Substitution):
        return True
    if isinstance(x, (list, tuple)) and x:
        return all(isinstance(i, (str, Substitution)) for i in x) and \
            any(isinstance(i, Substitution) for i in x)
    return False


def is_normalized_substitution(x):
    """Whether ``x`` is a non-empty list of substitutions only."""
    return isinstance(x, list) and bool(x) and all(isinstance(i, Substitution) for i in x)


def normalize_typed_substitution(value, data_type):
    """``value`` with each substitution in it as a list of substitutions, the rest
    checked against ``data_type``."""
    member, is_list = extract_type(data_type) if data_type is not None else (None, None)
    if is_substitution(value):
        return normalize_to_list_of_substitutions(value)
    if is_list or (data_type is None and isinstance(value, list)):
        if not isinstance(value, list):
            raise TypeError(f"{value!r} is not a list, as {data_type} is")
        out = []
        for x in value:
            if is_substitution(x):
                out.append(normalize_to_list_of_substitutions(x))
            elif member is not None and type(x) is not member:
                raise TypeError(f"{x!r} in {value!r} is not a {member.__name__}")
            elif member is None and type(x) not in SCALAR_TYPES:
                raise TypeError(f"{x!r} in {value!r} is not an allowed value")
            else:
                out.append(x)
        return out
    if not is_instance_of(value, data_type):
        raise TypeError(f"{value!r} is not {data_type or 'an allowed value'}")
    return value


def perform_typed_substitution(context, value, data_type):
    """The value of ``value`` (normalized, see :func:`normalize_typed_substitution`)
    with its substitutions performed and read as ``data_type``."""
    member, is_list = extract_type(data_type) if data_type is not None else (None, None)
    if is_normalized_substitution(value):
        return coerce_to_type(perform_substitutions(context, value), data_type)
    if isinstance(value, list) and (is_list or data_type is None):
        result = [coerce_to_type(perform_substitutions(context, x), member)
                  if is_normalized_substitution(x) else x for x in value]
        if not is_instance_of(result, data_type):
            raise ValueError(f"{result!r} is not {data_type or 'a list of one type'}")
        return result
    if not is_instance_of(value, data_type):
        raise TypeError(f"{value!r} is not {data_type or 'an allowed value'}")
    return value
