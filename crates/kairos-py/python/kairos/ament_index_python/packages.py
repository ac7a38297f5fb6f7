"""Packages in ament's index: where each is installed and its share folder."""

import os
import pathlib

from kairos.ament_index_python.resources import get_resources, get_search_paths, has_resource


class PackageNotFoundError(KeyError):
    """No prefix of ``AMENT_PREFIX_PATH`` has the package."""


def get_packages_with_prefixes():
    return get_resources("packages")


def get_package_prefix(package_name):
    if "/" in package_name or not package_name:
        raise ValueError(f"'{package_name}' is not a package name")
    prefix = has_resource("packages", package_name)
    if prefix is None:
        raise PackageNotFoundError(
            f"package '{package_name}' not found in AMENT_PREFIX_PATH "
            f"({os.pathsep.join(get_search_paths())}); build and install it, or add its "
            "prefix")
    return prefix


def get_package_share_directory(package_name, print_warning=True):
    path = os.path.join(get_package_prefix(package_name), "share", package_name)
    if print_warning and not os.path.exists(path):
        import warnings
        warnings.warn(f"share directory {path} does not exist")
    return path


def get_package_share_path(package_name, print_warning=True):
    return pathlib.Path(get_package_share_directory(package_name, print_warning))
