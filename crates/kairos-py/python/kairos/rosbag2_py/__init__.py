"""rosbag2's Python API (``rosbag2_py``) on kairos: ``import rosbag2_py`` under
``kairos.run`` is this package.

Bags are read and written by kairos-bag (the Rust crate behind ``kairos bag``), so a
Python script and the CLI read the same bags the same way: rosbag2's MCAP and sqlite3
storages, every metadata version, zstd compression per message or per file. Playing and
recording run ``kairos bag play`` and ``kairos bag record``. What differs from rosbag2
is listed in CONFORMANCE.md; an option kairos does not have raises ``RuntimeError``
naming it."""

from kairos._kairos import BagError  # noqa: F401
from kairos.rosbag2_py._compression_options import (  # noqa: F401
    CompressionMode,
    CompressionOptions,
    compression_mode_from_string,
    compression_mode_to_string,
)
from kairos.rosbag2_py._info import Info  # noqa: F401
from kairos.rosbag2_py._message_definitions import LocalMessageDefinitionSource  # noqa: F401
from kairos.rosbag2_py._reader import (  # noqa: F401
    SequentialCompressionReader,
    SequentialReader,
    get_registered_readers,
)
from kairos.rosbag2_py._reindexer import Reindexer  # noqa: F401
from kairos.rosbag2_py._storage import (  # noqa: F401
    BagMetadata,
    ConverterOptions,
    FileInformation,
    MessageDefinition,
    MetadataIo,
    ReadOrder,
    ReadOrderSortBy,
    StorageFilter,
    StorageOptions,
    TopicInformation,
    TopicMetadata,
    get_default_storage_id,
)
from kairos.rosbag2_py._transport import (  # noqa: F401
    Player,
    PlayOptions,
    Recorder,
    RecordOptions,
    bag_rewrite,
)
from kairos.rosbag2_py._writer import (  # noqa: F401
    SequentialCompressionWriter,
    SequentialWriter,
    get_registered_compressors,
    get_registered_serializers,
    get_registered_writers,
)
