"""tf2_ros's ``StaticTransformBroadcaster``: sends transforms valid at every time on
``/tf_static`` (transient local, so listeners that start later get them).

Every message carries every frame this broadcaster ever sent (the newest transform of
each child frame), as tf2_ros's does: transient local keeps only the last message, so a
late listener still gets them all.
"""

from kairos.qos import DurabilityPolicy, HistoryPolicy, QoSProfile

__all__ = ["StaticTransformBroadcaster"]


class StaticTransformBroadcaster:
    def __init__(self, node, qos=None):
        from kairos.tf2_msgs.msg import TFMessage

        if qos is None:
            qos = QoSProfile(depth=1, history=HistoryPolicy.KEEP_LAST,
                             durability=DurabilityPolicy.TRANSIENT_LOCAL)
        elif isinstance(qos, int):
            qos = QoSProfile(depth=qos, history=HistoryPolicy.KEEP_LAST,
                             durability=DurabilityPolicy.TRANSIENT_LOCAL)
        self._message = TFMessage
        self._frames = {}
        self.pub_tf = node.create_publisher(TFMessage, "/tf_static", qos)

    def sendTransform(self, transform):  # noqa: N802 (tf2_ros's name)
        """Adds one ``TransformStamped`` or a list of them (replacing what was sent for the
        same child frames) and sends every frame."""
        transforms = list(transform) if isinstance(transform, (list, tuple)) else [transform]
        for t in transforms:
            self._frames[t.child_frame_id] = t
        self.pub_tf.publish(self._message(transforms=list(self._frames.values())))
