"""rclpy's ``TopicEndpointInfo``: one publisher or subscription of a topic, as the graph
shows it (``Node.get_publishers_info_by_topic``)."""

import enum

from kairos import qos
from kairos.type_hash import TypeHash


class TopicEndpointTypeEnum(enum.IntEnum):
    INVALID = 0
    PUBLISHER = 1
    SUBSCRIPTION = 2


class TopicEndpointInfo:
    __slots__ = ("node_name", "node_namespace", "topic_type", "topic_type_hash",
                 "endpoint_type", "endpoint_gid", "qos_profile")

    def __init__(self, node_name="", node_namespace="", topic_type="", topic_type_hash=None,
                 endpoint_type=TopicEndpointTypeEnum.INVALID, endpoint_gid=None,
                 qos_profile=None):
        self.node_name = node_name
        self.node_namespace = node_namespace
        self.topic_type = topic_type
        self.endpoint_type = TopicEndpointTypeEnum(endpoint_type)
        self.endpoint_gid = list(endpoint_gid or [])
        self.topic_type_hash = TypeHash() if topic_type_hash is None else topic_type_hash
        if qos_profile is None:
            qos_profile = qos.QoSProfile(
                history=qos.HistoryPolicy.UNKNOWN, depth=0,
                reliability=qos.ReliabilityPolicy.UNKNOWN,
                durability=qos.DurabilityPolicy.UNKNOWN,
                liveliness=qos.LivelinessPolicy.UNKNOWN)
        self.qos_profile = qos_profile

    def __eq__(self, other):
        return isinstance(other, TopicEndpointInfo) and all(
            getattr(self, slot) == getattr(other, slot) for slot in self.__slots__)

    def __str__(self):
        profile = self.qos_profile
        history = profile.history.name
        if profile.history.name == "KEEP_LAST":
            history += f" ({profile.depth})"
        return "\n".join([
            f"Node name: {self.node_name}",
            f"Node namespace: {self.node_namespace}",
            f"Topic type: {self.topic_type}",
            f"Topic type hash: {self.topic_type_hash}",
            f"Endpoint type: {self.endpoint_type.name}",
            f"GID: {'.'.join(f'{b:02x}' for b in self.endpoint_gid)}",
            "QoS profile:",
            f"  Reliability: {profile.reliability.name}",
            f"  History (Depth): {history}",
            f"  Durability: {profile.durability.name}",
            f"  Lifespan: {profile.lifespan}",
            f"  Deadline: {profile.deadline}",
            f"  Liveliness: {profile.liveliness.name}",
            f"  Liveliness lease duration: {profile.liveliness_lease_duration}",
        ])
