"""rosbag2_py's writers (``rosbag2_py._writer``) on kairos-bag: MCAP or sqlite3 bags,
split by size or duration, compressed per message or per file with zstd, as rosbag2
writes them."""

import os

from kairos import _kairos
from kairos.rosbag2_py._compression_options import CompressionMode
from kairos.rosbag2_py._storage import get_default_storage_id, metadata_from_yaml, qos_yaml


def get_registered_writers():
    """The storages kairos writes."""
    return {"mcap", "sqlite3"}


def get_registered_compressors():
    """The compression formats kairos writes."""
    return {"zstd"}


def get_registered_serializers():
    """The serialization formats kairos reads and writes (stored as given)."""
    return {"cdr"}


class SequentialWriter:
    """Writes a bag message by message (rosbag2_cpp's ``SequentialWriter``). The bag is
    closed, with its ``metadata.yaml``, by ``close()`` or when the writer is deleted."""

    _mode = ""

    def __init__(self):
        self._bag = None

    def open(self, storage_options, converter_options=None):
        fmt = getattr(converter_options, "output_serialization_format", "") or "cdr"
        if fmt != "cdr":
            raise RuntimeError(f"serialization format {fmt!r}: kairos writes cdr only")
        if self._bag is not None and not self._bag.closed():
            raise RuntimeError("this writer already has a bag open: close() it first")
        duration_s = int(storage_options.max_bagfile_duration or 0)
        self._uri = os.fspath(storage_options.uri)
        self._bag = _kairos.BagWriter(
            self._uri,
            storage=storage_options.storage_id or get_default_storage_id(),
            compression_mode=self._mode,
            max_file_size=int(storage_options.max_bagfile_size or 0),
            max_file_duration_ns=duration_s * 1_000_000_000,
            custom_data={str(k): str(v) for k, v in
                         (storage_options.custom_data or {}).items()},
        )
        self._topics = {}

    def _writer(self):
        if self._bag is None or self._bag.closed():
            raise RuntimeError("the writer is not open: call open(storage_options, "
                               "converter_options) first")
        return self._bag

    def create_topic(self, topic_metadata, message_definition=None):
        """Adds a topic (``TopicMetadata``); its definition is ``message_definition``'s
        text when given, else the one of the type kairos ships (as rosbag2 takes the
        installed one)."""
        text = (message_definition.encoded_message_definition
                if message_definition is not None else None)
        self._writer().add_topic(
            topic_metadata.name, topic_metadata.type,
            topic_metadata.serialization_format or "cdr",
            qos_yaml(topic_metadata.offered_qos_profiles),
            topic_metadata.type_description_hash or "", text)
        self._topics[topic_metadata.name] = topic_metadata

    def remove_topic(self, topic_metadata):
        raise RuntimeError("removing a topic is not supported by kairos's writer: a topic "
                           "stays in the bag once created")

    def write(self, topic, data, recv_timestamp, send_timestamp=None):
        """Writes serialized ``data`` of ``topic``, received at ``recv_timestamp`` and sent
        at ``send_timestamp`` (ns; the receive time when not given)."""
        if isinstance(data, str):
            data = data.encode("latin-1")
        send = recv_timestamp if send_timestamp is None else send_timestamp
        self._writer().write(topic, bytes(data), int(recv_timestamp), int(send))

    def split_bagfile(self):
        self._writer().split()

    def take_snapshot(self):
        """kairos's writer has no snapshot buffer (``snapshot_mode``): nothing to take."""
        return False

    def get_metadata(self):
        return metadata_from_yaml(self._writer().metadata_yaml(), self._uri)

    def close(self):
        if self._bag is not None:
            self._bag.close()

    def __del__(self):
        bag = getattr(self, "_bag", None)
        if bag is not None:
            try:
                bag.close()
            except Exception:  # noqa: BLE001 - a destructor must not raise
                pass


class SequentialCompressionWriter(SequentialWriter):
    """A ``SequentialWriter`` that compresses each message or each file with zstd."""

    def __init__(self, compression_options=None):
        super().__init__()
        if compression_options is None:
            return
        fmt = compression_options.compression_format
        mode = CompressionMode(compression_options.compression_mode)
        if mode != CompressionMode.NONE and fmt not in ("zstd", ""):
            raise RuntimeError(f"compression format {fmt!r}: kairos compresses with zstd")
        self._mode = "" if mode == CompressionMode.NONE else mode.name.lower()
