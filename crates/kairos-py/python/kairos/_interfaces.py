"""The interface packages of kairos-msgs as Python modules, generated at import.

``from kairos.geometry_msgs.msg import Twist`` works for every package kairos ships
(``kairos._kairos.interfaces()`` lists them): the classes are built here from the
descriptions of the Rust types (field names, types, array sizes, nested types, default
values), so Python and Rust never disagree on a field. They have rclpy's shape: keyword
constructors with defaults (``Twist(linear=Vector3(x=1.0))``; unset nested fields are fresh
default instances, unset arrays fresh lists), ``__slots__``, ``__eq__``, ``__repr__``,
``get_fields_and_field_types()``, the ``.msg`` file's constants as class attributes
(``Log.INFO == 20``); a service class has ``Request``, ``Response`` and ``Event`` (what
service introspection publishes).

Arrays hold what rclpy's hold: a fixed-size array of numbers (``float64[9]``,
``uint8[16]``) is a ``numpy.ndarray`` of its dtype, a sequence of numbers (``int32[]``,
``uint8[]``, ``float32[<=10]``) an ``array.array`` of its type code; each accepts any
iterable of numbers on assignment and converts it then (a wrong length or a value out of
range is an error at once, naming the field). ``byte[]`` is ``bytes``; arrays of strings,
booleans and messages are lists. Values are checked when a message is published or
returned, with the field path in the ``TypeError``.
"""

import array as _array
import copy as _copy
import importlib.abc as _abc
import importlib.machinery as _machinery
import operator as _operator
import sys as _sys
import types as _types

from kairos import _kairos

_PRIMITIVES = {
    2: ("int8", 0), 3: ("uint8", 0), 4: ("int16", 0), 5: ("uint16", 0), 6: ("int32", 0),
    7: ("uint32", 0), 8: ("int64", 0), 9: ("uint64", 0), 10: ("float", 0.0),
    11: ("double", 0.0), 13: ("char", 0), 15: ("boolean", False), 16: ("octet", 0),
    17: ("string", ""), 18: ("wstring", ""), 21: ("string", ""), 22: ("wstring", ""),
}
_NESTED, _ARRAY, _BOUNDED, _SEQUENCE = 1, 48, 96, 144

# rclpy's representation of the numeric types in arrays: array.array's type code (for
# sequences) and numpy's dtype (for fixed-size arrays).
_NUMERIC = {
    2: ("b", "int8"), 3: ("B", "uint8"), 4: ("h", "int16"), 5: ("H", "uint16"),
    6: ("i", "int32"), 7: ("I", "uint32"), 8: ("q", "int64"), 9: ("Q", "uint64"),
    10: ("f", "float32"), 11: ("d", "float64"),
}


_np = None


def _numpy():
    """numpy, imported on first use (a setter runs per message: this is its fast path)."""
    global _np
    if _np is None:
        try:
            import numpy
        except ImportError:
            raise ImportError(
                "kairos for Python needs numpy for fixed-size numeric arrays, as rclpy does: "
                "pip install numpy") from None
        _np = numpy
    return _np


def _sequence_field(name, code, capacity):
    """A property keeping a sequence of numbers as ``array.array(code)`` (at most
    ``capacity`` elements if bounded)."""
    slot = "_" + name

    def set(self, value):
        if not (isinstance(value, _array.array) and value.typecode == code):
            try:
                value = _array.array(code, value)
            except (TypeError, OverflowError) as err:
                raise type(err)(f"field '{name}' is an array.array('{code}'): {err}") from None
        if capacity and len(value) > capacity:
            raise ValueError(f"field '{name}' holds at most {capacity} elements, "
                             f"got {len(value)}")
        object.__setattr__(self, slot, value)

    return property(_operator.attrgetter(slot), set)


def _fixed_field(name, dtype_name, size):
    """A property keeping a fixed-size array of numbers as a numpy array of ``size``."""
    slot = "_" + name
    dtype = None  # numpy's dtype object, made on first use (comparing to a name parses it)

    def set(self, value):
        nonlocal dtype
        numpy = _np or _numpy()
        if dtype is None:
            dtype = numpy.dtype(dtype_name)
        if not (isinstance(value, numpy.ndarray) and value.dtype == dtype):
            try:
                value = numpy.array(value, dtype=dtype)
            except (TypeError, ValueError, OverflowError) as err:
                raise type(err)(f"field '{name}' is a numpy array of {dtype}: {err}") from None
        if value.shape != (size,):
            raise ValueError(f"field '{name}' holds exactly {size} elements, "
                             f"got shape {value.shape}")
        object.__setattr__(self, slot, value)

    return property(_operator.attrgetter(slot), set)


def _field_equal(a, b):
    if hasattr(a, "shape") and hasattr(b, "shape"):  # numpy arrays
        return a.shape == b.shape and bool((a == b).all())
    return a == b


class Message:
    """The base of every generated message class."""

    __slots__ = ()
    #: The fields, in ``.msg`` order.
    _fields = ()
    #: The ROS type name (``geometry_msgs/msg/Twist``).
    _type = ""
    #: The class of each nested message field, by name (read by the Rust side).
    _field_types = {}
    #: rclpy's type string of each field, by name.
    _fields_and_field_types = {}
    #: Default values of the non-message fields.
    _defaults = {}

    def __init__(self, **kwargs):
        nested = self._field_types
        for name in self._fields:
            if name in kwargs:
                value = kwargs.pop(name)
            elif name in nested and name not in self._defaults:
                value = nested[name]()
            else:
                value = self._defaults[name]
                if isinstance(value, list):
                    value = _copy.deepcopy(value)
            setattr(self, name, value)
        if kwargs:
            raise TypeError(f"{type(self).__name__} has no field(s) {', '.join(kwargs)}; "
                            f"its fields: {', '.join(self._fields)}")

    def __repr__(self):
        fields = ", ".join(f"{n}={getattr(self, n)!r}" for n in self._fields)
        package, kind, name = self._type.split("/")
        return f"{package}.{kind}.{name}({fields})"

    def __eq__(self, other):
        return type(other) is type(self) and all(
            _field_equal(getattr(self, n), getattr(other, n)) for n in self._fields)

    __hash__ = None

    @classmethod
    def get_fields_and_field_types(cls):
        return dict(cls._fields_and_field_types)


_descriptions = None
_services = None
_constants = None
_classes = {}


def _load():
    global _descriptions, _services, _constants
    if _descriptions is None:
        described = _kairos.interfaces()
        _descriptions, _services = described["messages"], described["services"]
        _constants = described["constants"]


def _type_string(type_id, capacity, string_capacity, nested):
    base_id = type_id
    for offset in (_SEQUENCE, _BOUNDED, _ARRAY):
        if type_id > offset:
            base_id = type_id - offset
            break
    if base_id == _NESTED:
        package, _, name = nested.split("/")
        base = f"{package}/{name}"
    else:
        base = _PRIMITIVES[base_id][0]
        if base_id in (21, 22):
            base = f"{base}<{string_capacity}>"
    if type_id > _SEQUENCE:
        return f"sequence<{base}>"
    if type_id > _BOUNDED:
        return f"sequence<{base}, {capacity}>"
    if type_id > _ARRAY:
        return f"{base}[{capacity}]"
    return base


def _zero(type_id, capacity, nested):
    """The value of a field of a type that has no Rust default of its own."""
    if type_id > _ARRAY:
        if type_id < _BOUNDED:  # fixed array
            element = _zero(type_id - _ARRAY, 0, nested)
            return [_copy.deepcopy(element) for _ in range(capacity)]
        return []
    if type_id == _NESTED:
        return None  # a fresh instance of the nested class, made by __init__
    return _PRIMITIVES[type_id][1]


def message_class(type_name):
    """The generated class of the message ``type_name`` (``pkg/msg/Type``)."""
    _load()
    cls = _classes.get(type_name)
    if cls is not None:
        return cls
    try:
        fields, defaults = _descriptions[type_name]
    except KeyError:
        raise ImportError(f"kairos has no message type '{type_name}'") from None
    package, kind, name = type_name.split("/")
    names = tuple(f[0] for f in fields)
    slots, arrays = [], {}
    field_types, types, plain = {}, {}, {}
    for field_name, type_id, capacity, string_capacity, nested in fields:
        if _BOUNDED < type_id < _SEQUENCE and type_id - _BOUNDED in _NUMERIC \
                or type_id > _SEQUENCE and type_id - _SEQUENCE in _NUMERIC:
            base = type_id - (_SEQUENCE if type_id > _SEQUENCE else _BOUNDED)
            bound = capacity if type_id < _SEQUENCE else 0
            arrays[field_name] = _sequence_field(field_name, _NUMERIC[base][0], bound)
        elif _ARRAY < type_id < _BOUNDED and type_id - _ARRAY in _NUMERIC:
            arrays[field_name] = _fixed_field(field_name, _NUMERIC[type_id - _ARRAY][1],
                                              capacity)
        slots.append("_" + field_name if field_name in arrays else field_name)
        types[field_name] = _type_string(type_id, capacity, string_capacity, nested)
        if nested is not None:
            field_types[field_name] = message_class(nested)
        if defaults is not None and field_name in defaults and type_id != _NESTED:
            value = defaults[field_name]
            if nested is not None:
                # A sequence or array of messages: its elements as instances.
                value = [_from_plain(field_types[field_name], v) for v in value]
            plain[field_name] = value
        elif type_id != _NESTED:
            value = _zero(type_id, capacity, nested)
            if nested is not None and value:
                value = [field_types[field_name]() for _ in value]
            plain[field_name] = value
    namespace = dict(_constants.get(type_name, ()))  # Log.INFO, NavSatStatus.STATUS_FIX
    cls = type(name, (Message,), {
        **namespace,
        **arrays,
        "__slots__": tuple(slots),
        "_fields": names,
        "__module__": f"kairos.{package}.{kind}",
        "__qualname__": name,
        "_type": type_name,
        "_field_types": field_types,
        "_fields_and_field_types": types,
        "_defaults": plain,
    })
    _classes[type_name] = cls
    return cls


def _from_plain(cls, value):
    """A dict of plain values (a Rust default) as an instance of ``cls``."""
    instance = cls()
    for name, v in value.items():
        nested = cls._field_types.get(name)
        if nested is not None and isinstance(v, dict):
            v = _from_plain(nested, v)
        elif nested is not None and isinstance(v, list):
            # An array or sequence of messages, itself inside a message's default.
            v = [_from_plain(nested, e) if isinstance(e, dict) else e for e in v]
        setattr(instance, name, v)
    return instance


def service_class(type_name):
    """The generated class of the service ``type_name`` (``pkg/srv/Type``)."""
    _load()
    cls = _classes.get(type_name)
    if cls is not None:
        return cls
    try:
        request, response = _services[type_name]
    except KeyError:
        raise ImportError(f"kairos has no service type '{type_name}'") from None
    package, kind, name = type_name.split("/")
    attributes = {
        "__module__": f"kairos.{package}.{kind}",
        "__qualname__": name,
        "_type": type_name,
        "Request": message_class(request),
        "Response": message_class(response),
    }
    if type_name + "_Event" in _descriptions:
        # What service introspection publishes on <service>/_service_event.
        attributes["Event"] = message_class(type_name + "_Event")
    cls = type(name, (), attributes)
    _classes[type_name] = cls
    return cls


def action_class(type_name):
    """The class of the action ``type_name`` (``pkg/action/Type``), shaped as rclpy's:
    ``Goal``, ``Result`` and ``Feedback``, and under ``Impl`` the services and messages
    that carry it (``SendGoalService``, ``GetResultService``, ``FeedbackMessage``,
    ``CancelGoalService``, ``GoalStatusMessage``)."""
    _load()
    cls = _classes.get(type_name)
    if cls is not None:
        return cls
    if type_name + "_Goal" not in _descriptions:
        raise ImportError(f"kairos has no action type '{type_name}'")
    package, kind, name = type_name.split("/")
    impl = type("Impl", (), {
        "__module__": f"kairos.{package}.{kind}",
        "__qualname__": f"{name}.Impl",
        "SendGoalService": service_class(type_name + "_SendGoal"),
        "GetResultService": service_class(type_name + "_GetResult"),
        "FeedbackMessage": message_class(type_name + "_FeedbackMessage"),
        "CancelGoalService": service_class("action_msgs/srv/CancelGoal"),
        "GoalStatusMessage": message_class("action_msgs/msg/GoalStatusArray"),
    })
    cls = type(name, (), {
        "__module__": f"kairos.{package}.{kind}",
        "__qualname__": name,
        "_type": type_name,
        "Goal": message_class(type_name + "_Goal"),
        "Result": message_class(type_name + "_Result"),
        "Feedback": message_class(type_name + "_Feedback"),
        "Impl": impl,
    })
    _classes[type_name] = cls
    return cls


def packages():
    """Every package kairos ships:
    ``{package: {"msg": [types], "srv": [types], "action": [types]}}``."""
    _load()
    found = {}
    for type_name in list(_descriptions) + list(_services):
        package, kind, name = type_name.split("/")
        if kind == "srv" and name.endswith(("_Request", "_Response", "_Event")):
            continue
        if kind == "action":
            # An action's own types are reached through its class (Fibonacci.Goal, ...).
            if not name.endswith("_Goal"):
                continue
            name = name[: -len("_Goal")]
        found.setdefault(package, {}).setdefault(kind, []).append(name)
    return found


class _Finder(_abc.MetaPathFinder, _abc.Loader):
    """Makes ``kairos.<package>`` and ``kairos.<package>.msg|srv|action`` for shipped
    packages."""

    def find_spec(self, fullname, path=None, target=None):
        parts = fullname.split(".")
        if parts[0] != "kairos" or len(parts) not in (2, 3):
            return None
        known = packages()
        if parts[1] not in known:
            return None
        if len(parts) == 3 and parts[2] not in known[parts[1]]:
            return None
        return _machinery.ModuleSpec(fullname, self, is_package=len(parts) == 2)

    def create_module(self, spec):
        return _types.ModuleType(spec.name)

    def exec_module(self, module):
        parts = module.__name__.split(".")
        if len(parts) == 2:
            module.__path__ = []
            module.__doc__ = f"The ROS 2 interface package {parts[1]} (generated by kairos)."
            module.__getattr__ = _submodules(module.__name__, packages()[parts[1]])
            return
        package, kind = parts[1], parts[2]
        make = {"srv": service_class, "action": action_class}.get(kind, message_class)
        names = packages()[package][kind]
        module.__doc__ = f"``{package}/{kind}`` (as ``from {package}.{kind} import ...``)."
        for name in names:
            setattr(module, name, make(f"{package}/{kind}/{name}"))
        module.__all__ = sorted(names)


def _submodules(package, kinds):
    """The package's ``__getattr__`` (PEP 562): ``builtin_interfaces.msg`` after only
    ``import builtin_interfaces`` is the submodule, as in ROS 2, where importing any message
    has already imported it (geometry2's test_convert.py relies on that)."""
    import importlib

    def __getattr__(name):
        if name in kinds:
            return importlib.import_module(f"{package}.{name}")
        raise AttributeError(f"module {package!r} has no attribute {name!r}")

    return __getattr__


def install():
    """Adds the finder after Python's own, so kairos's real submodules come first."""
    if not any(isinstance(f, _Finder) for f in _sys.meta_path):
        _sys.meta_path.append(_Finder())
