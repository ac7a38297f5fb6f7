"""tf2_ros's ``BufferInterface``: transforming stamped data with a buffer's lookups, by
type, through the registrations that ``tf2_geometry_msgs`` (and a program's own
packages) make."""

__all__ = [
    "BufferInterface", "Stamped", "TypeException", "NotImplementedException",
    "TransformRegistration", "ConvertRegistration", "convert",
]


class TypeException(Exception):
    """A type with no registered transform or conversion."""

    def __init__(self, errstr):
        super().__init__(errstr)
        self.errstr = errstr


class NotImplementedException(Exception):
    """A ``BufferInterface`` method its subclass does not provide."""

    def __init__(self):
        super().__init__("this BufferInterface does not implement the method")
        self.errstr = "Not implemented"


def _unsupported(key):
    return TypeException(
        f"Type {key} is not loaded or supported: import tf2_geometry_msgs for geometry_msgs "
        "types, or register a function with tf2_ros.TransformRegistration().add(type, f)")


class TransformRegistration:
    """The function that applies a ``TransformStamped`` to each type, shared by every
    instance (registering once is enough for the whole program)."""

    __type_map = {}

    def print_me(self):
        print(TransformRegistration.__type_map)

    def add(self, key, callback):
        TransformRegistration.__type_map[key] = callback

    def get(self, key):
        try:
            return TransformRegistration.__type_map[key]
        except KeyError:
            raise _unsupported(key) from None


class ConvertRegistration:
    """Conversions between types (to and from their message form), shared as
    ``TransformRegistration``'s are."""

    __to_msg = {}
    __from_msg = {}
    __convert = {}

    def add_from_msg(self, key, callback):
        ConvertRegistration.__from_msg[key] = callback

    def add_to_msg(self, key, callback):
        ConvertRegistration.__to_msg[key] = callback

    def add_convert(self, key, callback):
        ConvertRegistration.__convert[key] = callback

    def get_from_msg(self, key):
        return self._get(ConvertRegistration.__from_msg, key)

    def get_to_msg(self, key):
        return self._get(ConvertRegistration.__to_msg, key)

    def get_convert(self, key):
        return self._get(ConvertRegistration.__convert, key)

    @staticmethod
    def _get(table, key):
        try:
            return table[key]
        except KeyError:
            raise _unsupported(key) from None


def convert(a, b_type):
    """``a`` as a ``b_type``: a direct conversion if one is registered, else through the
    message form."""
    registration = ConvertRegistration()
    try:
        return registration.get_convert((type(a), b_type))(a)
    except TypeException:
        message = registration.get_to_msg(type(a))(a)
        return registration.get_from_msg(b_type)(message)


def Stamped(obj, stamp, frame_id):  # noqa: N802 (tf2_ros's name)
    """``obj`` given a new ``std_msgs/Header`` of ``stamp`` and ``frame_id``, as tf2_ros
    gives it: an object without a header (a ``PyKDL.Vector``, a program's own class) gets
    one."""
    from kairos.std_msgs.msg import Header

    obj.header = Header(frame_id=frame_id, stamp=stamp)
    return obj


class BufferInterface:
    """What a buffer offers to transform data: a subclass provides the lookups
    (``tf2_ros.Buffer`` does), this class the ``transform`` methods built on them."""

    def __init__(self):
        self.registration = TransformRegistration()

    def transform(self, object_stamped, target_frame, timeout=None, new_type=None):
        """``object_stamped`` (with a header) in ``target_frame``, at its own stamp, waiting
        up to ``timeout`` for the transform; as ``new_type`` if given."""
        header = object_stamped.header
        found = self.lookup_transform(
            target_frame, header.frame_id, header.stamp, *_timeout(timeout))
        result = self.registration.get(type(object_stamped))(object_stamped, found)
        return result if new_type is None else convert(result, new_type)

    def transform_full(self, object_stamped, target_frame, target_time, fixed_frame,
                       timeout=None, new_type=None):
        """``object_stamped`` in ``target_frame`` at ``target_time``, assuming
        ``fixed_frame`` does not move between its stamp and ``target_time``."""
        header = object_stamped.header
        found = self.lookup_transform_full(
            target_frame, target_time, header.frame_id, header.stamp, fixed_frame,
            *_timeout(timeout))
        result = self.registration.get(type(object_stamped))(object_stamped, found)
        return result if new_type is None else convert(result, new_type)

    def lookup_transform(self, target_frame, source_frame, time, timeout=None):
        raise NotImplementedException()

    def lookup_transform_full(self, target_frame, target_time, source_frame, source_time,
                              fixed_frame, timeout=None):
        raise NotImplementedException()

    def can_transform(self, target_frame, source_frame, time, timeout=None):
        raise NotImplementedException()

    def can_transform_full(self, target_frame, target_time, source_frame, source_time,
                           fixed_frame, timeout=None):
        raise NotImplementedException()


def _timeout(timeout):
    return () if timeout is None else (timeout,)
