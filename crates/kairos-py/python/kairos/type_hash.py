"""rclpy.type_hash: a type's RIHS hash as a value (``str()`` gives ``RIHS01_<hex>``)."""


class TypeHash:
    """A type hash: its RIHS version and its 32 bytes. Only version 1 exists; any other
    version prints as ``INVALID``."""

    __slots__ = ("_version", "_value")

    def __init__(self, version=-1, value=bytes(32)):
        self.version = version
        self.value = value

    @property
    def version(self):
        return self._version

    @version.setter
    def version(self, value):
        if not isinstance(value, int):
            raise TypeError(f"a type hash's version is an int, not {type(value).__name__}")
        self._version = value

    @property
    def value(self):
        return self._value

    @value.setter
    def value(self, value):
        if not isinstance(value, (bytes, bytearray)):
            raise TypeError(f"a type hash's value is bytes, not {type(value).__name__}")
        self._value = bytes(value)

    def __eq__(self, other):
        return (isinstance(other, TypeHash) and self.version == other.version
                and self.value == other.value)

    def __hash__(self):
        return hash((self.version, self.value))

    def __str__(self):
        if self.version != 1:
            return "INVALID"
        return f"RIHS{self.version:02d}_{self.value.hex()}"

    def __repr__(self):
        return f"TypeHash(version={self.version}, value={self.value!r})"
