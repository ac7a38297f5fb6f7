"""tf2's ``tf2_py`` on kairos: ``BufferCore`` and tf2's exception classes.

The buffer is kairos's Rust one (``kairos_tf2``, through ``kairos._kairos.Tf2Buffer``), so
a Python program and a Rust node store, interpolate and look up the same way, with the
same errors: ``LookupException`` lists the frames that exist, ``ConnectivityException``
names both trees, ``ExtrapolationException`` gives the time asked for and the range held,
and each says how to fix it. Times are rclpy ``Time`` objects or ``builtin_interfaces/Time``
messages; ``Time()`` (zero) asks for the latest time every frame of the path has.
"""

from kairos._kairos import (
    ConnectivityException,
    ExtrapolationException,
    InvalidArgumentException,
    LookupException,
    TimeoutException,
    TransformException,
    Tf2Buffer as _Tf2Buffer,
)

__all__ = [
    "BufferCore", "TransformException", "LookupException", "ConnectivityException",
    "ExtrapolationException", "InvalidArgumentException", "TimeoutException",
]

_NS = 1_000_000_000


def _message(fields):
    """A ``geometry_msgs/TransformStamped`` from the buffer's answer."""
    from kairos.geometry_msgs.msg import TransformStamped

    frame_id, child_frame_id, nanoseconds, translation, rotation = fields
    message = TransformStamped()
    message.header.frame_id = frame_id
    message.header.stamp.sec, message.header.stamp.nanosec = divmod(nanoseconds, _NS)
    message.child_frame_id = child_frame_id
    t, r = message.transform.translation, message.transform.rotation
    t.x, t.y, t.z = translation
    r.x, r.y, r.z, r.w = rotation
    return message


def _time(nanoseconds):
    from kairos.time import Time

    return Time(nanoseconds=nanoseconds)


def _seconds(nanoseconds):
    return nanoseconds / _NS


class BufferCore:
    """tf2's transform buffer: every frame's transform to its parent over the last
    ``cache_time`` (a ``Duration``; 10 s by default), and lookups between any two frames."""

    def __init__(self, cache_time=None, *, _clock=None):
        self._core = _Tf2Buffer(cache_time, _clock)

    def set_transform(self, transform, authority):
        """Stores a ``TransformStamped``; an invalid one raises (nothing is stored)."""
        self._core.set_transform(transform, authority, False)

    def set_transform_static(self, transform, authority):
        """Stores a transform valid at every time."""
        self._core.set_transform(transform, authority, True)

    def lookup_transform_core(self, target_frame, source_frame, time):
        """The transform taking data from ``source_frame`` to ``target_frame`` at ``time``."""
        return _message(self._core.lookup(target_frame, source_frame, time))

    def lookup_transform_full_core(self, target_frame, target_time, source_frame,
                                   source_time, fixed_frame):
        """From ``source_frame`` at ``source_time`` to ``target_frame`` at ``target_time``,
        assuming ``fixed_frame`` does not move between the two times."""
        return _message(self._core.lookup_full(
            target_frame, target_time, source_frame, source_time, fixed_frame))

    def can_transform_core(self, target_frame, source_frame, time):
        """``(True, '')`` if the lookup would succeed now, else ``(False, why)``."""
        return self._core.check(target_frame, source_frame, time)

    def can_transform_full_core(self, target_frame, target_time, source_frame, source_time,
                                fixed_frame):
        return self._core.check_full(
            target_frame, target_time, source_frame, source_time, fixed_frame)

    def get_latest_common_time(self, target_frame, source_frame):
        """The latest time both frames' paths have data for, as an rclpy ``Time``."""
        return _time(self._core.latest_common_time(target_frame, source_frame))

    def clear(self):
        """Drops every time-stamped transform; static ones stay."""
        self._core.clear()

    def all_frames_as_string(self):
        return self._core.all_frames_as_string()

    def all_frames_as_yaml(self, time=None):
        """Each frame with its parent, broadcaster, rate and the stamps held, as YAML."""
        lines = []
        for name, parent, authority, is_static, oldest, newest, stored in self._core.frames():
            span = _seconds(newest - oldest)
            rate = (stored / span) if span > 0 else 10000.0
            lines += [
                f"{name}: ",
                f"  parent: '{parent}'",
                f"  broadcaster: '{authority}'",
                f"  rate: {rate:.3f}",
                f"  most_recent_transform: {_seconds(newest):.6f}",
                f"  oldest_transform: {_seconds(oldest):.6f}",
                f"  buffer_length: {span:.3f}",
            ]
        return "\n".join(lines) + ("\n" if lines else "")

    def _allFramesAsDot(self, time=None):  # noqa: N802 (tf2_py's name)
        """The frame tree in Graphviz's dot language, as ``view_frames`` draws it."""
        edges = []
        for name, parent, authority, is_static, oldest, newest, stored in self._core.frames():
            span = _seconds(newest - oldest)
            rate = (stored / span) if span > 0 else 10000.0
            label = (f"Broadcaster: {authority}\\nAverage rate: {rate:.3f}\\n"
                     f"Buffer length: {span:.3f}\\nMost recent transform: "
                     f"{_seconds(newest):.3f}\\nOldest transform: {_seconds(oldest):.3f}\\n")
            edges.append(f'"{parent}" -> "{name}"[label="{label}"];')
        return "digraph G {\n" + "\n".join(edges) + ("\n" if edges else "") + "}"

    def _frameExists(self, frame_id):  # noqa: N802
        return self._core.frame_exists(frame_id)

    def _getFrameStrings(self):  # noqa: N802
        return self._core.frame_names()

    def lookupVelocityCore(self, tracking_frame, observation_frame, time,  # noqa: N802
                           averaging_interval):
        """The velocity of ``tracking_frame`` relative to ``observation_frame`` around
        ``time`` (zero: the latest), averaged over ``averaging_interval``, in
        ``observation_frame``: ``((vx, vy, vz), (wx, wy, wz))``. As tf2's, from two lookups
        ``averaging_interval`` apart, ending at ``time`` plus half the interval or at the
        latest data, whichever is earlier."""
        return self._velocity(tracking_frame, observation_frame, time, averaging_interval)[:2]

    def lookupVelocityFullCore(self, tracking_frame, observation_frame,  # noqa: N802
                               reference_frame, reference_point, reference_point_frame, time,
                               averaging_interval):
        """``lookupVelocityCore``'s twist expressed in ``reference_frame``, as the velocity
        of ``reference_point`` (given in ``reference_point_frame``) moving with
        ``tracking_frame``."""
        (v, w, at) = self._velocity(tracking_frame, observation_frame, time,
                                    averaging_interval)
        to_reference = self.lookup_transform_core(reference_frame, observation_frame, at)
        rotate = _rotation(to_reference.transform.rotation)
        v, w = rotate(v), rotate(w)
        origin = self.lookup_transform_core(reference_frame, tracking_frame, at).transform
        point = self.lookup_transform_core(reference_frame, reference_point_frame, at).transform
        moved = _rotation(point.rotation)(tuple(reference_point))
        p = (moved[0] + point.translation.x, moved[1] + point.translation.y,
             moved[2] + point.translation.z)
        lever = (p[0] - origin.translation.x, p[1] - origin.translation.y,
                 p[2] - origin.translation.z)
        spin = (w[1] * lever[2] - w[2] * lever[1], w[2] * lever[0] - w[0] * lever[2],
                w[0] * lever[1] - w[1] * lever[0])
        return (v[0] + spin[0], v[1] + spin[1], v[2] + spin[2]), w

    def _velocity(self, tracking_frame, observation_frame, time, averaging_interval):
        interval = _nanoseconds(averaging_interval)
        latest = self._core.latest_common_time(observation_frame, tracking_frame)
        target = _nanoseconds(time) or latest
        end = min(target + interval // 2, latest) if latest else target + interval // 2
        # Stamp zero asks for the latest data: the earliest real time is 1 ns.
        start = max(1, end - interval)
        if end <= start:
            raise TransformException(
                f"a velocity needs an averaging interval > 0 within the data held; got "
                f"{start} ns to {end} ns")
        first = self.lookup_transform_core(observation_frame, tracking_frame, _time(start))
        last = self.lookup_transform_core(observation_frame, tracking_frame, _time(end))
        dt = (end - start) / _NS
        a, b = first.transform.translation, last.transform.translation
        v = ((b.x - a.x) / dt, (b.y - a.y) / dt, (b.z - a.z) / dt)
        axis, angle = _delta_rotation(first.transform.rotation, last.transform.rotation)
        w = tuple(c * angle / dt for c in axis)
        return v, w, _time(target)


def _nanoseconds(value):
    if value is None:
        return 0
    nanoseconds = getattr(value, "nanoseconds", None)
    if nanoseconds is not None:
        return int(nanoseconds)
    return int(value.sec) * _NS + int(value.nanosec)


def _rotation(q):
    """The function rotating a vector by quaternion ``q``."""
    x, y, z, w = q.x, q.y, q.z, q.w

    def rotate(v):
        # v + 2w(u x v) + 2u x (u x v), u = (x, y, z)
        cx, cy, cz = y * v[2] - z * v[1], z * v[0] - x * v[2], x * v[1] - y * v[0]
        dx, dy, dz = y * cz - z * cy, z * cx - x * cz, x * cy - y * cx
        return (v[0] + 2 * (w * cx + dx), v[1] + 2 * (w * cy + dy), v[2] + 2 * (w * cz + dz))

    return rotate


def _delta_rotation(a, b):
    """Axis and angle of the rotation taking ``a`` to ``b`` (``b * a⁻¹``)."""
    import math

    # b * conj(a)
    ax, ay, az, aw = -a.x, -a.y, -a.z, a.w
    x = b.w * ax + b.x * aw + b.y * az - b.z * ay
    y = b.w * ay - b.x * az + b.y * aw + b.z * ax
    z = b.w * az + b.x * ay - b.y * ax + b.z * aw
    w = b.w * aw - b.x * ax - b.y * ay - b.z * az
    if w < 0:
        x, y, z, w = -x, -y, -z, -w
    s = math.sqrt(x * x + y * y + z * z)
    if s < 1e-12:
        return (0.0, 0.0, 0.0), 0.0
    return (x / s, y / s, z / s), 2 * math.atan2(s, w)
