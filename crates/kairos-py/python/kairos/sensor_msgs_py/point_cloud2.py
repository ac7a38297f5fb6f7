"""Point clouds as numpy arrays: a ``PointCloud2`` message's ``fields`` describe one point
(name, byte offset, ``PointField`` datatype, count), and its ``data`` holds ``width *
height`` such points, ``point_step`` bytes apart, rows ``row_step`` bytes apart.

The functions have the names and arguments of ROS 2's ``sensor_msgs_py.point_cloud2``,
so code written for it runs unchanged:

- ``create_cloud(header, fields, points)`` and ``create_cloud_xyz32(header, points)``;
- ``read_points`` (a structured numpy array), ``read_points_numpy`` (a plain 2-D array of
  one dtype) and ``read_points_list`` (a list of named tuples);
- ``dtype_from_fields(fields, point_step)`` and ``fields_from_dtype(dtype)``.

Bad input is a ``ValueError`` or ``AssertionError`` as there, never a wrong cloud: a field
past ``point_step``, a datatype ``PointField`` does not define, points whose columns do not
match the fields.
"""

from collections import namedtuple
import sys

import numpy as np

from kairos.sensor_msgs.msg import PointCloud2, PointField

#: Prefix of the padding fields ``dtype_from_fields`` adds for gaps between fields.
DUMMY_FIELD_PREFIX = "unnamed_field"

#: PointField datatype -> numpy type, and back.
_DATATYPES = {
    PointField.INT8: np.dtype(np.int8),
    PointField.UINT8: np.dtype(np.uint8),
    PointField.INT16: np.dtype(np.int16),
    PointField.UINT16: np.dtype(np.uint16),
    PointField.INT32: np.dtype(np.int32),
    PointField.UINT32: np.dtype(np.uint32),
    PointField.FLOAT32: np.dtype(np.float32),
    PointField.FLOAT64: np.dtype(np.float64),
}
_POINTFIELD_TYPES = {dtype: datatype for datatype, dtype in _DATATYPES.items()}


def dtype_from_fields(fields, point_step=None):
    """The structured numpy dtype of one point: a member per field (``name`` if ``count``
    is 1, ``name_0``, ``name_1``, ... otherwise) at its offset, itemsize ``point_step``."""
    names, formats, offsets = [], [], []
    for index, field in enumerate(fields):
        if field.datatype not in _DATATYPES:
            raise ValueError(f"field {field.name!r} has datatype {field.datatype}, which "
                             "PointField does not define (1 to 8)")
        name = field.name or f"{DUMMY_FIELD_PREFIX}_{index}"
        base = _DATATYPES[field.datatype]
        if field.count == 1:
            names.append(name)
            formats.append(base)
            offsets.append(field.offset)
        else:
            for k in range(field.count):
                names.append(f"{name}_{k}")
                formats.append(base)
                offsets.append(field.offset + k * base.itemsize)
    spec = {"names": names, "formats": formats, "offsets": offsets}
    if point_step is not None:
        end = max((o + f.itemsize for o, f in zip(offsets, formats)), default=0)
        if end > point_step:
            raise ValueError(f"the fields end at byte {end}, past point_step {point_step}")
        spec["itemsize"] = point_step
    return np.dtype(spec)


def fields_from_dtype(dtype):
    """The ``PointField`` list of a structured numpy dtype (one field per member)."""
    fields = []
    for name in dtype.names:
        member, offset = dtype.fields[name][:2]
        if member.base not in _POINTFIELD_TYPES:
            raise ValueError(f"member {name!r} is {member}, which no PointField datatype is")
        count = int(np.prod(member.shape)) if member.shape else 1
        fields.append(PointField(name=name, offset=offset,
                                 datatype=_POINTFIELD_TYPES[member.base], count=count))
    return fields


def create_cloud(header, fields, points, point_step=None):
    """A ``PointCloud2`` of one row holding ``points``: a structured numpy array, a 2-D
    array with one column per field member, or a sequence of tuples."""
    dtype = dtype_from_fields(fields, point_step)
    if isinstance(points, np.ndarray) and points.dtype.names is not None:
        cloud = np.empty(points.shape[0], dtype=dtype)
        for name in dtype.names:
            if name.startswith(DUMMY_FIELD_PREFIX):
                continue
            cloud[name] = points[name]
    else:
        array = np.asarray(points)
        if array.ndim == 1 and array.size == 0:
            array = array.reshape(0, len(dtype.names))
        if array.dtype == object or array.ndim != 2:
            cloud = np.array([tuple(p) for p in points], dtype=dtype)
        else:
            if array.shape[1] != len(dtype.names):
                raise ValueError(f"points have {array.shape[1]} columns; the fields make "
                                 f"{len(dtype.names)} ({', '.join(dtype.names)})")
            cloud = np.empty(array.shape[0], dtype=dtype)
            for column, name in enumerate(dtype.names):
                cloud[name] = array[:, column]
    cloud = cloud.reshape(-1)
    return PointCloud2(
        header=header,
        height=1,
        width=cloud.shape[0],
        is_dense=False,
        is_bigendian=sys.byteorder != "little",
        fields=list(fields),
        point_step=dtype.itemsize,
        row_step=dtype.itemsize * cloud.shape[0],
        data=cloud.tobytes(),
    )


def create_cloud_xyz32(header, points):
    """A ``PointCloud2`` of ``points`` (N x 3) with float32 ``x``, ``y``, ``z``."""
    fields = [PointField(name=n, offset=4 * i, datatype=PointField.FLOAT32, count=1)
              for i, n in enumerate("xyz")]
    return create_cloud(header, fields, points)


def read_points(cloud, field_names=None, skip_nans=False, uvs=None,
                reshape_organized_cloud=False):
    """The points of ``cloud`` as a structured numpy array (a view of its data where the
    byte order allows): only ``field_names`` if given, without points holding a NaN in
    those fields if ``skip_nans``, only the points at the (u, v) positions or flat indices
    of ``uvs`` if given, and ``height x width`` if ``reshape_organized_cloud``."""
    assert isinstance(cloud, PointCloud2), "cloud is not a sensor_msgs.msg.PointCloud2"
    dtype = dtype_from_fields(cloud.fields, cloud.point_step)
    expected = cloud.row_step * cloud.height
    data = bytes(cloud.data)
    if len(data) < expected or cloud.row_step < cloud.point_step * cloud.width:
        raise ValueError(f"the cloud's data holds {len(data)} bytes; {cloud.height} rows of "
                         f"{cloud.width} points of {cloud.point_step} bytes need {expected}")
    rows = np.frombuffer(data[:expected], dtype=np.uint8).reshape(cloud.height, cloud.row_step)
    rows = rows[:, :cloud.point_step * cloud.width]
    points = np.ascontiguousarray(rows).view(dtype).reshape(-1)
    if bool(cloud.is_bigendian) != (sys.byteorder != "little"):
        points = points.view(points.dtype.newbyteorder())
    if field_names is not None:
        missing = [n for n in field_names if n not in dtype.names]
        if missing:
            raise ValueError(f"the cloud has no field {missing[0]!r} (it has "
                             f"{', '.join(dtype.names)})")
        points = _select(points, list(field_names))
    if uvs is not None:
        uvs = np.asarray(list(uvs))
        index = uvs if uvs.ndim == 1 else uvs[:, 1] * cloud.width + uvs[:, 0]
        points = points[index]
    if skip_nans:
        keep = np.ones(points.shape[0], dtype=bool)
        for name in points.dtype.names:
            if np.issubdtype(points.dtype[name], np.floating):
                keep &= ~np.isnan(points[name])
        points = points[keep]
    if reshape_organized_cloud and cloud.height > 1 and not skip_nans and uvs is None:
        points = points.reshape(cloud.height, cloud.width)
    return points


def _select(points, names):
    out = np.empty(points.shape[0], dtype=[(n, points.dtype[n]) for n in names])
    for name in names:
        out[name] = points[name]
    return out


def read_points_numpy(cloud, field_names=None, skip_nans=False, uvs=None,
                      reshape_organized_cloud=False):
    """As ``read_points``, as a plain 2-D array: every selected field must have one
    datatype."""
    points = read_points(cloud, field_names, skip_nans, uvs, reshape_organized_cloud)
    types = {points.dtype[n] for n in points.dtype.names}
    assert len(types) == 1, "read_points_numpy needs fields of one datatype; use read_points"
    dtype = types.pop()
    return np.stack([points[n] for n in points.dtype.names], axis=-1).astype(dtype, copy=False)


def read_points_list(cloud, field_names=None, skip_nans=False, uvs=None):
    """As ``read_points``, as a list of named tuples (``Point``)."""
    points = read_points(cloud, field_names, skip_nans, uvs)
    point = namedtuple("Point", points.dtype.names)
    return [point._make(p) for p in points.tolist()]
