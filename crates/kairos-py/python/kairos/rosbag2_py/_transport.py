"""rosbag2_py's transport (``rosbag2_py._transport``): ``Player``, ``Recorder`` and
``bag_rewrite``.

``Player.play`` and ``Recorder.record`` run ``kairos bag play`` and ``kairos bag record``
(the binary named by ``KAIROS_BIN``, else ``kairos`` on ``PATH``) and wait for them, so
playing and recording from Python is the CLI's, with its timing and its loss counting;
``cancel()`` stops them as Ctrl-C does (the recorder closes its files first; a cancelled
recording always leaves a bag: the recorder's, its files reindexed when it was stopped
before it could close them, or an empty one when cancelled before it started). Options the
CLI does not have raise ``RuntimeError`` naming them, never silently ignored.
``bag_rewrite`` reads the input bags in receive-time order and writes each output bag
with the topics its record options select."""

import datetime
import heapq
import os
import re
import signal
import subprocess
import tempfile
import threading

import yaml

from kairos import _kairos
from kairos.rosbag2_py._reader import SequentialReader
from kairos.rosbag2_py._storage import StorageOptions, qos_to_dict
from kairos.rosbag2_py._writer import SequentialWriter

_LOG_LEVELS = ("debug", "info", "warn", "error", "fatal")


def _check_log_level(level):
    if level.lower() not in _LOG_LEVELS:
        raise RuntimeError(f"log level {level!r} is not one of {', '.join(_LOG_LEVELS)}")


def _seconds(value):
    if isinstance(value, datetime.timedelta):
        return value.total_seconds()
    if hasattr(value, "nanoseconds"):
        return value.nanoseconds / 1e9
    return float(value or 0)


class PlayOptions:
    def __init__(self):
        self.read_ahead_queue_size = 1000
        self.node_prefix = ""
        self.rate = 1.0
        self.topics_to_filter = []
        self.regex_to_filter = ""
        self.exclude_regex_to_filter = ""
        self.exclude_topics_to_filter = []
        self.exclude_service_events_to_filter = []
        self.topic_qos_profile_overrides = {}
        self.loop = False
        self.topic_remapping_options = []
        self.clock_publish_frequency = 0.0
        self.clock_publish_on_topic_publish = False
        self.clock_topics = []
        self.delay = datetime.timedelta(0)
        self.playback_duration = -1.0
        self.playback_until_timestamp = -1
        self.start_paused = False
        self.start_offset = 0
        self.disable_keyboard_controls = True
        self.wait_acked_timeout = -1
        self.disable_loan_message = False
        self.services_to_filter = []
        self.publish_service_requests = False


    # The names older rosbag2_py releases gave the two patterns, for programs written
    # against them.
    topics_regex_to_filter = property(
        lambda self: self.regex_to_filter,
        lambda self, value: setattr(self, "regex_to_filter", value))
    topics_regex_to_exclude = property(
        lambda self: self.exclude_regex_to_filter,
        lambda self, value: setattr(self, "exclude_regex_to_filter", value))


class RecordOptions:
    def __init__(self):
        self.all_topics = False
        self.all_services = False
        self.is_discovery_disabled = False
        self.topics = []
        self.topic_types = []
        self.services = []
        self.exclude_topics = []
        self.exclude_topic_types = []
        self.exclude_service_events = []
        self.rmw_serialization_format = "cdr"
        self.topic_polling_interval = datetime.timedelta(milliseconds=100)
        self.regex = ""
        self.exclude_regex = ""
        self.node_prefix = ""
        self.compression_mode = ""
        self.compression_format = ""
        self.compression_queue_size = 1
        self.compression_threads = 0
        self.topic_qos_profile_overrides = {}
        self.include_hidden_topics = False
        self.include_unpublished_topics = False
        self.ignore_leaf_topics = False
        self.start_paused = False
        self.use_sim_time = False
        self.disable_keyboard_controls = True


class _Process:
    """One ``kairos`` command that ``cancel()`` stops as Ctrl-C does."""

    def __init__(self, log_level):
        _check_log_level(log_level)
        self._log_level = log_level
        self._lock = threading.Lock()
        self._child = None
        self._cancelled = False

    def _run(self, args):
        binary = os.environ.get("KAIROS_BIN", "kairos")
        env = dict(os.environ, RUST_LOG=os.environ.get("RUST_LOG", self._log_level))
        with self._lock:
            if self._cancelled:
                return
            try:
                self._child = subprocess.Popen([binary, *args], env=env)
            except FileNotFoundError:
                raise RuntimeError(
                    f"{binary!r} was not found: install kairos's command-line tool or set "
                    "KAIROS_BIN to its path") from None
        code = self._child.wait()
        if code not in (0, -signal.SIGINT, 130) and not self._cancelled:
            raise RuntimeError(f"kairos {' '.join(args[:2])} failed with exit status {code}")

    def cancel(self):
        with self._lock:
            self._cancelled = True
            if self._child is not None and self._child.poll() is None:
                self._child.send_signal(signal.SIGINT)


class Player(_Process):
    """Plays a bag with ``kairos bag play``."""

    def __init__(self, log_level="info"):
        super().__init__(log_level)

    def play(self, storage_options, play_options=None):
        self._play("play", storage_options, play_options or PlayOptions(), [])

    def burst(self, storage_options, play_options, num_messages):
        """Sends the bag's first ``num_messages`` messages at once (0: all), then stays
        paused until cancelled or the bag's end, as rosbag2's ``Player.burst``."""
        self._play("burst", storage_options, play_options,
                   ["--num-messages", str(int(num_messages))])

    def _play(self, verb, storage_options, o, extra):
        args = ["bag", verb, os.fspath(storage_options.uri), "--rate", str(o.rate), *extra,
                "--read-ahead-queue-size", str(int(o.read_ahead_queue_size))]
        if o.loop:
            args.append("--loop")
        if o.start_paused:
            args.append("--start-paused")
        if _seconds(o.playback_duration) >= 0:
            args += ["--playback-duration", str(_seconds(o.playback_duration))]
        if o.playback_until_timestamp >= 0:
            args += ["--playback-until-nsec", str(int(o.playback_until_timestamp))]
        if o.start_offset:
            args += ["--start-offset", str(_seconds(o.start_offset))]
        if _seconds(o.delay) > 0:
            args += ["--delay", str(_seconds(o.delay))]
        if o.clock_publish_on_topic_publish:
            # As rosbag2's player: before the messages of clock_topics, or of every topic.
            args += ["--clock-topics", *o.clock_topics] if o.clock_topics else [
                "--clock-topics-all"]
        elif o.clock_publish_frequency > 0:
            args += ["--clock", str(o.clock_publish_frequency)]
        # rosbag2_py names a service by its event topic (<service>/_service_event).
        for flag, names in (("--topics", o.topics_to_filter),
                            ("--services", [_service_of(s) for s in o.services_to_filter]),
                            ("--exclude-topics", o.exclude_topics_to_filter),
                            ("--exclude-services",
                             [_service_of(s) for s in o.exclude_service_events_to_filter])):
            if names:
                args += [flag, *names]
        if o.publish_service_requests:
            args.append("--publish-service-requests")
        if o.regex_to_filter:
            args += ["--regex", o.regex_to_filter]
        if o.exclude_regex_to_filter:
            args += ["--exclude-regex", o.exclude_regex_to_filter]
        for remap in o.topic_remapping_options:
            if remap in ("--ros-args", "--remap", "-r"):
                continue
            args += ["--remap", remap]
        with tempfile.TemporaryDirectory() as tmp:
            if o.topic_qos_profile_overrides:
                path = os.path.join(tmp, "qos.yaml")
                with open(path, "w") as f:
                    yaml.safe_dump({t: qos_to_dict(p) for t, p in
                                    o.topic_qos_profile_overrides.items()}, f)
                args += ["--qos-profile-overrides-path", path]
            self._run(args)


def _service_of(name):
    """The service a name of rosbag2_py's record options means: a service event topic
    (``/add/_service_event``) or the service itself."""
    suffix = "/_service_event"
    return name[: -len(suffix)] if name.endswith(suffix) else name


class Recorder(_Process):
    """Records with ``kairos bag record``."""

    def __init__(self, log_level="info"):
        super().__init__(log_level)

    def record(self, storage_options, record_options, node_name="rosbag2_recorder"):
        o = record_options
        unsupported = [name for name, used in (
            ("compression_format other than zstd", o.compression_format not in ("", "zstd")),
        ) if used]
        if unsupported:
            raise RuntimeError(f"kairos bag record has no {', '.join(unsupported)} yet")
        args = ["bag", "record", "--output", os.fspath(storage_options.uri),
                "--storage", storage_options.storage_id or "mcap"]
        if o.compression_mode and o.compression_mode.lower() != "none":
            args += ["--compression-mode", o.compression_mode.lower()]
        if o.all_topics:
            args.append("--all-topics")
        if o.all_services:
            args.append("--all-services")
        if o.services:
            # rosbag2_py names a service by its event topic (<service>/_service_event).
            args += ["--services"] + [_service_of(s) for s in o.services]
        if o.regex:
            args += ["--regex", o.regex]
        if o.exclude_regex:
            args += ["--exclude-regex", o.exclude_regex]
        for flag, names in (("--topic-types", o.topic_types),
                            ("--exclude-topic-types", o.exclude_topic_types),
                            ("--exclude-topics", o.exclude_topics),
                            ("--exclude-services",
                             [_service_of(s) for s in o.exclude_service_events])):
            if names:
                args += [flag, *names]
        if o.include_hidden_topics:
            args.append("--include-hidden-topics")
        if o.use_sim_time:
            args.append("--use-sim-time")
        if o.start_paused:
            args.append("--start-paused")
        args += ["--node-name", node_name]
        if storage_options.snapshot_mode:
            args.append("--snapshot-mode")
        # rosbag2's 0 is "no cache, write at once", which kairos's bounded queue has no
        # form of; snapshot mode needs its size (and refuses 0, as rosbag2 does).
        if storage_options.snapshot_mode or storage_options.max_cache_size > 0:
            args += ["--max-cache-size", str(storage_options.max_cache_size)]
        if storage_options.max_bagfile_size:
            args += ["--max-bag-size", str(storage_options.max_bagfile_size)]
        if storage_options.max_bagfile_duration:
            args += ["--max-bag-duration", str(storage_options.max_bagfile_duration)]
        args += ["--polling-interval", str(max(1, round(_seconds(o.topic_polling_interval)
                                                        * 1000)))]
        args += list(o.topics)
        uri = os.fspath(storage_options.uri)
        self._run(args)
        if self._cancelled:
            _leave_a_bag(uri, storage_options.storage_id or "mcap")


def _leave_a_bag(uri, storage):
    """After a cancelled recording: the bag the recorder wrote, or, when it was stopped
    before it could close one (cancelled before it started, or before it handled Ctrl-C),
    its files reindexed, or an empty bag, as rosbag2 leaves one."""
    if os.path.isfile(os.path.join(uri, "metadata.yaml")):
        return
    if os.path.isdir(uri) and any(name.endswith((".mcap", ".db3")) for name in os.listdir(uri)):
        _kairos.bag_reindex(uri)
    elif not os.path.exists(uri):
        _kairos.BagWriter(uri, storage=storage).close()


def bag_rewrite(input_options, output_config_file):
    """Merges the input bags (``StorageOptions``) in receive-time order into the output
    bags a YAML file lists (``output_bags``: each a storage options and record options
    mapping, as ``ros2 bag convert`` reads), each with the topics it selects."""
    with open(output_config_file) as f:
        config = yaml.safe_load(f)
    if not isinstance(config, dict) or "output_bags" not in config:
        raise RuntimeError(f"{output_config_file}: the top-level key 'output_bags' is missing")
    outputs = config["output_bags"]
    if not isinstance(outputs, list):
        raise RuntimeError(f"{output_config_file}: 'output_bags' must be a list of bags")
    readers = []
    for options in input_options:
        reader = SequentialReader()
        reader.open(options)
        readers.append(reader)
    writers = []
    for spec in outputs:
        if not isinstance(spec, dict) or "uri" not in spec:
            raise RuntimeError(f"{output_config_file}: each output bag needs a 'uri'")
        writers.append(_Output(spec))
    topics = {}
    for reader in readers:
        for topic in reader.get_all_topics_and_types():
            topics.setdefault(topic.name, topic)
    for writer in writers:
        writer.add_topics(topics.values())

    def messages(index, reader):
        while reader.has_next():
            topic, data, t = reader.read_next()
            yield t, index, topic, data

    for t, _, topic, data in heapq.merge(*(messages(i, r) for i, r in enumerate(readers))):
        for writer in writers:
            writer.write(topic, data, t)
    for writer in writers:
        writer.close()


class _Output:
    """One output bag of ``bag_rewrite`` and the topics it takes."""

    def __init__(self, spec):
        from kairos.rosbag2_py._compression_options import (CompressionOptions,
                                                            compression_mode_from_string)
        from kairos.rosbag2_py._writer import SequentialCompressionWriter
        self.topics = set(spec.get("topics") or [])
        self.all = bool(spec.get("all_topics", spec.get("all", not self.topics and
                                                        not spec.get("regex"))))
        self.regex = re.compile(spec["regex"]) if spec.get("regex") else None
        exclude = spec.get("exclude_regex", spec.get("exclude", ""))
        self.exclude = re.compile(exclude) if exclude else None
        self.exclude_topics = set(spec.get("exclude_topics") or [])
        mode = compression_mode_from_string(spec.get("compression_mode", ""))
        self.writer = (SequentialCompressionWriter(CompressionOptions(
            spec.get("compression_format", "zstd"), mode)) if mode else SequentialWriter())
        self.writer.open(StorageOptions(
            uri=spec["uri"], storage_id=spec.get("storage_id", ""),
            max_bagfile_size=int(spec.get("max_bagfile_size", 0)),
            max_bagfile_duration=int(spec.get("max_bagfile_duration", 0))))
        self.selected = set()

    def _selects(self, name):
        if name in self.exclude_topics or (self.exclude and self.exclude.search(name)):
            return False
        return (self.all or name in self.topics or
                (self.regex is not None and self.regex.search(name) is not None))

    def add_topics(self, topics):
        for topic in topics:
            if self._selects(topic.name):
                self.writer.create_topic(topic)
                self.selected.add(topic.name)

    def write(self, topic, data, t):
        if topic in self.selected:
            self.writer.write(topic, data, t)

    def close(self):
        self.writer.close()
