"""tf2_ros's ``TransformListener``: fills a buffer from ``/tf`` and ``/tf_static``.

Its subscriptions are in a reentrant group of their own (so a callback of the node's
default group may wait for a transform on a multi-threaded executor) and are registered
with the buffer, which is how a blocking lookup that they could never answer raises
``kairos.WouldDeadlock`` at once. With ``spin_thread=True`` they are on a node of the
listener's own, spun by an executor on a thread of its own: lookups may then block in any
callback of any executor. Every transform is stored with the authority
``default_authority``; one the buffer refuses is logged as a warning of the node, with the
reason, never dropped silently.
"""

import threading

from kairos.callback_groups import ReentrantCallbackGroup
from kairos.qos import DurabilityPolicy, HistoryPolicy, QoSProfile

__all__ = ["TransformListener", "DEFAULT_TF_TOPIC", "DEFAULT_STATIC_TF_TOPIC"]

DEFAULT_TF_TOPIC = "/tf"
DEFAULT_STATIC_TF_TOPIC = "/tf_static"
_AUTHORITY = "default_authority"
_listeners = 0


def _profile(qos, durability):
    if qos is None:
        return QoSProfile(depth=100, history=HistoryPolicy.KEEP_LAST, durability=durability)
    if isinstance(qos, int):
        return QoSProfile(depth=qos, history=HistoryPolicy.KEEP_LAST, durability=durability)
    return qos


def _listener_node(node):
    """A node of the listener's own beside ``node`` (same namespace and time source)."""
    global _listeners
    from kairos.node import Node
    from kairos.parameter import Parameter

    _listeners += 1
    sim = node.has_parameter("use_sim_time") and node.get_parameter("use_sim_time").value
    return Node(f"_transform_listener_{_listeners}", namespace=node.get_namespace(),
                use_global_arguments=False, enable_rosout=False,
                start_parameter_services=False,
                parameter_overrides=[Parameter("use_sim_time", value=bool(sim))])


class TransformListener:
    def __init__(self, buffer, node, *, spin_thread=False, qos=None, static_qos=None,
                 tf_topic=DEFAULT_TF_TOPIC, tf_static_topic=DEFAULT_STATIC_TF_TOPIC):
        from kairos.tf2_msgs.msg import TFMessage

        self.buffer = buffer
        self.node = node
        self._own_node = None
        self.executor = None
        if spin_thread:
            self._own_node = _listener_node(node)
        subscriber = self._own_node or node
        self.group = ReentrantCallbackGroup()
        self.tf_sub = subscriber.create_subscription(
            TFMessage, tf_topic, self.callback, _profile(qos, DurabilityPolicy.VOLATILE),
            callback_group=self.group)
        self.tf_static_sub = subscriber.create_subscription(
            TFMessage, tf_static_topic, self.static_callback,
            _profile(static_qos, DurabilityPolicy.TRANSIENT_LOCAL), callback_group=self.group)
        self._registered = buffer, buffer._core.add_listener([self.tf_sub, self.tf_static_sub])
        if spin_thread:
            from kairos.executors import SingleThreadedExecutor

            self.executor = SingleThreadedExecutor()
            self.executor.add_node(self._own_node)
            self.dedicated_listener_thread = threading.Thread(
                target=self.executor.spin, name="tf2_listener", daemon=True)
            self.dedicated_listener_thread.start()

    def __del__(self):
        if getattr(self, "executor", None) is not None:
            self.executor.shutdown()
            self.dedicated_listener_thread.join()
            self.executor = None
        self.unregister()

    def unregister(self):
        """Ends both subscriptions."""
        registered = getattr(self, "_registered", None)
        if registered is not None:
            buffer, key = registered
            buffer._core.remove_listener(key)
            self._registered = None
        subscriber = getattr(self, "_own_node", None) or getattr(self, "node", None)
        for name in ("tf_sub", "tf_static_sub"):
            subscription = getattr(self, name, None)
            if subscription is not None and subscriber is not None:
                subscriber.destroy_subscription(subscription)
                setattr(self, name, None)

    def callback(self, data):
        self._store(data.transforms, False)

    def static_callback(self, data):
        self._store(data.transforms, True)

    def _store(self, transforms, is_static):
        store = getattr(self.buffer, "_set_transforms", None)
        if store is not None:
            refused = store(transforms, _AUTHORITY, is_static)
        else:  # a buffer of the program's own: its set_transform methods
            refused = []
            add = self.buffer.set_transform_static if is_static else self.buffer.set_transform
            for transform in transforms:
                try:
                    add(transform, _AUTHORITY)
                except Exception as error:  # noqa: BLE001 (reported, as tf2_ros logs it)
                    refused.append(str(error))
        for why in refused:
            topic = "/tf_static" if is_static else "/tf"
            self.node.get_logger().warning(f"a transform from {topic} was not stored: {why}")
