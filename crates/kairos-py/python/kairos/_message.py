"""The base of kairos's Python message classes: fields in ``__slots__``, ROS type in ``_type``.

The Rust side (``crates/kairos-py/src/msg.rs``) reads and writes exactly these fields.
"""


class Message:
    __slots__ = ()
    _type = ""
    _defaults = {}
    #: The class of each nested message field (by name); read by the Rust side.
    _field_types = {}

    def __init__(self, **fields):
        for name in self.__slots__:
            setattr(self, name, fields.pop(name, self._defaults.get(name)))
        if fields:
            raise TypeError(f"{type(self).__name__} has no field(s) {', '.join(fields)}; "
                            f"fields: {', '.join(self.__slots__)}")

    def __repr__(self):
        fields = ", ".join(f"{n}={getattr(self, n)!r}" for n in self.__slots__)
        return f"{self._type.replace('/', '.')}({fields})"

    def __eq__(self, other):
        return type(other) is type(self) and all(
            getattr(self, n) == getattr(other, n) for n in self.__slots__)

    def get_fields_and_field_types(self):
        return {n: type(self._defaults.get(n)).__name__ for n in self.__slots__}
