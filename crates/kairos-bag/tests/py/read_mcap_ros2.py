"""Reads MCAP files with the `mcap` package and decodes them with `mcap_ros2` from the
schemas in the files; prints records and messages as JSON.

Usage: read_mcap_ros2.py FILE.mcap...

mcap_ros2 builds its decoders from the `ros2msg` schema text alone, so a schema missing a
dependency (or naming it wrongly) fails to decode here.
"""

import sys

from _common import emit, plain, require

require('mcap')
require('mcap_ros2')
from mcap.reader import make_reader  # noqa: E402
from mcap_ros2.decoder import DecoderFactory  # noqa: E402


def main():
    files = []
    for path in sys.argv[1:]:
        with open(path, 'rb') as stream:
            reader = make_reader(stream, decoder_factories=[DecoderFactory()])
            header = reader.get_header()
            summary = reader.get_summary()
            statistics = summary.statistics
            files.append({
                'path': path,
                'profile': header.profile,
                'library': header.library,
                'schemas': [
                    {'name': s.name, 'encoding': s.encoding, 'data': s.data.decode()}
                    for s in summary.schemas.values()
                ],
                'channels': [
                    {
                        'topic': c.topic,
                        'message_encoding': c.message_encoding,
                        'metadata': dict(c.metadata),
                    }
                    for c in summary.channels.values()
                ],
                'metadata': [
                    {'name': m.name, 'metadata': dict(m.metadata)}
                    for m in reader.iter_metadata()
                ],
                'chunk_compression': sorted({c.compression for c in summary.chunk_indexes}),
                'statistics': {
                    'message_count': statistics.message_count,
                    'message_start_time': statistics.message_start_time,
                    'message_end_time': statistics.message_end_time,
                },
                'messages': [
                    {
                        'topic': channel.topic,
                        'schema': schema.name,
                        'log_time': message.log_time,
                        'publish_time': message.publish_time,
                        'sequence': message.sequence,
                        'data': plain(decoded),
                    }
                    for schema, channel, message, decoded in reader.iter_decoded_messages(
                        log_time_order=True)
                ],
            })
    emit({'files': files})


if __name__ == '__main__':
    main()
