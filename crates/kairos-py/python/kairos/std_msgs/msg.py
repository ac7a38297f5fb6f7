"""``std_msgs/msg`` (as ``from std_msgs.msg import String`` in rclpy)."""

from kairos._message import Message


class String(Message):
    __slots__ = ("data",)
    _type = "std_msgs/msg/String"
    _defaults = {"data": ""}
