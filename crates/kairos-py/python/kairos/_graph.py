"""rclpy's graph API of ``Node``: what the node sees of the ROS graph (this process's
nodes and, over Zenoh, every other process's), and ``wait_for_node``.

Lists come as rclpy gives them: ``(name, [types])`` sorted by name; a query about a node
the graph does not have raises :class:`NodeNameNonExistentError`; names are expanded
against the node (``chatter``, ``~/state``), and a name no topic can have raises
``ValueError`` ("... is invalid: ...")."""

from kairos import _kairos
from kairos.topic_endpoint_info import TopicEndpointInfo, TopicEndpointTypeEnum
from kairos.type_hash import TypeHash


class NodeNameNonExistentError(RuntimeError):
    """A graph query about a node the graph does not have."""


def _names_and_types(entities):
    found = {}
    for entity in entities:
        found.setdefault(entity[3], set()).add(entity[4])
    return [(name, sorted(types)) for name, types in sorted(found.items())]


def _qos(qos):
    from kairos.duration import Duration
    from kairos.qos import (DurabilityPolicy, HistoryPolicy, LivelinessPolicy, QoSProfile,
                            ReliabilityPolicy)
    if qos is None:
        return QoSProfile(depth=0)
    history, depth, reliability, durability, deadline, lifespan, liveliness, lease = qos
    return QoSProfile(depth=depth, history=HistoryPolicy(history),
                      reliability=ReliabilityPolicy(reliability),
                      durability=DurabilityPolicy(durability),
                      deadline=Duration(nanoseconds=deadline),
                      lifespan=Duration(nanoseconds=lifespan),
                      liveliness=LivelinessPolicy(liveliness),
                      liveliness_lease_duration=Duration(nanoseconds=lease))


def _type_hash(text):
    """rclpy's TypeHash of ``RIHS01_<64 hex digits>``; an unset one for a type that stays
    in its process (no hash)."""
    if text.startswith("RIHS01_") and len(text) == 71:
        return TypeHash(1, bytes.fromhex(text[7:]))
    return TypeHash()


class GraphMixin:
    """The graph queries of :class:`kairos.node.Node`."""

    def _graph(self, kind=None):
        entities = _kairos.graph_entities(self._core)
        return [e for e in entities if kind is None or e[0] == kind]

    # -- nodes ------------------------------------------------------------------------

    def get_node_names_and_namespaces(self):
        return sorted({(e[1], e[2]) for e in self._graph("node")}, key=lambda n: (n[1], n[0]))

    def get_node_names_and_namespaces_with_enclaves(self):
        return [(name, ns, "/") for name, ns in self.get_node_names_and_namespaces()]

    def get_node_names(self):
        return [name for name, _ in self.get_node_names_and_namespaces()]

    def get_fully_qualified_node_names(self):
        return [ns + ("" if ns.endswith("/") else "/") + name
                for name, ns in self.get_node_names_and_namespaces()]

    def wait_for_node(self, fully_qualified_node_name, timeout):
        """True once the node is in the graph; False after ``timeout`` seconds (negative:
        no timeout) or at shutdown. Wakes on each graph change, not by polling."""
        return _kairos.wait_for_node(self._core, fully_qualified_node_name, timeout)

    # -- topics and services ----------------------------------------------------------

    def get_topic_names_and_types(self, no_demangle=False):
        return _names_and_types(e for e in self._graph() if e[0] in ("publisher", "subscription"))

    def get_service_names_and_types(self):
        return _names_and_types(e for e in self._graph() if e[0] in ("service", "client"))

    def _by_node(self, kind, node_name, node_namespace):
        entities = self._graph()
        if not any(e[0] == "node" and e[1] == node_name and e[2] == node_namespace
                   for e in entities):
            raise NodeNameNonExistentError(
                f"cannot get information of node '{node_name}' in namespace "
                f"'{node_namespace}': no such node in the graph")
        return _names_and_types(e for e in entities if e[0] == kind
                                and e[1] == node_name and e[2] == node_namespace)

    def get_publisher_names_and_types_by_node(self, node_name, node_namespace, no_demangle=False):
        return self._by_node("publisher", node_name, node_namespace)

    def get_subscriber_names_and_types_by_node(self, node_name, node_namespace,
                                               no_demangle=False):
        return self._by_node("subscription", node_name, node_namespace)

    def get_service_names_and_types_by_node(self, node_name, node_namespace):
        return self._by_node("service", node_name, node_namespace)

    def get_client_names_and_types_by_node(self, node_name, node_namespace):
        return self._by_node("client", node_name, node_namespace)

    def _count(self, kind, name, is_service):
        name = _kairos.expand_name(self._core, name, is_service)
        return sum(1 for e in self._graph(kind) if e[3] == name)

    def count_publishers(self, topic_name):
        return self._count("publisher", topic_name, False)

    def count_subscribers(self, topic_name):
        return self._count("subscription", topic_name, False)

    def count_clients(self, service_name):
        return self._count("client", service_name, True)

    def count_services(self, service_name):
        return self._count("service", service_name, True)

    def _info_by_topic(self, kind, topic_name, no_mangle):
        if not isinstance(topic_name, str):
            raise TypeError(f"a topic name is a str, got {type(topic_name).__name__}")
        if not no_mangle:
            topic_name = _kairos.expand_name(self._core, topic_name, False)
            topic_name = _kairos.expand_name(self._core, topic_name, False, True)
        endpoint_type = (TopicEndpointTypeEnum.PUBLISHER if kind == "publisher"
                         else TopicEndpointTypeEnum.SUBSCRIPTION)
        return [TopicEndpointInfo(node_name=e[1], node_namespace=e[2], topic_type=e[4],
                                  topic_type_hash=_type_hash(e[7]),
                                  endpoint_type=endpoint_type, qos_profile=_qos(e[5]))
                for e in self._graph(kind) if e[3] == topic_name]

    def get_publishers_info_by_topic(self, topic_name, no_mangle=False):
        return self._info_by_topic("publisher", topic_name, no_mangle)

    def get_subscriptions_info_by_topic(self, topic_name, no_mangle=False):
        return self._info_by_topic("subscription", topic_name, no_mangle)
