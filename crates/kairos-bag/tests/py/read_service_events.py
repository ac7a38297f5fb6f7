"""Reads the service events (``<service>/_service_event``) of a rosbag2 bag with rosbags
and prints them as JSON.

Usage: read_service_events.py BAG SERVICE_TYPE SRV_FILE

rosbag2 stores a service event topic's schema as its ``.srv`` text, which neither rosbags'
AnyReader nor mcap_ros2 parses (rosbag2's own test bags fail in both), so the event type
is built here from SRV_FILE as rosidl builds it (``service_msgs/ServiceEventInfo info``, at
most one request, at most one response) and every message of the event topics is
deserialized with rosbags' CDR decoder.
"""

import sys
from pathlib import Path

from _common import emit, plain, require

require('rosbags')
from rosbags.rosbag2 import Reader  # noqa: E402
from rosbags.typesys import Stores, get_typestore, get_types_from_msg  # noqa: E402


def service_names(value):
    """rosbags' parser files every type under ``pkg/msg/``; a service's types are under
    ``pkg/srv/``, which their names must say."""
    if isinstance(value, str):
        return value.replace('/srv/msg/', '/srv/')
    if isinstance(value, dict):
        return {service_names(k): service_names(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(service_names(v) for v in value)
    return value


def main():
    path, service, srv_file = Path(sys.argv[1]), sys.argv[2], Path(sys.argv[3])
    request, response = srv_file.read_text().split('---\n', 1)
    event = (f'service_msgs/msg/ServiceEventInfo info\n'
             f'{service}_Request[<=1] request\n{service}_Response[<=1] response\n')
    types = {}
    for text, name in ((request, 'Request'), (response, 'Response'), (event, 'Event')):
        types.update(get_types_from_msg(text, f'{service}_{name}'))
    store = get_typestore(Stores.ROS2_JAZZY)
    store.register(service_names(types))
    out = {'connections': [], 'events': []}
    with Reader(path) as reader:
        events = [c for c in reader.connections if c.topic.endswith('/_service_event')]
        for c in events:
            out['connections'].append({'topic': c.topic, 'msgtype': c.msgtype,
                                       'digest': c.digest, 'msgcount': c.msgcount})
        for connection, timestamp, data in reader.messages(connections=events):
            message = store.deserialize_cdr(data, connection.msgtype)
            out['events'].append({'topic': connection.topic, 'log_time': timestamp,
                                  'data': plain(message)})
    emit(out)


if __name__ == '__main__':
    main()
