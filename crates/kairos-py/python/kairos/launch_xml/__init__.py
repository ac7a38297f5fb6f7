"""ROS 2's ``launch_xml`` on kairos: XML launch files as frontend entities.

Attributes are text, read as the type asked for (``'true'`` as a bool, ``'5'`` as a
float); ``attr-sep=","`` splits ``attr`` into a list. Children of a given tag read as an
attribute (``get_attr('env', data_type=List[Entity])``). An attribute or child tag that
the action's ``parse`` did not read is a ``ValueError`` naming it.
"""

from kairos._layout import stands_for_package

# ROS 2's launch_xml.entity and launch_xml.parser are this module (see kairos._layout).
stands_for_package(__name__, ("entity", "parser"))

import xml.etree.ElementTree as ET  # noqa: E402

from kairos.launch import frontend  # noqa: E402
from kairos.launch._type_utils import get_typed_value  # noqa: E402
from kairos.launch.frontend.type_utils import check_is_list_entity  # noqa: E402


class Entity(frontend.Entity):
    """One XML element."""

    def __init__(self, xml_element=None, *, parent=None):
        self._element = xml_element
        self._parent = parent
        self._read_attributes = set()
        self._read_children = set()

    @property
    def type_name(self):
        return self._element.tag

    @property
    def parent(self):
        return self._parent

    @property
    def children(self):
        self._read_children = {child.tag for child in self._element}
        return [Entity(child, parent=self) for child in self._element]

    def assert_entity_completely_parsed(self):
        tags = {child.tag for child in self._element} - self._read_children
        if tags:
            raise ValueError(
                f"Unexpected nested tag(s) found in `{self._element.tag}`: {tags}")
        attributes = set(self._element.attrib) - self._read_attributes
        if attributes:
            raise ValueError(
                f"Unexpected attribute(s) found in `{self._element.tag}`: {attributes}")

    def get_attr(self, name, *, data_type=str, optional=False, can_be_str=True):
        missing = AttributeError(
            f"Attribute '{name}' of type '{data_type}' not found in Entity '{self.type_name}'")
        if check_is_list_entity(data_type):
            found = [child for child in self._element if child.tag == name]
            if not found:
                if optional:
                    return None
                raise missing
            self._read_children.add(name)
            return [Entity(child, parent=self) for child in found]
        if name not in self._element.attrib:
            if optional:
                return None
            raise missing
        value = self._element.attrib[name]
        separator = self._element.attrib.get(name + "-sep")
        if separator is not None:
            self._read_attributes.add(name + "-sep")
            value = value.split(separator)
        self._read_attributes.add(name)
        try:
            return get_typed_value(value, data_type, can_be_str=can_be_str)
        except ValueError:
            raise TypeError(
                f"Attribute '{name}' of Entity '{self.type_name}' expected to be of type "
                f"'{data_type}'. '{value}' can not be converted to one of those types"
            ) from None


class Parser(frontend.Parser):
    """The XML frontend."""

    @classmethod
    def load(cls, file):
        return Entity(ET.parse(file).getroot()), cls()

    @classmethod
    def get_file_extensions(cls):
        return {"launch.xml", "xml", "launch"}
