"""ROS 2's ``launch_yaml`` on kairos: YAML launch files as frontend entities.

Values keep the type YAML gave them and are checked against the type asked for (a
``TypeError`` when they differ); children are a list of one-key mappings (``- executable:
{...}``), or a mapping's ``children`` list. A key the action's ``parse`` did not read is
a ``ValueError`` naming it.
"""

from kairos._layout import stands_for_package

# ROS 2's launch_yaml.entity and launch_yaml.parser are this module (see kairos._layout).
stands_for_package(__name__, ("entity", "parser"))

import os  # noqa: E402

import yaml  # noqa: E402

from kairos.launch import frontend  # noqa: E402
from kairos.launch._type_utils import is_instance_of  # noqa: E402
from kairos.launch.frontend.type_utils import check_is_list_entity  # noqa: E402


class Entity(frontend.Entity):
    """One YAML entity: its mapping (or list of children) and type name."""

    def __init__(self, element, type_name=None, *, parent=None):
        self._element = element
        self._type_name = type_name
        self._parent = parent
        self._read_keys = set()
        self._children_read = False

    @property
    def type_name(self):
        return self._type_name

    @property
    def parent(self):
        return self._parent

    @property
    def children(self):
        self._children_read = True
        if isinstance(self._element, dict):
            if "children" not in self._element:
                raise ValueError(
                    f"Expected entity `{self._type_name}` to have children entities. That "
                    "can be a list of subentities or a mapping with a `children` list")
            self._read_keys.add("children")
            children = self._element["children"]
        elif isinstance(self._element, list):
            children = self._element
        else:
            raise TypeError(f"Expected a mapping or a list, got {type(self._element).__name__}:"
                            f"\n---\n{self._element}\n---")
        entities = []
        for child in children:
            if not isinstance(child, dict) or len(child) != 1:
                raise RuntimeError(
                    "Subentities must be a dictionary with only one key, which is the "
                    f"entity type (got {child!r})")
            (type_name, body), = child.items()
            entities.append(Entity(body, type_name, parent=self))
        return entities

    def assert_entity_completely_parsed(self):
        if isinstance(self._element, list):
            if not self._children_read:
                raise ValueError(
                    f"Unexpected nested entity(ies) found in `{self._type_name}`: "
                    f"{self._element}")
            return
        keys = set(self._element or {}) - self._read_keys
        if keys:
            raise ValueError(f"Unexpected key(s) found in `{self._type_name}`: {keys}")

    def get_attr(self, name, *, data_type=str, optional=False, can_be_str=True):
        if not isinstance(self._element, dict) or name not in self._element:
            if optional:
                return None
            raise AttributeError(
                f"Can not find attribute '{name}' in Entity '{self.type_name}'")
        self._read_keys.add(name)
        data = self._element[name]
        if check_is_list_entity(data_type):
            if isinstance(data, list) and data and isinstance(data[0], dict):
                return [Entity(child, name, parent=self) for child in data]
            raise TypeError(f"Attribute '{name}' of Entity '{self.type_name}' expected to be "
                            "a list of dictionaries.")
        if not is_instance_of(data, data_type, can_be_str=can_be_str):
            raise TypeError(f"Attribute '{name}' of Entity '{self.type_name}' expected to be of "
                            f"type '{data_type}', got '{type(data)}'")
        return data


class Parser(frontend.Parser):
    """The YAML frontend."""

    @classmethod
    def load(cls, file):
        if isinstance(file, (str, bytes, os.PathLike)):
            with open(file, "r", encoding="utf-8") as f:
                tree = yaml.safe_load(f)
        else:
            tree = yaml.safe_load(file)
        if not isinstance(tree, dict) or len(tree) != 1:
            raise RuntimeError("Expected only one root")
        (type_name, body), = tree.items()
        return Entity(body, type_name), cls()

    @classmethod
    def get_file_extensions(cls):
        return {"launch.yaml", "launch.yml", "yaml", "yml", "launch"}
