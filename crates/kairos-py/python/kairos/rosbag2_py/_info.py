"""rosbag2_py's ``Info`` (``rosbag2_py._info``): a bag's metadata, and ``ros2 bag info``'s
text for it."""

import os

from kairos import _kairos
from kairos.rosbag2_py._storage import metadata_from_yaml


class Info:
    def read_metadata(self, uri, storage_id=""):
        """The ``BagMetadata`` of the bag at ``uri`` (``storage_id`` is found from the
        files)."""
        uri = os.fspath(uri)
        return metadata_from_yaml(_kairos.BagReader(uri).metadata_yaml(), uri)

    def get_sorting_methods(self):
        return {"name", "type", "count"}

    def print_output(self, metadata, sorting_method="name"):
        print(_format(metadata, sorting_method))

    def print_output_topic_name_only(self, metadata, sorting_method="name"):
        for topic in _sorted(metadata, sorting_method):
            print(topic.topic_metadata.name)

    def print_output_verbose(self, uri, metadata, sorting_method="name"):
        print(_format(metadata, sorting_method))


def _sorted(metadata, method):
    key = {"name": lambda t: t.topic_metadata.name,
           "type": lambda t: t.topic_metadata.type,
           "count": lambda t: -t.message_count}.get(method)
    if key is None:
        raise RuntimeError(f"sorting method {method!r} is not one of name, type, count")
    return sorted(metadata.topics_with_message_count, key=key)


def _format(metadata, method):
    start = metadata.starting_time.nanoseconds
    duration_ns = round(metadata.duration.total_seconds() * 1e9)
    lines = [
        f"Files:             {metadata.relative_file_paths[0] if metadata.relative_file_paths else ''}",
    ]
    lines += [f"                   {p}" for p in metadata.relative_file_paths[1:]]
    lines += [
        f"Bag size:          {metadata.bag_size} B",
        f"Storage id:        {metadata.storage_identifier}",
        f"ROS Distro:        {metadata.ros_distro}",
        f"Duration:          {duration_ns / 1e9:.9f}s",
        f"Start:             ({start / 1e9:.9f})",
        f"End:               ({(start + duration_ns) / 1e9:.9f})",
        f"Messages:          {metadata.message_count}",
    ]
    topics = _sorted(metadata, method)
    for i, t in enumerate(topics):
        head = "Topic information: " if i == 0 else "                   "
        m = t.topic_metadata
        lines.append(f"{head}Topic: {m.name} | Type: {m.type} | Count: {t.message_count} | "
                     f"Serialization Format: {m.serialization_format}")
    return "\n".join(lines)
