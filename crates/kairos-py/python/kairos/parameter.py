"""rclpy's ``Parameter``: a name, a type and a value that agree, and its conversions to and
from ``rcl_interfaces`` messages and YAML parameter files.

A ``Parameter`` is immutable and checked when built: a value whose Python type is not one
ROS parameters carry is a ``TypeError``; a value that does not match the given type is a
``ValueError``. The node-side rules (declaration, descriptors, callbacks) are in
``kairos._parameters``.
"""

import array
import enum

import yaml

from kairos.rcl_interfaces.msg import Parameter as ParameterMsg
from kairos.rcl_interfaces.msg import ParameterType, ParameterValue

PARAMETER_SEPARATOR_STRING = "."

# The field of ``ParameterValue`` that carries each type.
_FIELD = {
    ParameterType.PARAMETER_BOOL: "bool_value",
    ParameterType.PARAMETER_INTEGER: "integer_value",
    ParameterType.PARAMETER_DOUBLE: "double_value",
    ParameterType.PARAMETER_STRING: "string_value",
    ParameterType.PARAMETER_BYTE_ARRAY: "byte_array_value",
    ParameterType.PARAMETER_BOOL_ARRAY: "bool_array_value",
    ParameterType.PARAMETER_INTEGER_ARRAY: "integer_array_value",
    ParameterType.PARAMETER_DOUBLE_ARRAY: "double_array_value",
    ParameterType.PARAMETER_STRING_ARRAY: "string_array_value",
}

_SEQUENCES = (list, tuple, array.array)


def _all(values, kind):
    return all(isinstance(v, kind) for v in values)


class Parameter:
    class Type(enum.IntEnum):
        NOT_SET = ParameterType.PARAMETER_NOT_SET
        BOOL = ParameterType.PARAMETER_BOOL
        INTEGER = ParameterType.PARAMETER_INTEGER
        DOUBLE = ParameterType.PARAMETER_DOUBLE
        STRING = ParameterType.PARAMETER_STRING
        BYTE_ARRAY = ParameterType.PARAMETER_BYTE_ARRAY
        BOOL_ARRAY = ParameterType.PARAMETER_BOOL_ARRAY
        INTEGER_ARRAY = ParameterType.PARAMETER_INTEGER_ARRAY
        DOUBLE_ARRAY = ParameterType.PARAMETER_DOUBLE_ARRAY
        STRING_ARRAY = ParameterType.PARAMETER_STRING_ARRAY

        @classmethod
        def from_parameter_value(cls, value):
            """The type of a Python value; ``TypeError`` for a value no parameter carries.
            ``bool`` is tested before ``int`` (a bool is an int in Python)."""
            if value is None:
                return cls.NOT_SET
            for kind, type_ in ((bool, cls.BOOL), (int, cls.INTEGER), (float, cls.DOUBLE),
                                (str, cls.STRING)):
                if isinstance(value, kind):
                    return type_
            if isinstance(value, _SEQUENCES):
                for kind, type_ in ((bytes, cls.BYTE_ARRAY), (bool, cls.BOOL_ARRAY),
                                    (int, cls.INTEGER_ARRAY), (float, cls.DOUBLE_ARRAY),
                                    (str, cls.STRING_ARRAY)):
                    if _all(value, kind):
                        return type_
                raise TypeError(
                    f"The given value is not a list of one of the allowed types '{value}'.")
            raise TypeError(f"The given value is not one of the allowed types '{value}'.")

        def check(self, value):
            """Whether ``value`` is a value of this type."""
            T = Parameter.Type
            if self == T.NOT_SET:
                return value is None
            scalar = {T.BOOL: bool, T.INTEGER: int, T.DOUBLE: float, T.STRING: str}
            if self in scalar:
                return isinstance(value, scalar[self])
            if self == T.BYTE_ARRAY:
                return isinstance(value, (list, tuple)) and all(
                    isinstance(v, bytes) and len(v) == 1 for v in value)
            if self == T.BOOL_ARRAY:
                return isinstance(value, (list, tuple)) and _all(value, bool)
            if self == T.INTEGER_ARRAY:
                return isinstance(value, _SEQUENCES) and _all(value, int)
            if self == T.DOUBLE_ARRAY:
                return isinstance(value, _SEQUENCES) and _all(value, float)
            if self == T.STRING_ARRAY:
                return isinstance(value, (list, tuple)) and _all(value, str)
            return False

    @classmethod
    def from_parameter_msg(cls, msg):
        """A ``Parameter`` from an ``rcl_interfaces/msg/Parameter``."""
        type_ = Parameter.Type(msg.value.type)
        value = None
        if type_ != Parameter.Type.NOT_SET:
            value = getattr(msg.value, _FIELD[int(type_)])
            if isinstance(value, (array.array, bytes, bytearray)) or (
                    type_ >= Parameter.Type.BYTE_ARRAY and not isinstance(value, list)):
                value = _as_list(type_, value)
        return cls(msg.name, type_, value)

    def __init__(self, name, type_=None, value=None):
        if type_ is None:
            type_ = Parameter.Type.from_parameter_value(value)
        if not isinstance(type_, Parameter.Type):
            raise TypeError(f"type must be an instance of '{Parameter.Type!r}'")
        if not type_.check(value):
            raise ValueError(f"Type '{type_}' and value '{value}' do not agree")
        self._type_ = type_
        self._name = name
        self._value = value

    @property
    def name(self):
        return self._name

    @property
    def type_(self):
        return self._type_

    @property
    def value(self):
        return self._value

    def get_parameter_value(self):
        """This parameter's value as an ``rcl_interfaces/msg/ParameterValue``."""
        msg = ParameterValue(type=int(self._type_))
        if self._type_ != Parameter.Type.NOT_SET:
            value = self._value
            if self._type_ >= Parameter.Type.BYTE_ARRAY:
                value = list(value)
            setattr(msg, _FIELD[int(self._type_)], value)
        return msg

    def to_parameter_msg(self):
        """This parameter as an ``rcl_interfaces/msg/Parameter``."""
        return ParameterMsg(name=self._name, value=self.get_parameter_value())

    def __repr__(self):
        return f"Parameter({self._name!r}, {self._type_!s}, {self._value!r})"


def _as_list(type_, value):
    if type_ == Parameter.Type.BYTE_ARRAY:
        return [bytes([b]) if isinstance(b, int) else b for b in value]
    return list(value)


def get_parameter_value(string_value):
    """The ``ParameterValue`` a command-line string means, read as YAML (``"3"`` is an
    integer, ``"[1.0, 2.0]"`` a double array); anything else is a string."""
    try:
        parsed = yaml.safe_load(string_value)
    except yaml.YAMLError:
        parsed = string_value
    msg = ParameterValue()
    scalar = ((bool, ParameterType.PARAMETER_BOOL), (int, ParameterType.PARAMETER_INTEGER),
              (float, ParameterType.PARAMETER_DOUBLE))
    for kind, type_ in scalar:
        if isinstance(parsed, kind):
            msg.type = type_
            setattr(msg, _FIELD[type_], parsed)
            return msg
    if isinstance(parsed, list):
        arrays = ((bool, ParameterType.PARAMETER_BOOL_ARRAY),
                  (int, ParameterType.PARAMETER_INTEGER_ARRAY),
                  (float, ParameterType.PARAMETER_DOUBLE_ARRAY),
                  (str, ParameterType.PARAMETER_STRING_ARRAY))
        for kind, type_ in arrays:
            if _all(parsed, kind):
                msg.type = type_
                setattr(msg, _FIELD[type_], parsed)
                return msg
        parsed = None
    msg.type = ParameterType.PARAMETER_STRING
    msg.string_value = parsed if isinstance(parsed, str) else string_value
    return msg


def parameter_value_to_python(parameter_value):
    """The Python value of a ``ParameterValue`` (None when NOT_SET); ``RuntimeError`` for a
    type no parameter has."""
    type_ = parameter_value.type
    if type_ == ParameterType.PARAMETER_NOT_SET:
        return None
    if type_ not in _FIELD:
        raise RuntimeError(f"unexpected parameter type {type_}")
    value = getattr(parameter_value, _FIELD[type_])
    if type_ >= ParameterType.PARAMETER_BYTE_ARRAY:
        return _as_list(Parameter.Type(type_), value)
    return value


def parameter_dict_from_yaml_file(parameter_file, use_wildcard=False, target_nodes=None,
                                  namespace=""):
    """The parameters of a ROS parameter file, as ``{name: rcl_interfaces/msg/Parameter}``.

    ``target_nodes`` picks the node sections (all but ``/**`` when empty); ``use_wildcard``
    adds the ``/**`` section first, so a node's own values win. ``RuntimeError`` for a
    named node the file lacks or a section without ``ros__parameters``."""
    with open(parameter_file) as f:
        document = yaml.safe_load(f)
    if not isinstance(document, dict):
        raise RuntimeError(f"{parameter_file} is not a ROS parameter file (no node sections)")
    keys = []
    if use_wildcard and "/**" in document:
        keys.append("/**")
    if target_nodes:
        for node in target_nodes:
            if node not in document:
                raise RuntimeError(f"Param file does not contain parameters for {node}, "
                                   f"only for nodes: {list(document)}")
            keys.append(node)
    else:
        keys.extend(k for k in document if k != "/**")
    if not keys:
        raise RuntimeError("Param file does not contain selected parameters")
    values = {}
    for key in keys:
        section = document[key]
        if not isinstance(section, dict) or "ros__parameters" not in section:
            raise RuntimeError(f"YAML file is not a valid ROS parameter file for node {key}")
        values.update(section["ros__parameters"])
    return _flatten(namespace, values)


def _flatten(prefix, values):
    flat = {}
    for name, value in values.items():
        full = prefix + name
        if isinstance(value, dict):
            flat.update(_flatten(full + PARAMETER_SEPARATOR_STRING, value))
        else:
            flat[full] = ParameterMsg(name=full, value=get_parameter_value(str(value)))
    return flat
