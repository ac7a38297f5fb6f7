"""tf2_geometry_msgs for Python on kairos: applying a ``TransformStamped`` to geometry_msgs
data (``do_transform_point``, ``do_transform_vector3``, ``do_transform_pose``,
``do_transform_pose_stamped``, ``do_transform_pose_with_covariance_stamped``,
``do_transform_polygon_stamped``, ``transform_covariance``), registered with tf2_ros so
that ``buffer.transform(point_stamped, 'frame')`` works once this module is imported.

A transform maps data given in its ``child_frame_id`` into its ``header.frame_id``: points
and poses are rotated then translated, vectors only rotated; covariances are rotated on
both sides. Rotations go through the rotation matrix, so a pose's resulting quaternion
has ``w >= 0``. The result's header is the transform's (target frame, stamp).
"""

import math

from kairos.geometry_msgs.msg import (
    Point32,
    PointStamped,
    PolygonStamped,
    Pose,
    PoseStamped,
    PoseWithCovarianceStamped,
    Vector3Stamped,
)
from kairos.tf2_ros.buffer_interface import ConvertRegistration, TransformRegistration

__all__ = [
    "do_transform_point", "do_transform_vector3", "do_transform_pose",
    "do_transform_pose_stamped", "do_transform_pose_with_covariance_stamped",
    "do_transform_polygon_stamped", "transform_covariance", "to_msg_msg", "from_msg_msg",
]


def _matrix(q):
    """The rotation matrix of quaternion ``q`` (normalised first)."""
    n = math.sqrt(q.x * q.x + q.y * q.y + q.z * q.z + q.w * q.w) or 1.0
    x, y, z, w = q.x / n, q.y / n, q.z / n, q.w / n
    return (
        (1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)),
        (2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)),
        (2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)),
    )


def _rotate(m, v):
    return tuple(m[i][0] * v[0] + m[i][1] * v[1] + m[i][2] * v[2] for i in range(3))


def _product(a, b):
    return tuple(tuple(sum(a[i][k] * b[k][j] for k in range(3)) for j in range(3))
                 for i in range(3))


def _quaternion(m):
    """``(x, y, z, w)`` of rotation matrix ``m``, with ``w >= 0``."""
    trace = m[0][0] + m[1][1] + m[2][2]
    if trace > 0:
        s = 2.0 * math.sqrt(trace + 1.0)
        q = ((m[2][1] - m[1][2]) / s, (m[0][2] - m[2][0]) / s, (m[1][0] - m[0][1]) / s, s / 4)
    elif m[0][0] > m[1][1] and m[0][0] > m[2][2]:
        s = 2.0 * math.sqrt(1.0 + m[0][0] - m[1][1] - m[2][2])
        q = (s / 4, (m[0][1] + m[1][0]) / s, (m[0][2] + m[2][0]) / s, (m[2][1] - m[1][2]) / s)
    elif m[1][1] > m[2][2]:
        s = 2.0 * math.sqrt(1.0 + m[1][1] - m[0][0] - m[2][2])
        q = ((m[0][1] + m[1][0]) / s, s / 4, (m[1][2] + m[2][1]) / s, (m[0][2] - m[2][0]) / s)
    else:
        s = 2.0 * math.sqrt(1.0 + m[2][2] - m[0][0] - m[1][1])
        q = ((m[0][2] + m[2][0]) / s, (m[1][2] + m[2][1]) / s, s / 4, (m[1][0] - m[0][1]) / s)
    return q if q[3] >= 0 else tuple(-c for c in q)


def _parts(transform):
    t = transform.transform
    return _matrix(t.rotation), (t.translation.x, t.translation.y, t.translation.z)


def _moved(rotation, translation, p):
    r = _rotate(rotation, p)
    return r[0] + translation[0], r[1] + translation[1], r[2] + translation[2]


def _header(result, transform):
    result.header.frame_id = transform.header.frame_id
    result.header.stamp = transform.header.stamp
    return result


def do_transform_point(point, transform):
    """A ``PointStamped`` in the transform's parent frame."""
    rotation, translation = _parts(transform)
    p = point.point
    result = PointStamped()
    result.point.x, result.point.y, result.point.z = _moved(rotation, translation,
                                                            (p.x, p.y, p.z))
    return _header(result, transform)


def do_transform_vector3(vector3, transform):
    """A ``Vector3Stamped`` rotated into the transform's parent frame (not translated)."""
    rotation, _ = _parts(transform)
    v = vector3.vector
    result = Vector3Stamped()
    result.vector.x, result.vector.y, result.vector.z = _rotate(rotation, (v.x, v.y, v.z))
    return _header(result, transform)


def do_transform_pose(pose, transform):
    """A ``Pose`` in the transform's parent frame."""
    rotation, translation = _parts(transform)
    p, q = pose.position, pose.orientation
    result = Pose()
    result.position.x, result.position.y, result.position.z = _moved(
        rotation, translation, (p.x, p.y, p.z))
    o = result.orientation
    o.x, o.y, o.z, o.w = _quaternion(_product(rotation, _matrix(q)))
    return result


def do_transform_pose_stamped(pose, transform):
    """A ``PoseStamped`` in the transform's parent frame."""
    result = PoseStamped()
    result.pose = do_transform_pose(pose.pose, transform)
    return _header(result, transform)


def transform_covariance(cov_in, transform):
    """A 6x6 covariance (row-major, 36 numbers: x, y, z, then the three rotations) rotated
    into the transform's parent frame: R cov Rᵀ with R the rotation on both blocks."""
    rotation, _ = _parts(transform)
    r6 = [[0.0] * 6 for _ in range(6)]
    for i in range(3):
        for j in range(3):
            r6[i][j] = r6[i + 3][j + 3] = rotation[i][j]
    cov = [[float(cov_in[6 * i + j]) for j in range(6)] for i in range(6)]
    left = [[sum(r6[i][k] * cov[k][j] for k in range(6)) for j in range(6)] for i in range(6)]
    return [sum(left[i][k] * r6[j][k] for k in range(6)) for i in range(6) for j in range(6)]


def do_transform_pose_with_covariance_stamped(pose, transform):
    """A ``PoseWithCovarianceStamped`` in the transform's parent frame, its covariance
    rotated too."""
    result = PoseWithCovarianceStamped()
    result.pose.pose = do_transform_pose(pose.pose.pose, transform)
    result.pose.covariance = transform_covariance(pose.pose.covariance, transform)
    return _header(result, transform)


def do_transform_polygon_stamped(polygon, transform):
    """A ``PolygonStamped`` with every point in the transform's parent frame."""
    rotation, translation = _parts(transform)
    result = PolygonStamped()
    for p in polygon.polygon.points:
        x, y, z = _moved(rotation, translation, (p.x, p.y, p.z))
        result.polygon.points.append(Point32(x=x, y=y, z=z))
    return _header(result, transform)


def to_msg_msg(msg):
    return msg


def from_msg_msg(msg):
    return msg


for _type in (Vector3Stamped, PoseStamped, PointStamped):
    ConvertRegistration().add_to_msg(_type, to_msg_msg)
    ConvertRegistration().add_from_msg(_type, from_msg_msg)
for _type, _apply in (
    (PointStamped, do_transform_point),
    (Vector3Stamped, do_transform_vector3),
    (PoseStamped, do_transform_pose_stamped),
    (PoseWithCovarianceStamped, do_transform_pose_with_covariance_stamped),
    (PolygonStamped, do_transform_polygon_stamped),
):
    TransformRegistration().add(_type, _apply)
