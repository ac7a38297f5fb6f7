"""ROS 2's ``launch`` Python API on kairos: ``kairos launch FILE.launch.py`` reads a
Python launch file with it (``import launch`` there is this package, as ``rclpy`` is
kairos under ``kairos.run``).

The entities, substitutions, conditions and event handlers are ROS 2's; what differs is
underneath: the processes are started, watched and stopped by the kairos launcher, with
its bounded stop and stop report, and the file's code (event handlers, opaque functions,
timers) runs in a driver process that can ask for things but never delay the stop. See
``kairos.launch.driver``."""

from kairos.launch import actions, conditions, event_handlers, events, substitutions  # noqa
from kairos.launch import launch_description_sources, logging  # noqa: F401
from kairos.launch._core import (  # noqa: F401
    Action, Condition, EventHandler, InvalidLaunchFileError, LaunchContext,
    LaunchDescriptionEntity, Substitution, SubstitutionFailure)
from kairos.launch.events import Event  # noqa: F401
from kairos.launch.launch_description import LaunchDescription  # noqa: F401
from kairos.launch.launch_description_sources import LaunchDescriptionSource  # noqa: F401
from kairos.launch.launch_service import LaunchService  # noqa: F401
from kairos.launch.some_entities_type import (  # noqa: F401
    SomeEntitiesType, SomeEntitiesType_types_tuple)
from kairos.launch.some_substitutions_type import (  # noqa: F401
    SomeSubstitutionsType, SomeSubstitutionsType_types_tuple)
