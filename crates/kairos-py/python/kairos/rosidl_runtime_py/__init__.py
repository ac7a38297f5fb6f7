"""ROS 2's ``rosidl_runtime_py`` on kairos, for the types kairos ships: interface classes
by name (``utilities``), messages as dicts, YAML and CSV (``convert``) and filled from
dicts (``set_message``), as ROS 2's tools and bag-reading scripts use them."""

from kairos.rosidl_runtime_py.convert import (  # noqa: F401
    message_to_csv,
    message_to_ordereddict,
    message_to_yaml,
)
from kairos.rosidl_runtime_py.set_message import set_message_fields  # noqa: F401
