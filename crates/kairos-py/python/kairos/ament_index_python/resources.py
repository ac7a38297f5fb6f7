"""The resource index of ament: one folder per resource type under each prefix's
``share/ament_index/resource_index``, one file per resource."""

import os

RESOURCE_INDEX_SUBFOLDER = "share/ament_index/resource_index"


def get_search_paths():
    """The prefixes of ``AMENT_PREFIX_PATH``, in order; an error when it is unset."""
    value = os.environ.get("AMENT_PREFIX_PATH")
    if not value:
        raise EnvironmentError(
            "AMENT_PREFIX_PATH is not set: source a workspace's setup "
            "(`. install/setup.sh`) or set it to the prefixes that hold packages")
    return [p for p in value.split(os.pathsep) if p and os.path.exists(p)]


def _folder(prefix, resource_type):
    return os.path.join(prefix, RESOURCE_INDEX_SUBFOLDER, resource_type)


def get_resources(resource_type):
    """Every resource of a type, by name, with the prefix that has it (the first)."""
    found = {}
    for prefix in get_search_paths():
        folder = _folder(prefix, resource_type)
        if not os.path.isdir(folder):
            continue
        for name in os.listdir(folder):
            if not name.startswith(".") and os.path.isfile(os.path.join(folder, name)):
                found.setdefault(name, prefix)
    return found


def get_resource_types():
    types = set()
    for prefix in get_search_paths():
        folder = os.path.join(prefix, RESOURCE_INDEX_SUBFOLDER)
        if os.path.isdir(folder):
            types.update(os.listdir(folder))
    return types


def has_resource(resource_type, resource_name):
    """The prefix that has the resource, or None."""
    for prefix in get_search_paths():
        if os.path.isfile(os.path.join(_folder(prefix, resource_type), resource_name)):
            return prefix
    return None


def get_resource(resource_type, resource_name):
    """The resource's content and the prefix that has it; LookupError when none has."""
    prefix = has_resource(resource_type, resource_name)
    if prefix is None:
        raise LookupError(
            f"could not find the resource '{resource_name}' of type '{resource_type}' "
            f"in AMENT_PREFIX_PATH ({os.environ.get('AMENT_PREFIX_PATH', '')})")
    with open(os.path.join(_folder(prefix, resource_type), resource_name)) as f:
        return f.read(), prefix
