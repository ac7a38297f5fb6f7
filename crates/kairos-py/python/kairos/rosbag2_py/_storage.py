"""rosbag2_py's storage structs (``rosbag2_py._storage``): options, topic and file
descriptions, bag metadata, filters and the metadata file's reader and writer.

Metadata comes from kairos-bag as rosbag2's own YAML (the text rosbag2 stores in storage
files, version 9) and goes back the same way, so the field names here are rosbag2's
documented ones and Rust checks what is written."""

import datetime
import enum
import os
import warnings

import yaml

from kairos import _kairos
from kairos.duration import Duration
from kairos.qos import (DurabilityPolicy, HistoryPolicy, LivelinessPolicy, QoSProfile,
                        ReliabilityPolicy)
from kairos.time import Time


def get_default_storage_id():
    """The storage a bag is written in when none is named: ``mcap``, as rosbag2 since Iron."""
    return "mcap"


class StorageOptions:
    """Where and how a bag is stored (rosbag2_storage's ``StorageOptions``)."""

    def __init__(self, uri, storage_id="", max_bagfile_size=0, max_bagfile_duration=0,
                 max_cache_size=100 * 1024 * 1024, storage_preset_profile="",
                 storage_config_uri="", snapshot_mode=False, start_time_ns=-1, end_time_ns=-1,
                 custom_data=None):
        self.uri = str(uri)
        self.storage_id = storage_id
        self.max_bagfile_size = max_bagfile_size
        self.max_bagfile_duration = max_bagfile_duration
        self.max_cache_size = max_cache_size
        self.storage_preset_profile = storage_preset_profile
        self.storage_config_uri = storage_config_uri
        self.snapshot_mode = snapshot_mode
        self.start_time_ns = start_time_ns
        self.end_time_ns = end_time_ns
        self.custom_data = dict(custom_data or {})


class ConverterOptions:
    """The serialization formats read and written: kairos reads and writes ``cdr`` as
    stored (no conversion)."""

    def __init__(self, input_serialization_format="", output_serialization_format=""):
        self.input_serialization_format = input_serialization_format
        self.output_serialization_format = output_serialization_format


class TopicMetadata:
    """A topic of a bag: name, type, serialization format, offered QoS profiles (rclpy
    ``QoSProfile`` objects) and type hash."""

    def __init__(self, id=0, name="", type="", serialization_format="cdr",  # noqa: A002
                 offered_qos_profiles=None, type_description_hash=""):
        self.id = id
        self.name = name
        self.type = type
        self.serialization_format = serialization_format
        self.offered_qos_profiles = list(offered_qos_profiles or [])
        self.type_description_hash = type_description_hash

    def equals(self, other):
        return (self.name, self.type, self.serialization_format,
                self.offered_qos_profiles, self.type_description_hash) == (
            other.name, other.type, other.serialization_format,
            other.offered_qos_profiles, other.type_description_hash)

    def __eq__(self, other):
        return isinstance(other, TopicMetadata) and self.equals(other)

    def __repr__(self):
        return f"TopicMetadata(name={self.name!r}, type={self.type!r})"


class TopicInformation:
    """A topic and how many messages the bag has on it."""

    def __init__(self, topic_metadata, message_count):
        self.topic_metadata = topic_metadata
        self.message_count = message_count


class FileInformation:
    """One storage file: relative path, first receive time (``Time``), span
    (``datetime.timedelta`` when read from a bag) and message count."""

    def __init__(self, path, starting_time, duration, message_count):
        self.path = path
        self.starting_time = starting_time
        self.duration = duration
        self.message_count = message_count


class BagMetadata:
    """What rosbag2 knows about a bag (``metadata.yaml``)."""

    def __init__(self, version=9, bag_size=0, storage_identifier="", relative_file_paths=None,
                 files=None, duration=None, starting_time=None, message_count=0,
                 topics_with_message_count=None, compression_format="", compression_mode="",
                 custom_data=None, ros_distro=""):
        self.version = version
        self.bag_size = bag_size
        self.storage_identifier = storage_identifier
        self.relative_file_paths = list(relative_file_paths or [])
        self.files = list(files or [])
        self.duration = duration if duration is not None else datetime.timedelta(0)
        self.starting_time = starting_time if starting_time is not None else Time()
        self.message_count = message_count
        self.topics_with_message_count = list(topics_with_message_count or [])
        self.compression_format = compression_format
        self.compression_mode = compression_mode
        self.custom_data = dict(custom_data or {})
        self.ros_distro = ros_distro

    def __repr__(self):
        return (f"BagMetadata(storage_identifier={self.storage_identifier!r}, "
                f"message_count={self.message_count}, "
                f"topics={[t.topic_metadata.name for t in self.topics_with_message_count]})")


class MessageDefinition:
    """A message type's definition as a bag stores it."""

    def __init__(self, topic_type, encoding, encoded_message_definition, type_hash=""):
        self.topic_type = topic_type
        self.encoding = encoding
        self.encoded_message_definition = encoded_message_definition
        self.type_hash = type_hash

    def __repr__(self):
        return f"MessageDefinition(topic_type={self.topic_type!r}, encoding={self.encoding!r})"


class StorageFilter:
    """Which topics a reader yields, as rosbag2's storages select them: a service event
    topic (``.../_service_event``) by ``services_events``, any other by ``topics``; an
    empty list and regex select all; ``regex`` and ``regex_to_exclude`` match whole names."""

    def __init__(self, topics=None, services_events=None, regex="", exclude_topics=None,
                 exclude_service_events=None, regex_to_exclude=""):
        self.topics = list(topics or [])
        self.services_events = list(services_events or [])
        self.regex = regex
        self.exclude_topics = list(exclude_topics or [])
        self.exclude_service_events = list(exclude_service_events or [])
        self.regex_to_exclude = regex_to_exclude


class ReadOrderSortBy(enum.IntEnum):
    ReceivedTimestamp = 0
    PublishedTimestamp = 1
    File = 2


class ReadOrder:
    """The order messages are read in: kairos reads by receive time, forward."""

    def __init__(self, sort_by=ReadOrderSortBy.ReceivedTimestamp, reverse=False):
        self.sort_by = sort_by
        self.reverse = reverse


class MetadataIo:
    """Reads and writes a bag folder's ``metadata.yaml``."""

    def read_metadata(self, uri):
        return metadata_from_yaml(_kairos.BagReader(str(uri)).metadata_yaml(), str(uri))

    def write_metadata(self, uri, metadata):
        text = _kairos.bag_metadata_yaml(yaml.safe_dump(metadata_to_dict(metadata)), True)
        with open(os.path.join(str(uri), "metadata.yaml"), "w") as f:
            f.write(text)

    def metadata_file_exists(self, uri):
        return os.path.isfile(os.path.join(str(uri), "metadata.yaml"))

    def serialize_metadata(self, metadata):
        return _kairos.bag_metadata_yaml(yaml.safe_dump(metadata_to_dict(metadata)), True)

    def deserialize_metadata(self, text):
        return metadata_from_yaml(_kairos.bag_metadata_yaml(text), "")


# rosbag2's YAML <-> the Python structs. The YAML is kairos-bag's version 9 text.

_POLICIES = (("history", HistoryPolicy), ("reliability", ReliabilityPolicy),
             ("durability", DurabilityPolicy), ("liveliness", LivelinessPolicy))
_DURATIONS = ("deadline", "lifespan", "liveliness_lease_duration")
_INFINITE = {"sec": 9223372036, "nsec": 854775807}


def qos_from_dict(raw):
    """A profile of rosbag2's YAML (policies by name) as an rclpy ``QoSProfile``."""
    values = {"depth": int(raw.get("depth", 0))}
    for key, policy in _POLICIES:
        name = str(raw.get(key, "unknown")).upper()
        values[key] = policy[name] if name in policy.__members__ else policy.UNKNOWN
    for key in _DURATIONS:
        d = raw.get(key) or {}
        values[key] = Duration(seconds=int(d.get("sec", 0)), nanoseconds=int(d.get("nsec", 0)))
    values["avoid_ros_namespace_conventions"] = bool(
        raw.get("avoid_ros_namespace_conventions", False))
    with warnings.catch_warnings():
        # Recorded profiles may say keep-last with depth 0 (rmw_zenoh's graph does).
        warnings.simplefilter("ignore", UserWarning)
        return QoSProfile(**values)


def qos_to_dict(profile):
    """An rclpy ``QoSProfile`` as a profile of rosbag2's YAML."""
    raw = {"depth": int(profile.depth)}
    for key, _ in _POLICIES:
        raw[key] = getattr(profile, key).name.lower()
    for key in _DURATIONS:
        ns = getattr(profile, key).nanoseconds
        raw[key] = (dict(_INFINITE) if ns >= 2**63 - 1
                    else {"sec": ns // 1_000_000_000, "nsec": ns % 1_000_000_000})
    raw["avoid_ros_namespace_conventions"] = bool(profile.avoid_ros_namespace_conventions)
    return raw


def qos_yaml(profiles):
    """Profiles as the YAML text kairos-bag reads for a topic ('' for none)."""
    return yaml.safe_dump([qos_to_dict(p) for p in profiles]) if profiles else ""


def topic_from_dict(raw, index=0):
    meta = raw.get("topic_metadata", {})
    profiles = meta.get("offered_qos_profiles") or []
    if isinstance(profiles, str):
        profiles = yaml.safe_load(profiles) or []
    return TopicInformation(
        TopicMetadata(index, meta.get("name", ""), meta.get("type", ""),
                      meta.get("serialization_format", ""),
                      [qos_from_dict(p) for p in profiles],
                      meta.get("type_description_hash", "")),
        int(raw.get("message_count", 0)))


def _span(ns):
    return datetime.timedelta(microseconds=ns / 1000)


def metadata_from_yaml(text, folder):
    """kairos-bag's metadata YAML as a ``BagMetadata``; ``bag_size`` from the files in
    ``folder`` (0 when it is not a folder)."""
    raw = yaml.safe_load(text) or {}
    files = [FileInformation(f.get("path", ""),
                             Time(nanoseconds=int(f["starting_time"]["nanoseconds_since_epoch"])),
                             _span(int(f["duration"]["nanoseconds"])),
                             int(f.get("message_count", 0)))
             for f in raw.get("files") or []]
    paths = list(raw.get("relative_file_paths") or [])
    size = 0
    if folder and os.path.isdir(folder):
        for p in paths:
            full = os.path.join(folder, p)
            if os.path.isfile(full):
                size += os.path.getsize(full)
    elif folder and os.path.isfile(folder):
        size = os.path.getsize(folder)
    return BagMetadata(
        version=int(raw.get("version", 9)),
        bag_size=size,
        storage_identifier=raw.get("storage_identifier", ""),
        relative_file_paths=paths,
        files=files,
        duration=_span(int(raw["duration"]["nanoseconds"])),
        starting_time=Time(nanoseconds=int(raw["starting_time"]["nanoseconds_since_epoch"])),
        message_count=int(raw.get("message_count", 0)),
        topics_with_message_count=[topic_from_dict(t, i + 1) for i, t in
                                   enumerate(raw.get("topics_with_message_count") or [])],
        compression_format=raw.get("compression_format", "") or "",
        compression_mode=raw.get("compression_mode", "") or "",
        custom_data={str(k): str(v) for k, v in (raw.get("custom_data") or {}).items()},
        ros_distro=raw.get("ros_distro", "") or "",
    )


def _ns(value):
    """Nanoseconds of a ``Time``, ``Duration``, ``datetime.timedelta`` or number."""
    if isinstance(value, datetime.timedelta):
        return (value.days * 86_400 + value.seconds) * 1_000_000_000 + value.microseconds * 1000
    if hasattr(value, "nanoseconds"):
        return int(value.nanoseconds)
    return int(value or 0)


def metadata_to_dict(m):
    """A ``BagMetadata`` as rosbag2's YAML mapping (bare form)."""
    return {
        "version": int(m.version),
        "storage_identifier": m.storage_identifier,
        "duration": {"nanoseconds": _ns(m.duration)},
        "starting_time": {"nanoseconds_since_epoch": _ns(m.starting_time)},
        "message_count": int(m.message_count),
        "topics_with_message_count": [{
            "topic_metadata": {
                "name": t.topic_metadata.name,
                "type": t.topic_metadata.type,
                "serialization_format": t.topic_metadata.serialization_format,
                "offered_qos_profiles": [qos_to_dict(p) for p in
                                         t.topic_metadata.offered_qos_profiles],
                "type_description_hash": t.topic_metadata.type_description_hash,
            },
            "message_count": int(t.message_count),
        } for t in m.topics_with_message_count],
        "compression_format": m.compression_format,
        "compression_mode": m.compression_mode,
        "relative_file_paths": list(m.relative_file_paths),
        "files": [{
            "path": f.path,
            "starting_time": {"nanoseconds_since_epoch": _ns(f.starting_time)},
            "duration": {"nanoseconds": _ns(f.duration)},
            "message_count": int(f.message_count),
        } for f in m.files],
        "custom_data": {str(k): str(v) for k, v in m.custom_data.items()},
        "ros_distro": m.ros_distro,
    }
