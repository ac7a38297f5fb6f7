"""ROS 2's ``launch.frontend`` on kairos: the API that reads XML and YAML launch files
into launch actions, for Python code and tests that use it (``Parser.load``,
``parse_description``, ``expose_action``, ``expose_substitution``).

``kairos launch FILE.xml`` does not go through here: the launcher reads XML and YAML
itself (``kairos_launch::description``), with file-and-line errors and nothing started
on a bad file. This package is what a Python program gets when it asks ROS 2's frontend
for actions: the same entities, as objects it can inspect, change and run with
``LaunchService``.
"""

from kairos.launch.frontend import type_utils
from kairos.launch.frontend.entity import Entity
from kairos.launch.frontend.expose import expose_action, expose_substitution
from kairos.launch.frontend.parser import InvalidFrontendLaunchFileError, Parser

__all__ = ["Entity", "InvalidFrontendLaunchFileError", "Parser", "expose_action",
           "expose_substitution", "type_utils"]
