"""ROS 2's ``ament_index_python`` on kairos: installed packages found in ament's index
under each prefix of ``AMENT_PREFIX_PATH`` (a workspace's ``install/`` works as it is),
the same index ``kairos pkg``, ``kairos run`` and ``kairos launch PKG FILE`` read.

A package is installed in a prefix when the prefix has the marker
``share/ament_index/resource_index/packages/NAME``; the first prefix that has it wins."""

from kairos.ament_index_python.packages import (  # noqa: F401
    PackageNotFoundError,
    get_package_prefix,
    get_package_share_directory,
    get_package_share_path,
    get_packages_with_prefixes,
)
from kairos.ament_index_python.resources import (  # noqa: F401
    get_resource,
    get_resource_types,
    get_resources,
    get_search_paths,
    has_resource,
)
