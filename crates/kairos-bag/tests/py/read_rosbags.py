"""Reads a rosbag2 bag with rosbags (an independent Python reader) and prints it as JSON.

Usage: read_rosbags.py BAG

rosbags' AnyReader builds its deserializers from the message definitions stored in the bag
and checks each topic's RIHS01 hash against them, so a bag whose definitions or hashes are
wrong fails here.
"""

import sys
from pathlib import Path

from _common import emit, plain, require

require('rosbags')
from rosbags.highlevel import AnyReader  # noqa: E402
from ruamel.yaml import YAML  # noqa: E402  (rosbags' YAML library)
from rosbags.rosbag2 import Reader  # noqa: E402


def main():
    path = Path(sys.argv[1])
    with Reader(path) as raw:
        connections = [
            {
                'topic': c.topic,
                'msgtype': c.msgtype,
                'msgcount': c.msgcount,
                'digest': c.digest,
                'serialization_format': c.ext.serialization_format,
                'qos': [
                    {
                        'history': q.history.name.lower(),
                        'depth': q.depth,
                        'reliability': q.reliability.name.lower(),
                        'durability': q.durability.name.lower(),
                        'deadline': list(q.deadline),
                        'lifespan': list(q.lifespan),
                        'liveliness': q.liveliness.name.lower(),
                        'liveliness_lease_duration': list(q.liveliness_lease_duration),
                        'avoid_ros_namespace_conventions': q.avoid_ros_namespace_conventions,
                    }
                    for q in c.ext.offered_qos_profiles
                ],
            }
            for c in raw.connections
        ]
        document = YAML(typ='safe').load((path / 'metadata.yaml').read_text())
        metadata = document['rosbag2_bagfile_information']
        info = {
            'version': metadata['version'],
            'storage_identifier': metadata['storage_identifier'],
            'message_count': raw.message_count,
            'start_time': raw.start_time,
            'end_time': raw.end_time,
            'files': [f['path'] for f in metadata.get('files', [])],
        }
    with AnyReader([path]) as reader:
        messages = [
            {
                'topic': connection.topic,
                'msgtype': connection.msgtype,
                'timestamp': timestamp,
                'data': plain(reader.deserialize(raw_data, connection.msgtype)),
            }
            for connection, timestamp, raw_data in reader.messages()
        ]
    emit({'info': info, 'connections': connections, 'messages': messages})


if __name__ == '__main__':
    main()
