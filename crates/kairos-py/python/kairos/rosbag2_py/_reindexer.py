"""rosbag2_py's ``Reindexer`` (``rosbag2_py._reindexer``): ``ros2 bag reindex``."""

import os

from kairos import _kairos


class Reindexer:
    def reindex(self, storage_options):
        """Rebuilds the ``metadata.yaml`` of the bag folder ``storage_options.uri`` from
        its storage files (a bag whose recorder was killed, or whose metadata is lost)."""
        _kairos.bag_reindex(os.fspath(storage_options.uri))
