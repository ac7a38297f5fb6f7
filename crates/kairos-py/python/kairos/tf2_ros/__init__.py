"""tf2_ros for Python on kairos: ``Buffer``, ``TransformListener``,
``TransformBroadcaster``, ``StaticTransformBroadcaster``, ``BufferInterface`` and tf2's
exceptions, as geometry2's ``tf2_ros`` has them, on kairos's Rust transform buffer (see
``kairos.tf2_ros.buffer`` for how its waits differ: never a stall, ``WouldDeadlock`` at
once where a wait could never end)."""

from kairos.tf2_py import (  # noqa: F401
    BufferCore,
    ConnectivityException,
    ExtrapolationException,
    InvalidArgumentException,
    LookupException,
    TimeoutException,
    TransformException,
)

from .buffer import Buffer  # noqa: F401
from .buffer_client import BufferClient  # noqa: F401
from .buffer_interface import (  # noqa: F401
    BufferInterface,
    ConvertRegistration,
    NotImplementedException,
    Stamped,
    TransformRegistration,
    TypeException,
    convert,
)
from .static_transform_broadcaster import StaticTransformBroadcaster  # noqa: F401
from .transform_broadcaster import TransformBroadcaster  # noqa: F401
from .transform_listener import TransformListener  # noqa: F401
