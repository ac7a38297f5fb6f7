"""rosbag2_py on kairos (``kairos.rosbag2_py``, ``import rosbag2_py`` under ``kairos.run``):
rosbag2's own test bags read as rosbag2_py reads them, bags written from Python read back
by ``rosbags`` (an independent reader from PyPI), the reader's position and filter checked
against a model over random operations, and errors that say what to do."""

import os
import pathlib
import random
import subprocess
import sys
import threading

import pytest

from kairos.rcl_interfaces.msg import Log
from kairos.rosbag2_py import (
    BagError,
    CompressionMode,
    CompressionOptions,
    ConverterOptions,
    Info,
    LocalMessageDefinitionSource,
    MetadataIo,
    Player,
    PlayOptions,
    Recorder,
    RecordOptions,
    Reindexer,
    SequentialCompressionWriter,
    SequentialReader,
    SequentialWriter,
    StorageFilter,
    StorageOptions,
    TopicMetadata,
    bag_rewrite,
)
from kairos.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from kairos.serialization import deserialize_message, serialize_message
from kairos.std_msgs.msg import String

from conftest import LIMIT, ROOT, kairos_bin, python, run, wait_until

BAGS = ROOT / "crates" / "kairos-bag" / "tests" / "data" / "rosbag2"
STORAGES = ("mcap", "sqlite3")


def open_reader(path, **options):
    reader = SequentialReader()
    reader.open(StorageOptions(uri=str(path), **options),
                ConverterOptions("cdr", "cdr"))
    return reader


def read_all(reader):
    out = []
    while reader.has_next():
        out.append(reader.read_next())
    return out


@pytest.mark.parametrize("storage", STORAGES)
def test_talker_reads_as_rosbag2_py_reads_it(storage):
    reader = open_reader(BAGS / storage / "talker")
    types = {t.name: t.type for t in reader.get_all_topics_and_types()}
    assert types == {"/topic": "std_msgs/msg/String", "/rosout": "rcl_interfaces/msg/Log",
                     "/parameter_events": "rcl_interfaces/msg/ParameterEvent"}
    reader.set_filter(StorageFilter(topics=["/topic"]))
    texts = [deserialize_message(data, String).data for _, data, _ in read_all(reader)]
    assert texts == [f"Hello, world! {i}" for i in range(10)]

    reader = open_reader(BAGS / storage / "talker")
    rows = read_all(reader)
    assert len(rows) == 20
    assert [t for _, _, t in rows] == sorted(t for _, _, t in rows)
    logs = [deserialize_message(d, Log) for topic, d, _ in rows if topic == "/rosout"]
    assert len(logs) == 10 and all(log.name == "minimal_publisher" for log in logs)

    metadata = reader.get_metadata()
    assert metadata.message_count == 20
    assert metadata.starting_time.nanoseconds == 1_585_866_235_112_411_371
    assert metadata.storage_identifier == storage
    assert metadata.bag_size > 0
    counts = {t.topic_metadata.name: t.message_count for t in metadata.topics_with_message_count}
    assert counts == {"/topic": 10, "/rosout": 10, "/parameter_events": 0}
    rosout = next(t.topic_metadata for t in metadata.topics_with_message_count
                  if t.topic_metadata.name == "/rosout")
    assert rosout.offered_qos_profiles[0].durability == DurabilityPolicy.TRANSIENT_LOCAL

    definitions = sorted(reader.get_all_message_definitions(), key=lambda d: d.topic_type)
    assert [d.topic_type for d in definitions] == [
        "rcl_interfaces/msg/Log", "rcl_interfaces/msg/ParameterEvent", "std_msgs/msg/String"]
    assert "string data" in definitions[2].encoded_message_definition


@pytest.mark.parametrize("storage", STORAGES)
def test_filter_and_seek_keep_rosbag2s_position(storage):
    # rosbag2_py's test_sequential_reader_multiple_files.py, on the same bag.
    reader = open_reader(BAGS / storage / "wbag")
    reader.set_filter(StorageFilter(topics=["AAA", "CCC", "DDD"]))
    got = [(t, ts) for t, _, ts in (reader.read_next() for _ in range(3))]
    assert got == [("AAA", 1001), ("CCC", 1002), ("AAA", 1004)]
    reader.reset_filter()
    got = [(t, ts) for t, _, ts in (reader.read_next() for _ in range(3))]
    assert got == [("FFF", 1004), ("BBB", 1004), ("EEE", 1005)]

    reader.seek(1822)
    assert reader.read_next()[::2] == ("CCC", 1822)
    reader.set_filter(StorageFilter(topics=["BBB", "GGG"]))
    got = [(t, ts) for t, _, ts in (reader.read_next() for _ in range(3))]
    assert got == [("GGG", 1822), ("GGG", 1822), ("BBB", 1826)]
    reader.seek(1408)
    got = [(t, ts) for t, _, ts in (reader.read_next() for _ in range(3))]
    assert got == [("BBB", 1408), ("GGG", 1408), ("BBB", 1413)]


def test_the_reader_follows_a_model_over_random_operations():
    """Random reads, peeks, filters and seeks on a five-file bag, against a model: the
    bag's messages as one list, a position in it, and a filter."""
    seed = random.randrange(2**32)
    rng = random.Random(seed)
    path = BAGS / "mcap" / "wbag"
    everything = read_all(open_reader(path))
    topics = sorted({t for t, _, _ in everything})
    times = [ts for _, _, ts in everything]
    for run in range(20):
        reader = open_reader(path)
        position, chosen = 0, None
        for step in range(60):
            op = rng.choice(["read", "read", "read", "has_next", "filter", "reset", "seek"])
            where = f"seed {seed}, run {run}, step {step} ({op})"
            if op in ("read", "has_next"):
                following = [i for i in range(position, len(everything))
                             if chosen is None or everything[i][0] in chosen]
                assert reader.has_next() == bool(following), where
                if op == "read" and following:
                    assert reader.read_next() == everything[following[0]], where
                    position = following[0] + 1
            elif op == "filter":
                chosen = set(rng.sample(topics, rng.randint(1, len(topics))))
                reader.set_filter(StorageFilter(topics=sorted(chosen)))
            elif op == "reset":
                chosen = None
                reader.reset_filter()
            else:
                t = rng.choice(times) + rng.choice([-1, 0, 0, 1])
                reader.seek(t)
                position = next((i for i, ts in enumerate(times) if ts >= t), len(times))


@pytest.mark.parametrize("storage", STORAGES)
@pytest.mark.parametrize("mode", [CompressionMode.NONE, CompressionMode.MESSAGE,
                                  CompressionMode.FILE])
def test_a_written_bag_is_read_by_rosbags(tmp_path, storage, mode):
    try:
        from rosbags.highlevel import AnyReader
        from rosbags.typesys import Stores, get_typestore
    except ImportError:
        pytest.fail("rosbags is missing: pip install rosbags (scripts/test installs it)")
    path = tmp_path / "written"
    writer = (SequentialCompressionWriter(CompressionOptions("zstd", mode))
              if mode != CompressionMode.NONE else SequentialWriter())
    writer.open(StorageOptions(uri=str(path), storage_id=storage,
                               max_bagfile_duration=1),
                ConverterOptions("cdr", "cdr"))
    reliable = QoSProfile(depth=7, reliability=ReliabilityPolicy.BEST_EFFORT)
    writer.create_topic(TopicMetadata(0, "/chatter", "std_msgs/msg/String", "cdr", [reliable]))
    sent = []
    for i in range(30):
        t = 1_700_000_000_000_000_000 + i * 100_000_000  # 10 Hz: three files of 1 s
        writer.write("/chatter", serialize_message(String(data=f"hi {i}")), t)
        sent.append((f"hi {i}", t))
    writer.close()

    metadata = MetadataIo().read_metadata(str(path))
    assert metadata.storage_identifier == storage
    assert metadata.message_count == 30
    assert len(metadata.relative_file_paths) == 3
    assert metadata.compression_mode == ("" if mode == CompressionMode.NONE else mode.name)
    qos = metadata.topics_with_message_count[0].topic_metadata.offered_qos_profiles
    assert qos == [reliable]

    got = [(deserialize_message(d, String).data, t) for _, d, t in read_all(open_reader(path))]
    assert got == sent

    with AnyReader([pathlib.Path(path)],
                   default_typestore=get_typestore(Stores.ROS2_HUMBLE)) as bag:
        assert bag.message_count == 30
        decoded = [(bag.deserialize(raw, c.msgtype).data, t)
                   for c, t, raw in bag.messages()]
        (connection,) = bag.connections
        assert connection.ext.offered_qos_profiles[0].depth == 7
    assert decoded == sent


def test_a_bag_is_rewritten_by_topic(tmp_path):
    config = tmp_path / "out.yaml"
    one, two = tmp_path / "only_topic", tmp_path / "no_rosout"
    config.write_text(f"output_bags:\n- uri: {one}\n  topics: [/topic]\n"
                      f"- uri: {two}\n  storage_id: sqlite3\n  exclude_regex: /rosout\n")
    bag_rewrite([StorageOptions(uri=str(BAGS / "mcap" / "talker"))], str(config))
    first = [t for t, _, _ in read_all(open_reader(one))]
    second = [t for t, _, _ in read_all(open_reader(two))]
    assert first == ["/topic"] * 10
    assert second == ["/topic"] * 10
    assert MetadataIo().read_metadata(str(two)).storage_identifier == "sqlite3"

    bad = tmp_path / "bad.yaml"
    bad.write_text("[{key: value}]")
    with pytest.raises(RuntimeError, match="output_bags"):
        bag_rewrite([], str(bad))


def test_reindex_rebuilds_the_metadata(tmp_path):
    path = tmp_path / "lost"
    writer = SequentialWriter()
    writer.open(StorageOptions(uri=str(path), max_bagfile_size=4096), ConverterOptions())
    writer.create_topic(TopicMetadata(0, "/a", "std_msgs/msg/String", "cdr"))
    for i in range(200):
        writer.write("/a", serialize_message(String(data="x" * 100)), i)
    writer.close()
    os.remove(path / "metadata.yaml")
    Reindexer().reindex(StorageOptions(uri=str(path)))
    metadata = Info().read_metadata(str(path), "mcap")
    assert metadata.message_count == 200
    assert len(metadata.files) > 2


def test_info_prints_what_ros2_bag_info_prints(capsys, monkeypatch):
    # The figures rosbag2's test_rosbag2_info_end_to_end.cpp expects of this bag.
    monkeypatch.setenv("TZ", "UTC")
    bag = BAGS / "sqlite3" / "bag_with_topics_and_service_events"
    info = Info()
    metadata = info.read_metadata(bag, "sqlite3")
    info.print_output(metadata)
    text = capsys.readouterr().out
    for expected in [
        "\nStorage id:        sqlite3\nROS Distro:        unknown\nDuration:          0.0706",
        "\nStart:             Nov  7 2023 08:30:36.",
        "\nMessages:          2\nTopic information: Topic: /events/write_split",
        "Topic: /test_topic1 | Type: test_msgs/msg/Strings | Count: 1 | Serialization Format: cdr\n",
        "\nService:           2\nService information: Service: /test_service1 | "
        "Type: test_msgs/srv/BasicTypes | Event Count: 4 | Serialization Format: cdr\n",
    ]:
        assert expected in text, text
    info.print_output_verbose(bag, metadata, "count")
    text = capsys.readouterr().out
    assert ("Service: /test_service2 | Type: test_msgs/srv/BasicTypes | Request Count: 2 | "
            "Response Count: 2 | Size Contribution: 434 B | Serialization Format: cdr\n") in text
    assert ("Topic: /events/write_split | Type: rosbag2_interfaces/msg/WriteSplitEvent | "
            "Count: 0 | Size Contribution: 0 B | Serialization Format: cdr\n") in text
    info.print_output_topic_name_only(metadata, "name")
    assert capsys.readouterr().out == "/events/write_split\n/test_topic1\n/test_topic2\n"
    with pytest.raises(RuntimeError, match="size"):
        info.print_output(metadata, "size")


def test_definitions_of_shipped_and_unknown_types():
    source = LocalMessageDefinitionSource()
    pose = source.get_full_text("geometry_msgs/msg/PoseStamped")
    assert pose.encoding == "ros2msg"
    assert "MSG: geometry_msgs/Point" in pose.encoded_message_definition
    unknown = source.get_full_text("some_pkg")
    assert (unknown.encoding, unknown.encoded_message_definition) == ("unknown", "")


def test_errors_say_what_to_do(tmp_path):
    with pytest.raises(BagError, match="does not exist"):
        open_reader(tmp_path / "nowhere")
    reader = SequentialReader()
    with pytest.raises(RuntimeError, match="open"):
        reader.read_next()
    writer = SequentialWriter()
    writer.open(StorageOptions(uri=str(tmp_path / "w")), ConverterOptions())
    with pytest.raises(BagError, match="no_topic"):
        writer.write("/no_topic", b"\0\1\0\0", 1)
    writer.close()
    with pytest.raises(RuntimeError, match="not open"):
        writer.write("/no_topic", b"\0\1\0\0", 1)
    with pytest.raises(BagError, match="exists"):
        SequentialWriter().open(StorageOptions(uri=str(tmp_path / "w")), ConverterOptions())
    with pytest.raises(BagError, match="storage 'tape'"):
        SequentialWriter().open(StorageOptions(uri=str(tmp_path / "t"), storage_id="tape"),
                                ConverterOptions())
    with pytest.raises(RuntimeError, match="log level"):
        Player("loud")


def test_a_paused_player_waits_for_cancel_and_a_zero_duration_plays_nothing(monkeypatch,
                                                                             router):
    """start_paused: the player plays nothing until resumed (here never), so only cancel()
    ends it; playback_duration 0 ends the play at once, as rosbag2's does."""
    for key, value in router.env(KAIROS_BIN=str(kairos_bin())).items():
        monkeypatch.setenv(key, value)
    bag = StorageOptions(uri=str(BAGS / "mcap" / "talker"))
    player = Player()
    options = PlayOptions()
    options.start_paused = True
    options.loop = True
    thread = threading.Thread(target=player.play, args=(bag, options), daemon=True)
    thread.start()
    wait_until(lambda: player._child is not None)
    thread.join(1.0)
    assert thread.is_alive(), "a paused player ended on its own"
    player.cancel()
    thread.join(LIMIT)
    assert not thread.is_alive()

    options = PlayOptions()
    options.playback_duration = 0.0
    done = threading.Thread(target=Player().play, args=(bag, options), daemon=True)
    done.start()
    done.join(LIMIT)
    assert not done.is_alive()


def test_play_options_choose_what_plays_and_when_the_clock_moves(capfd, monkeypatch, router):
    """PlayOptions' filters choose as rosbag2's reader does (topics and services apart,
    whole-name patterns), and clock_publish_on_topic_publish moves /clock before each
    message of clock_topics: what `kairos bag play` reports it sent."""
    for key, value in router.env(KAIROS_BIN=str(kairos_bin())).items():
        monkeypatch.setenv(key, value)
    bag = StorageOptions(uri=str(BAGS / "mcap" / "bag_with_topics_and_service_events"))
    options = PlayOptions()
    options.rate = 100.0
    options.topics_to_filter = ["/test_topic1"]
    options.exclude_service_events_to_filter = ["/test_service2/_service_event"]
    Player().play(bag, options)
    out = capfd.readouterr().out
    assert "/test_topic1: 1 sent" in out and "/test_service1/_service_event: 4 sent" in out, out
    assert "/test_topic2" not in out and "/test_service2" not in out, out

    talker = StorageOptions(uri=str(BAGS / "mcap" / "talker"))
    options = PlayOptions()
    options.rate = 20.0
    options.topics_regex_to_filter = "/top.*"  # the older name of regex_to_filter
    options.clock_publish_on_topic_publish = True
    options.clock_topics = ["/topic"]
    Player().play(talker, options)
    out = capfd.readouterr().out
    assert "/topic: 10 sent" in out and "/clock: 10 sent" in out, out
    assert "/rosout" not in out, out
    options.regex_to_filter = "/top"  # a whole name: it matches nothing
    with pytest.raises(RuntimeError, match="exit status"):
        Player().play(talker, options)


def test_burst_sends_every_message_and_ends_or_some_and_stays_paused(monkeypatch, router):
    """Player.burst runs `kairos bag burst`: with 0 it sends the whole bag and returns;
    with fewer than the bag holds it stays paused until cancel(), as rosbag2's."""
    for key, value in router.env(KAIROS_BIN=str(kairos_bin())).items():
        monkeypatch.setenv(key, value)
    bag = StorageOptions(uri=str(BAGS / "mcap" / "talker"))
    options = PlayOptions()
    options.topics_to_filter = ["/topic"]
    everything = threading.Thread(target=Player().burst, args=(bag, options, 0), daemon=True)
    everything.start()
    everything.join(LIMIT)
    assert not everything.is_alive(), "a burst of the whole bag did not end"

    player = Player()
    some = threading.Thread(target=player.burst, args=(bag, options, 2), daemon=True)
    some.start()
    wait_until(lambda: player._child is not None)
    some.join(1.0)
    assert some.is_alive(), "a burst of 2 of 10 ended instead of staying paused"
    player.cancel()
    some.join(LIMIT)
    assert not some.is_alive()


@pytest.mark.parametrize("storage", STORAGES)
def test_a_recorder_and_a_player_run_kairos_and_stop_on_cancel(tmp_path, monkeypatch, router,
                                                               storage):
    """Recorder.record runs `kairos bag record` until cancel(); Player.play plays the bag
    it wrote; the recorded messages are the ones published."""
    for key, value in router.env(KAIROS_BIN=str(kairos_bin())).items():
        monkeypatch.setenv(key, value)
    path = tmp_path / "recorded"
    publisher = subprocess.Popen(
        [str(kairos_bin()), "topic", "pub", "/rosbag2_py_test", "std_msgs/msg/String",
         "{data: recorded}", "--rate", "20", "--times", "40", "--wait-matching", str(LIMIT)],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    recorder = Recorder()
    options = RecordOptions()
    options.topics = ["/rosbag2_py_test"]
    options.compression_mode = "message"
    failures = []

    def record():
        try:
            recorder.record(StorageOptions(uri=str(path), storage_id=storage), options)
        except Exception as e:  # noqa: BLE001 - reported by the test below
            failures.append(e)

    thread = threading.Thread(target=record, daemon=True)
    thread.start()
    try:
        wait_until(lambda: publisher.poll() is not None or not thread.is_alive())
        assert not failures, failures
        assert publisher.wait(timeout=LIMIT) == 0, publisher.stderr.read()
    finally:
        publisher.kill()
    recorder.cancel()
    thread.join(LIMIT)
    assert not thread.is_alive() and not failures, failures
    rows = read_all(open_reader(path))
    assert rows and all(deserialize_message(d, String).data == "recorded" for _, d, _ in rows)
    metadata = MetadataIo().read_metadata(str(path))
    assert (metadata.storage_identifier, metadata.compression_mode) == (storage, "MESSAGE")

    player = Player()
    played = threading.Thread(target=player.play,
                              args=(StorageOptions(uri=str(path)), PlayOptions()), daemon=True)
    played.start()
    played.join(LIMIT)
    assert not played.is_alive()


def test_a_recorder_started_paused_records_nothing_under_its_node_name(tmp_path, monkeypatch,
                                                                       router):
    """start_paused and node_name reach `kairos bag record`: its is_paused service answers
    True under the node name given, and what is published meanwhile is not recorded."""
    for key, value in router.env(KAIROS_BIN=str(kairos_bin())).items():
        monkeypatch.setenv(key, value)
    path = tmp_path / "paused"
    recorder = Recorder()
    options = RecordOptions()
    options.topics = ["/paused_test"]
    options.start_paused = True
    failures = []

    def record():
        try:
            recorder.record(StorageOptions(uri=str(path)), options, node_name="paused_recorder")
        except Exception as e:  # noqa: BLE001 - reported by the test below
            failures.append(e)

    thread = threading.Thread(target=record, daemon=True)
    thread.start()
    try:
        asked = python("""
import kairos
from kairos.node import Node
from kairos.rosbag2_interfaces.srv import IsPaused
kairos.init()
node = Node("py_asker")
client = node.create_client(IsPaused, "/paused_recorder/is_paused")
assert client.wait_for_service(timeout_sec=30), "no /paused_recorder/is_paused within 30 s"
print(client.call(IsPaused.Request(), timeout_sec=30).paused)
""", router.env())
        assert (asked.returncode, asked.stdout.strip()) == (0, "True"), asked.stderr
        # The publisher waits until the recorder's subscription matches, then sends.
        published = run([str(kairos_bin()), "topic", "pub", "/paused_test",
                         "std_msgs/msg/String", "{data: unseen}", "--rate", "50", "--times",
                         "5", "--wait-matching", str(LIMIT)], router.env())
        assert published.returncode == 0, published.stderr
    finally:
        recorder.cancel()
        thread.join(LIMIT)
    assert not thread.is_alive() and not failures, failures
    assert MetadataIo().read_metadata(str(path)).message_count == 0


@pytest.mark.parametrize("storage", STORAGES)
def test_a_recording_cancelled_before_it_started_leaves_an_empty_bag(tmp_path, monkeypatch,
                                                                     storage):
    monkeypatch.setenv("KAIROS_BIN", str(kairos_bin()))
    recorder = Recorder()
    recorder.cancel()
    options = RecordOptions()
    options.all_topics = True
    recorder.record(StorageOptions(uri=str(tmp_path / "empty"), storage_id=storage), options)
    metadata = MetadataIo().read_metadata(str(tmp_path / "empty"))
    assert (metadata.storage_identifier, metadata.message_count) == (storage, 0)


def test_rosbag2_py_is_importable_under_kairos_run(tmp_path):
    script = tmp_path / "script.py"
    script.write_text(
        "import rosbag2_py\n"
        "from rosidl_runtime_py.utilities import get_message\n"
        "from rclpy.serialization import deserialize_message\n"
        f"reader = rosbag2_py.SequentialReader()\n"
        f"reader.open(rosbag2_py.StorageOptions(uri={str(BAGS / 'sqlite3' / 'talker')!r}),\n"
        "            rosbag2_py.ConverterOptions('cdr', 'cdr'))\n"
        "types = {t.name: t.type for t in reader.get_all_topics_and_types()}\n"
        "while reader.has_next():\n"
        "    topic, data, t = reader.read_next()\n"
        "    print(topic, type(deserialize_message(data, get_message(types[topic]))).__name__)\n")
    out = subprocess.run([sys.executable, "-m", "kairos.run", str(script)], capture_output=True,
                         text=True, timeout=LIMIT, check=True).stdout.splitlines()
    assert out.count("/topic String") == 10 and out.count("/rosout Log") == 10
