"""``launch_ros.substitutions``: packages found in ament's index (``AMENT_PREFIX_PATH``)."""

from kairos._layout import stands_for_package

# ROS 2's launch_ros.substitutions.<module> paths are this module (see kairos._layout).
stands_for_package(__name__, (
    "executable_in_package", "find_package", "parameter"))

import os

from kairos.ament_index_python.packages import (
    PackageNotFoundError, get_package_prefix, get_package_share_directory)
from kairos.launch._core import (
    Substitution, SubstitutionFailure, normalize_to_list_of_substitutions,
    perform_substitutions)


class FindPackagePrefix(Substitution):
    def __init__(self, package):
        self.package = normalize_to_list_of_substitutions(package)

    def find(self, name):
        return get_package_prefix(name)

    def perform(self, context):
        name = perform_substitutions(context, self.package)
        try:
            return self.find(name)
        except (PackageNotFoundError, EnvironmentError, ValueError) as e:
            raise SubstitutionFailure(str(e).strip('"'))


class FindPackageShare(FindPackagePrefix):
    def find(self, name):
        return get_package_share_directory(name, print_warning=False)


class FindPackage(FindPackagePrefix):
    pass


class ExecutableInPackage(Substitution):
    def __init__(self, executable, package):
        self.executable = normalize_to_list_of_substitutions(executable)
        self.package = normalize_to_list_of_substitutions(package)

    def perform(self, context):
        return executable_in_package(perform_substitutions(context, self.executable),
                                     perform_substitutions(context, self.package))


def executable_in_package(executable, package):
    try:
        prefix = get_package_prefix(package)
    except (PackageNotFoundError, EnvironmentError, ValueError) as e:
        raise SubstitutionFailure(str(e).strip('"'))
    lib = os.path.join(prefix, "lib", package)
    path = os.path.join(lib, executable)
    if not (os.path.isfile(path) and os.access(path, os.X_OK)):
        have = sorted(n for n in (os.listdir(lib) if os.path.isdir(lib) else [])
                      if os.access(os.path.join(lib, n), os.X_OK))
        raise SubstitutionFailure(
            f"package '{package}' has no executable '{executable}'"
            + (f" (it has: {', '.join(have)})" if have else f" (it has none in {lib})"))
    return path



class Parameter(Substitution):
    """The value of a parameter set for the nodes in scope (``SetParameter``), as text;
    else ``default``; else a ``SubstitutionFailure`` naming it."""

    def __init__(self, name, *, default=None):
        self.name = normalize_to_list_of_substitutions(name)
        if default is None:
            self.default = None
        else:
            items = default if isinstance(default, (list, tuple)) else [default]
            self.default = normalize_to_list_of_substitutions(
                [d if isinstance(d, (str, Substitution)) else str(d) for d in items])

    def perform(self, context):
        name = perform_substitutions(context, self.name)
        for entry in context.launch_configurations.get("global_params") or []:
            if isinstance(entry, tuple) and entry[0] == name:
                return str(entry[1])
        if self.default is None:
            raise SubstitutionFailure(f"parameter '{name}' not found (set it with "
                                      "SetParameter, or give a default)")
        return perform_substitutions(context, self.default)

    def describe(self):
        return f"Parameter(name={' + '.join(s.describe() for s in self.name)})"

def _expose_to_frontends():
    """``$(find-pkg-prefix PKG)``, ``$(find-pkg-share PKG)``, ``$(exec-in-pkg EXE PKG)``
    and ``$(param NAME [DEFAULT])`` in XML and YAML launch files and parameter files."""
    from kairos.launch.frontend.expose import expose_substitution_of as one

    one("find-pkg-prefix", lambda package: (FindPackagePrefix, {"package": package}), 1)
    one("find-pkg-share", lambda package: (FindPackageShare, {"package": package}), 1)
    one("exec-in-pkg", lambda executable, package: (
        ExecutableInPackage, {"executable": executable, "package": package}), 2)
    one("param", lambda name, default=None: (Parameter, dict(
        name=name, **({} if default is None else {"default": default}))), 1, 2)


_expose_to_frontends()
