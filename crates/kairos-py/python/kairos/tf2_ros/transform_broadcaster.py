"""tf2_ros's ``TransformBroadcaster``: sends transforms on ``/tf`` (keep last 100)."""

from kairos.qos import DurabilityPolicy, HistoryPolicy, QoSProfile

__all__ = ["TransformBroadcaster"]


class TransformBroadcaster:
    def __init__(self, node, qos=None):
        from kairos.tf2_msgs.msg import TFMessage

        if qos is None:
            qos = QoSProfile(depth=100, history=HistoryPolicy.KEEP_LAST,
                             durability=DurabilityPolicy.VOLATILE)
        elif isinstance(qos, int):
            qos = QoSProfile(depth=qos, history=HistoryPolicy.KEEP_LAST)
        self._message = TFMessage
        self.pub_tf = node.create_publisher(TFMessage, "/tf", qos)

    def sendTransform(self, transform):  # noqa: N802 (tf2_ros's name)
        """Sends one ``TransformStamped`` or a list of them, in one message."""
        transforms = list(transform) if isinstance(transform, (list, tuple)) else [transform]
        self.pub_tf.publish(self._message(transforms=transforms))
