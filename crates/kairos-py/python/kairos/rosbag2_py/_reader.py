"""rosbag2_py's readers (``rosbag2_py._reader``) on kairos-bag.

``read_next()`` returns ``(topic, data, receive_time_ns)``: data is the serialized
message (CDR, decompressed). Messages come in receive-time order across every file of
the bag, equal times in storage order, as rosbag2 reads them.

The read position is rosbag2's: ``seek(t)`` goes to the first message received at or
after ``t`` and keeps the filter; ``set_filter`` and ``reset_filter`` keep the position,
so the next message is the first one after the last one read that passes the new filter
(rosbag2's tests ``test_reset_filter``, ``test_seek_forward``). kairos-bag reads from a
time; this module remembers how many messages at the last time read were passed, so a
filter change resumes exactly there."""

import os
import re

from kairos import _kairos
from kairos.rosbag2_py._storage import (MessageDefinition, ReadOrderSortBy, StorageFilter,
                                        metadata_from_yaml)

_SERVICE_EVENT = "/_service_event"


def get_registered_readers():
    """The storages kairos reads."""
    return {"mcap", "sqlite3"}


class _Selection:
    """A ``StorageFilter`` compiled: which topics a reader yields (the rules of rosbag2's
    MCAP storage, ``MCAPStorage::reset_iterator``)."""

    def __init__(self, storage_filter):
        f = storage_filter or StorageFilter()
        self.topics = set(f.topics)
        self.services = set(f.services_events)
        self.exclude_topics = set(f.exclude_topics)
        self.exclude_services = set(f.exclude_service_events)
        self.regex = re.compile(f.regex) if f.regex else None
        self.exclude = re.compile(f.regex_to_exclude) if f.regex_to_exclude else None
        self.cache = {}

    def __call__(self, topic):
        chosen = self.cache.get(topic)
        if chosen is None:
            chosen = self.cache[topic] = self._decide(topic)
        return chosen

    def _decide(self, topic):
        service = len(topic) > len(_SERVICE_EVENT) and topic.endswith(_SERVICE_EVENT)
        include = self.services if service else self.topics
        exclude = self.exclude_services if service else self.exclude_topics
        if topic in exclude or (self.exclude is not None and self.exclude.fullmatch(topic)):
            return False
        if not include and self.regex is None:
            return True
        return topic in include or (self.regex is not None and
                                    self.regex.fullmatch(topic) is not None)


class SequentialReader:
    """Reads a bag message by message (rosbag2_cpp's ``SequentialReader``)."""

    def __init__(self):
        self._bag = None
        self._select = _Selection(None)
        self._peeked = None
        # The position: where the current read started (open or seek), the receive time
        # of the last message taken from kairos-bag since, and how many messages (passed
        # or skipped) at that time were taken.
        self._origin = None
        self._time = None
        self._at_time = 0
        self._start = None
        self._end = None

    # Opening and describing.

    def open(self, storage_options, converter_options=None):
        """Opens the bag at ``storage_options.uri`` (a folder, a ``.mcap`` or ``.db3``
        file); reads only between its ``start_time_ns`` and ``end_time_ns`` when set."""
        uri = os.fspath(storage_options.uri)
        self._bag = _kairos.BagReader(uri)
        self._uri = uri
        start = getattr(storage_options, "start_time_ns", -1)
        end = getattr(storage_options, "end_time_ns", -1)
        self._start = start if start is not None and start >= 0 else None
        self._end = end if end is not None and end >= 0 else None
        self._restart(self._start)

    def open_uri(self, uri):
        from kairos.rosbag2_py._storage import StorageOptions
        self.open(StorageOptions(uri=uri))

    def close(self):
        self._bag = None
        self._peeked = None

    def _reader(self):
        if self._bag is None:
            raise RuntimeError("the reader is not open: call open(storage_options, "
                               "converter_options) first")
        return self._bag

    def get_metadata(self):
        return metadata_from_yaml(self._reader().metadata_yaml(), self._uri)

    def get_all_topics_and_types(self):
        return [t.topic_metadata for t in self.get_metadata().topics_with_message_count]

    def get_all_message_definitions(self):
        return [MessageDefinition(*d) for d in self._reader().message_definitions()]

    # The read position.

    def _restart(self, start_ns):
        self._reader().start(start_ns, self._end)
        self._origin = start_ns
        self._peeked = None
        self._time = None
        self._at_time = 0

    def _take(self):
        """The next message of the bag, passing the filter or not; advances the position."""
        row = self._bag.next()
        if row is not None:
            t = row[2]
            if t == self._time:
                self._at_time += 1
            else:
                self._time, self._at_time = t, 1
        return row

    def _resume(self):
        """Reads again from the position (after a filter change, past a peeked message)."""
        if self._peeked is None:
            return
        time, passed = self._peeked[1]
        if time is None:
            # Nothing taken since the last open or seek: read again from there.
            self._restart(self._origin)
            return
        self._restart(time)
        for _ in range(passed):
            self._take()

    def _peek(self):
        if self._peeked is None:
            position = (self._time, self._at_time)
            while True:
                row = self._take()
                if row is None:
                    self._peeked = (None, position)
                    break
                if self._select(row[0]):
                    self._peeked = (row, position)
                    break
        return self._peeked[0]

    def has_next(self):
        self._reader()
        return self._peek() is not None

    def read_next(self):
        self._reader()
        row = self._peek()
        if row is None:
            raise RuntimeError("no more messages in the bag: check has_next() first")
        self._peeked = None
        topic, data, receive_ns, _publish_ns, _sequence = row
        return topic, data, receive_ns

    def set_filter(self, storage_filter):
        self._reader()
        self._resume()
        self._select = _Selection(storage_filter)

    def reset_filter(self):
        self.set_filter(StorageFilter())

    def seek(self, timestamp):
        """Goes to the first message received at or after ``timestamp`` (ns)."""
        self._restart(max(int(timestamp), 0) if self._start is None
                      else max(int(timestamp), self._start))

    def set_read_order(self, read_order):
        """kairos reads by receive time, forward: any other order is refused (False)."""
        return (read_order.sort_by == ReadOrderSortBy.ReceivedTimestamp
                and not read_order.reverse)


class SequentialCompressionReader(SequentialReader):
    """Reads a compressed bag: kairos's reader decompresses what ``metadata.yaml`` says
    is compressed, so this is ``SequentialReader``."""
