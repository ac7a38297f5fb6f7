"""rclpy's parameters, enough for ``use_sim_time`` and plain declared values."""

import enum


class Parameter:
    class Type(enum.IntEnum):
        NOT_SET = 0
        BOOL = 1
        INTEGER = 2
        DOUBLE = 3
        STRING = 4

    def __init__(self, name, type_=None, value=None):
        self.name = name
        self.value = value
        self.type_ = type_ if type_ is not None else self._type_of(value)

    @staticmethod
    def _type_of(value):
        for kind, t in ((bool, 1), (int, 2), (float, 3), (str, 4)):
            if isinstance(value, kind):
                return Parameter.Type(t)
        return Parameter.Type.NOT_SET

    def __repr__(self):
        return f"Parameter({self.name!r}, value={self.value!r})"
