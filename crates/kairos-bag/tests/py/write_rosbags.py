"""Writes a rosbag2 bag with rosbags' Writer and prints what it wrote as JSON.

Usage: write_rosbags.py OUT_DIR STORAGE COMPRESSION VERSION
  STORAGE: mcap | sqlite3; COMPRESSION: none | file | message; VERSION: 8 | 9

Two topics: /chatter (std_msgs/msg/String, 25 messages) and /tf
(geometry_msgs/msg/TransformStamped, 15 messages), at interleaved timestamps, with
offered QoS profiles; each message's CDR bytes are printed in hex.
"""

import sys
from pathlib import Path

from _common import emit, require

require('rosbags')
from rosbags.interfaces import (  # noqa: E402
    Qos, QosDurability, QosHistory, QosLiveliness, QosReliability, QosTime)
from rosbags.rosbag2 import CompressionFormat, CompressionMode, StoragePlugin, Writer  # noqa: E402
from rosbags.typesys import Stores, get_typestore  # noqa: E402

BASE = 1_700_000_000_000_000_000


def main():
    out, storage, compression, version = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    typestore = get_typestore(Stores.ROS2_JAZZY)
    String = typestore.types['std_msgs/msg/String']
    TransformStamped = typestore.types['geometry_msgs/msg/TransformStamped']
    Header = typestore.types['std_msgs/msg/Header']
    Time = typestore.types['builtin_interfaces/msg/Time']
    Transform = typestore.types['geometry_msgs/msg/Transform']
    Vector3 = typestore.types['geometry_msgs/msg/Vector3']
    Quaternion = typestore.types['geometry_msgs/msg/Quaternion']

    chatter_qos = Qos(
        QosHistory.KEEP_LAST, 10, QosReliability.RELIABLE, QosDurability.VOLATILE,
        QosTime(0, 0), QosTime(0, 0), QosLiveliness.AUTOMATIC,
        QosTime(9223372036, 854775807), False)
    tf_qos = Qos(
        QosHistory.KEEP_ALL, 0, QosReliability.BEST_EFFORT, QosDurability.TRANSIENT_LOCAL,
        QosTime(1, 500), QosTime(9223372036, 854775807), QosLiveliness.MANUAL_BY_TOPIC,
        QosTime(2, 0), True)

    plugin = {'mcap': StoragePlugin.MCAP, 'sqlite3': StoragePlugin.SQLITE3}[storage]
    writer = Writer(Path(out), version=version, storage_plugin=plugin)
    if compression != 'none':
        mode = {'file': CompressionMode.FILE, 'message': CompressionMode.MESSAGE}[compression]
        writer.set_compression(mode, CompressionFormat.ZSTD)
    written = []
    with writer:
        chatter = writer.add_connection(
            '/chatter', 'std_msgs/msg/String', typestore=typestore,
            offered_qos_profiles=[chatter_qos])
        tf = writer.add_connection(
            '/tf', 'geometry_msgs/msg/TransformStamped', typestore=typestore,
            offered_qos_profiles=[tf_qos, chatter_qos])
        for i in range(40):
            timestamp = BASE + 1_000_000 * i + (7 if i % 3 == 0 else 0)
            if i % 8 < 5:
                n = len([w for w in written if w['topic'] == '/chatter'])
                message = String(data=f'hello kairos {n} ü')
                connection, fields = chatter, {'data': message.data}
            else:
                n = len([w for w in written if w['topic'] == '/tf'])
                message = TransformStamped(
                    header=Header(stamp=Time(sec=1700 + n, nanosec=n * 1000), frame_id='map'),
                    child_frame_id=f'base_link_{n}',
                    transform=Transform(
                        translation=Vector3(x=1.5 * n, y=-2.0, z=0.25),
                        rotation=Quaternion(x=0.0, y=0.0, z=0.5, w=0.75)))
                connection, fields = tf, {'frame_id': 'map', 'sec': 1700 + n,
                                          'child_frame_id': f'base_link_{n}', 'x': 1.5 * n}
            data = typestore.serialize_cdr(message, connection.msgtype)
            writer.write(connection, timestamp, data)
            written.append({'topic': connection.topic, 'timestamp': timestamp,
                            'cdr': bytes(data).hex(), 'fields': fields})
    emit({
        'written': written,
        'hashes': {t: typestore.hash_rihs01(t)
                   for t in ['std_msgs/msg/String', 'geometry_msgs/msg/TransformStamped']},
    })


if __name__ == '__main__':
    main()
