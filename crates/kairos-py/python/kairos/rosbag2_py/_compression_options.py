"""rosbag2_py's compression options (``rosbag2_py._compression_options``): rosbag2's
zstd compression of each message or each file of a bag."""

import enum


class CompressionMode(enum.IntEnum):
    NONE = 0
    FILE = 1
    MESSAGE = 2


NONE = CompressionMode.NONE
FILE = CompressionMode.FILE
MESSAGE = CompressionMode.MESSAGE


def compression_mode_from_string(text):
    """``'none'``, ``'file'`` or ``'message'`` (any case) as a ``CompressionMode``; an
    empty text is ``NONE``."""
    name = (text or "NONE").upper()
    if name not in CompressionMode.__members__:
        raise ValueError(f"compression mode {text!r} is not one of none, file, message")
    return CompressionMode[name]


def compression_mode_to_string(mode):
    return CompressionMode(mode).name


class CompressionOptions:
    """How a ``SequentialCompressionWriter`` compresses: kairos compresses with zstd
    (``compression_format``), in the writing thread (queue size and threads are taken as
    given and do not change the bag)."""

    def __init__(self, compression_format="", compression_mode=CompressionMode.NONE,
                 compression_queue_size=1, compression_threads=0,
                 compression_threads_priority=0):
        self.compression_format = compression_format
        self.compression_mode = compression_mode
        self.compression_queue_size = compression_queue_size
        self.compression_threads = compression_threads
        self.compression_threads_priority = compression_threads_priority
