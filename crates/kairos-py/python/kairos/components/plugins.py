"""Finding a component: a package's registered plugins in ament's index, loaded from the
Python files they name."""

import importlib.util
import os
import sys

from kairos.ament_index_python.packages import PackageNotFoundError, get_package_prefix
from kairos.ament_index_python.resources import get_resource, has_resource

#: ament's resource type for components (rclcpp_components' CMake writes it; so does
#: ``kairos pkg install --component``).
RESOURCE_TYPE = "rclcpp_components"


class ComponentError(Exception):
    """A component that cannot be loaded, with what to do about it."""


def registered(package):
    """The plugins a package registers: ``{plugin: absolute path}``."""
    try:
        prefix = get_package_prefix(package)
    except PackageNotFoundError as e:
        raise ComponentError(
            f"package '{package}' is not installed (searched AMENT_PREFIX_PATH: "
            f"{os.environ.get('AMENT_PREFIX_PATH', '')})") from e
    if has_resource(RESOURCE_TYPE, package) is None:
        return {}
    content, prefix = get_resource(RESOURCE_TYPE, package)
    plugins = {}
    for line in content.splitlines():
        name, sep, path = line.strip().partition(";")
        if name and sep:
            plugins[name] = path if os.path.isabs(path) else os.path.join(prefix, path)
    return plugins


def _attribute(plugin):
    return plugin.replace("::", ".").rsplit(".", 1)[-1]


def find(package, plugin):
    """The callable that makes the plugin's node."""
    plugins = registered(package)
    if plugin not in plugins:
        known = ", ".join(sorted(plugins)) or "none"
        raise ComponentError(
            f"package '{package}' registers no component '{plugin}' (it registers: "
            f"{known}); register one with `kairos pkg install {package} --component "
            f"{plugin}=FILE.py`")
    path = plugins[plugin]
    if not path.endswith(".py"):
        raise ComponentError(
            f"component '{plugin}' of package '{package}' is not a Python file ({path}): "
            f"a kairos container composes Python node classes; run a C++ component in "
            f"ROS 2's component_container, or start it as a node of its own")
    if not os.path.isfile(path):
        raise ComponentError(
            f"component '{plugin}' of package '{package}' names {path}, which does not "
            f"exist: reinstall the package")
    module_name = "_kairos_component_" + "".join(
        c if c.isalnum() else "_" for c in f"{package}_{path}")
    # Imported once per process, as a component library is loaded once: every node of
    # one plugin shares its module.
    module = sys.modules.get(module_name)
    if module is None:
        module = _import(module_name, path, package, plugin)
    attribute = _attribute(plugin)
    made = getattr(module, attribute, None)
    if not callable(made):
        raise ComponentError(
            f"component '{plugin}' of package '{package}': {path} has no callable "
            f"'{attribute}' (the plugin name's last part)")
    return made


def _import(module_name, path, package, plugin):
    spec = importlib.util.spec_from_file_location(module_name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    try:
        spec.loader.exec_module(module)
    except Exception as e:
        del sys.modules[module_name]
        raise ComponentError(
            f"component '{plugin}' of package '{package}': importing {path} failed: "
            f"{type(e).__name__}: {e}") from e
    return module
