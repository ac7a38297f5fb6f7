"""rosbag2_py's ``LocalMessageDefinitionSource`` (``rosbag2_py._message_definitions``):
the complete definition of a message or service type, as a recorder stores it: from the
``.msg``/``.srv``/``.idl`` files of the installed packages (``AMENT_PREFIX_PATH``, read as
rosbag2 reads them), else from the types kairos ships."""

from kairos import _kairos
from kairos.rosbag2_py._storage import MessageDefinition


class LocalMessageDefinitionSource:
    def get_full_text(self, topic_type):
        """The definition of ``topic_type`` (``pkg/msg/Type``, ``pkg/Type`` or
        ``pkg/srv/Type``); a type neither installed nor shipped gives encoding ``unknown``
        and an empty text, as rosbag2."""
        encoding, text = _kairos.bag_definition(topic_type)
        return MessageDefinition(topic_type, encoding, text, "")
