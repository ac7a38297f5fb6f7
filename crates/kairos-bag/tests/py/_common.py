"""Shared helpers of the kairos-bag interop scripts: imports that fail loudly, JSON output."""

import dataclasses
import json
import sys

INSTALL = 'pip install rosbags mcap mcap-ros2-support'


def require(module):
    """Imports `module`, or exits with status 3 telling how to install it."""
    try:
        return __import__(module, fromlist=['_'])
    except ImportError as error:
        print(f'missing Python package ({error}): {INSTALL}', file=sys.stderr)
        sys.exit(3)


def plain(value):
    """A message (rosbags dataclass or mcap_ros2 slots object) as JSON-able data."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if hasattr(value, '__slots__') and not isinstance(value, (str, bytes)):
        return {name: plain(getattr(value, name)) for name in value.__slots__}
    if hasattr(value, 'tolist'):  # numpy arrays and scalars
        return plain(value.tolist())
    if isinstance(value, (bytes, bytearray)):
        return list(value)
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    return value


def emit(document):
    json.dump(document, sys.stdout, sort_keys=True)
    sys.stdout.write('\n')
