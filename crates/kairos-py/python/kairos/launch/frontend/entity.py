"""``Entity``: one element of a frontend launch file (an XML element, a YAML mapping),
what each frontend implements and each action's ``parse`` reads."""


class Entity:
    """One element of a frontend file: its type name, parent, children and attributes.

    ``get_attr(name, data_type=str, optional=False, can_be_str=True)`` reads an
    attribute as ``data_type`` (``str``, ``bool``, ``int``, ``float``, ``List[...]`` of
    them, ``List[Entity]`` for the children of that name, ``None`` for YAML-typed text);
    a missing attribute raises ``AttributeError`` unless ``optional``. After an action's
    ``parse``, ``assert_entity_completely_parsed`` raises ``ValueError`` naming anything
    the action did not read, so a misspelt attribute is never silently ignored.
    """

    @property
    def type_name(self):
        raise NotImplementedError()

    @property
    def parent(self):
        raise NotImplementedError()

    @property
    def children(self):
        raise NotImplementedError()

    def get_attr(self, name, *, data_type=str, optional=False, can_be_str=True):
        raise NotImplementedError()

    def assert_entity_completely_parsed(self):
        raise NotImplementedError()
