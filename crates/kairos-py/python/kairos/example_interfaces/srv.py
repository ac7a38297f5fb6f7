"""``example_interfaces/srv`` (as ``from example_interfaces.srv import AddTwoInts``)."""

from kairos._message import Message


class AddTwoInts:
    _type = "example_interfaces/srv/AddTwoInts"

    class Request(Message):
        __slots__ = ("a", "b")
        _type = "example_interfaces/srv/AddTwoInts_Request"
        _defaults = {"a": 0, "b": 0}

    class Response(Message):
        __slots__ = ("sum",)
        _type = "example_interfaces/srv/AddTwoInts_Response"
        _defaults = {"sum": 0}
