"""rosbag2_py's ``Info`` (``rosbag2_py._info``): a bag's metadata, and ``ros2 bag info``'s
text for it, written by kairos-bag's ``info`` (the text ``kairos bag info`` prints)."""

import os

import yaml

from kairos import _kairos
from kairos.rosbag2_py._storage import metadata_from_yaml, metadata_to_dict


class Info:
    def read_metadata(self, uri, storage_id=""):
        """The ``BagMetadata`` of the bag at ``uri`` (``storage_id`` is found from the
        files)."""
        uri = os.fspath(uri)
        return metadata_from_yaml(_kairos.BagReader(uri).metadata_yaml(), uri)

    def get_sorting_methods(self):
        return {"name", "type", "count"}

    def print_output(self, metadata, sorting_method="name"):
        print(_kairos.bag_info_text(_yaml(metadata), metadata.bag_size, sorting_method))

    def print_output_topic_name_only(self, metadata, sorting_method="name"):
        for name in _kairos.bag_info_topic_names(_yaml(metadata), sorting_method):
            print(name)

    def print_output_verbose(self, uri, metadata, sorting_method="name"):
        print(_kairos.bag_info_text(_yaml(metadata), metadata.bag_size, sorting_method,
                                    os.fspath(uri)))


def _yaml(metadata):
    return yaml.safe_dump(metadata_to_dict(metadata))
