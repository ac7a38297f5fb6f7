"""QoS events from Python, with rclpy's shapes: ``event_callbacks=`` on a publisher or
subscription, rclpy's info objects, the deadline, lifespan and liveliness of a
``QoSProfile`` honoured (not only announced), and ``Publisher.assert_liveliness``."""

import queue
import time

from kairos.duration import Duration
from kairos.event_handler import (
    PublisherEventCallbacks, QoSLivelinessChangedInfo, QoSLivelinessLostInfo,
    QoSOfferedDeadlineMissedInfo, QoSPublisherMatchedInfo, QoSRequestedDeadlineMissedInfo,
    QoSRequestedIncompatibleQoSInfo, QoSSubscriptionMatchedInfo, SubscriptionEventCallbacks)
from kairos.executors import SingleThreadedExecutor
from kairos.node import Node
from kairos.qos import (LivelinessPolicy, QoSPolicyKind, QoSProfile, ReliabilityPolicy)
from kairos.std_msgs.msg import String

from conftest import LIMIT, spin_in_thread


def test_a_deadline_missed_reaches_both_sides_with_rclpy_info_objects(session):
    node = Node("qe_deadline")
    profile = QoSProfile(depth=5, deadline=Duration(nanoseconds=40_000_000))
    requested, offered = queue.Queue(), queue.Queue()
    publisher = node.create_publisher(
        String, "/qe/scan", profile,
        event_callbacks=PublisherEventCallbacks(deadline=offered.put))
    node.create_subscription(
        String, "/qe/scan", lambda m: None, profile,
        event_callbacks=SubscriptionEventCallbacks(deadline=requested.put))
    executor = SingleThreadedExecutor()
    executor.add_node(node)
    spin_in_thread(executor)
    published = time.monotonic()
    publisher.publish(String(data="once"))
    sub_info = requested.get(timeout=LIMIT)
    pub_info = offered.get(timeout=LIMIT)
    assert time.monotonic() - published >= 0.040, "never before the deadline"
    assert isinstance(sub_info, QoSRequestedDeadlineMissedInfo)
    assert isinstance(pub_info, QoSOfferedDeadlineMissedInfo)
    assert sub_info.total_count >= 1 and sub_info.total_count_change >= 1
    assert executor.shutdown(timeout_sec=30.0)


def test_a_quiet_manual_publisher_loses_its_liveliness_and_asserting_brings_it_back(session):
    node = Node("qe_liveliness")
    manual = QoSProfile(depth=5, liveliness=LivelinessPolicy.MANUAL_BY_TOPIC,
                        liveliness_lease_duration=Duration(nanoseconds=40_000_000))
    changed, lost = queue.Queue(), queue.Queue()
    node.create_subscription(
        String, "/qe/heartbeat", lambda m: None, manual,
        event_callbacks=SubscriptionEventCallbacks(liveliness=changed.put))
    publisher = node.create_publisher(
        String, "/qe/heartbeat", manual,
        event_callbacks=PublisherEventCallbacks(liveliness=lost.put))
    executor = SingleThreadedExecutor()
    executor.add_node(node)
    spin_in_thread(executor)
    info = lost.get(timeout=LIMIT)
    assert isinstance(info, QoSLivelinessLostInfo)
    assert (info.total_count, info.total_count_change) == (1, 1)

    def next_change(until):
        deadline = time.monotonic() + LIMIT
        while time.monotonic() < deadline:
            info = changed.get(timeout=LIMIT)
            assert isinstance(info, QoSLivelinessChangedInfo)
            if until(info):
                return info
        raise AssertionError("no such liveliness change")

    gone = next_change(lambda i: i.not_alive_count == 1)
    assert gone.alive_count == 0
    publisher.assert_liveliness()
    back = next_change(lambda i: i.alive_count == 1)
    assert (back.not_alive_count, back.alive_count_change, back.not_alive_count_change) \
        == (0, 1, -1)
    assert executor.shutdown(timeout_sec=30.0)


def test_incompatible_qos_names_the_policy_and_messages_still_flow(session):
    node = Node("qe_incompatible")
    found, heard = queue.Queue(), queue.Queue()
    node.create_subscription(
        String, "/qe/sensor", heard.put, 10,
        event_callbacks=SubscriptionEventCallbacks(incompatible_qos=found.put))
    best_effort = QoSProfile(depth=5, reliability=ReliabilityPolicy.BEST_EFFORT)
    publisher = node.create_publisher(String, "/qe/sensor", best_effort)
    executor = SingleThreadedExecutor()
    executor.add_node(node)
    spin_in_thread(executor)
    info = found.get(timeout=LIMIT)
    assert isinstance(info, QoSRequestedIncompatibleQoSInfo)
    assert info.last_policy_kind == QoSPolicyKind.RELIABILITY
    assert (info.total_count, info.total_count_change) == (1, 1)
    publisher.publish(String(data="still delivered"))
    assert heard.get(timeout=LIMIT).data == "still delivered"
    assert executor.shutdown(timeout_sec=30.0)


def test_a_message_past_its_lifespan_is_not_delivered(session):
    node = Node("qe_lifespan")
    heard = queue.Queue()
    node.create_subscription(String, "/qe/stale", heard.put, 10)
    short = QoSProfile(depth=10, lifespan=Duration(nanoseconds=10_000_000))
    long = QoSProfile(depth=10, lifespan=Duration(seconds=60))
    node.create_publisher(String, "/qe/stale", short).publish(String(data="stale"))
    node.create_publisher(String, "/qe/stale", long).publish(String(data="fresh"))
    time.sleep(0.05)  # past the short lifespan, before anything spins
    executor = SingleThreadedExecutor()
    executor.add_node(node)
    spin_in_thread(executor)
    assert heard.get(timeout=LIMIT).data == "fresh"
    assert executor.shutdown(timeout_sec=30.0)
    assert heard.empty()


def test_matched_events_count_the_compatible_peers_as_they_come_and_go(session):
    node = Node("qe_matched")
    sub_matched, pub_matched = queue.Queue(), queue.Queue()
    node.create_subscription(
        String, "/qe/matched", lambda m: None, 5,
        event_callbacks=SubscriptionEventCallbacks(matched=sub_matched.put))
    executor = SingleThreadedExecutor()
    executor.add_node(node)
    spin_in_thread(executor)
    publisher = node.create_publisher(
        String, "/qe/matched", 5,
        event_callbacks=PublisherEventCallbacks(matched=pub_matched.put))
    info = sub_matched.get(timeout=LIMIT)
    assert isinstance(info, QoSSubscriptionMatchedInfo)
    assert (info.total_count, info.total_count_change) == (1, 1)
    assert (info.current_count, info.current_count_change) == (1, 1)
    mine = pub_matched.get(timeout=LIMIT)
    assert isinstance(mine, QoSPublisherMatchedInfo) and mine.current_count == 1
    node.destroy_publisher(publisher)
    info = sub_matched.get(timeout=LIMIT)
    assert (info.total_count, info.total_count_change) == (1, 0)
    assert (info.current_count, info.current_count_change) == (0, -1)
    assert executor.shutdown(timeout_sec=30.0)


def test_event_handles_polled_through_a_wait_set_see_what_the_callbacks_see(session):
    """rcl's event handles (``_rclpy.EventHandle``) and wait sets, as rclpy's C binding has
    them: nothing ready while nothing happened, an incompatible subscription makes the
    publisher's handle ready with the policy, and a take leaves nothing more to take."""
    from kairos.event_handler import (
        QoSOfferedIncompatibleQoSInfo, QoSPublisherEventType, publisher_event_handlers)
    from kairos.impl.implementation_singleton import rclpy_implementation as _rclpy

    node = Node("qe_handles")
    publisher = node.create_publisher(
        String, "/qe/handles", QoSProfile(depth=5, reliability=ReliabilityPolicy.BEST_EFFORT))
    # rclpy's defaults: incompatible QoS and incompatible type.
    assert [h.event_type for h in publisher.event_handlers] == [
        QoSPublisherEventType.RCL_PUBLISHER_OFFERED_INCOMPATIBLE_QOS,
        QoSPublisherEventType.RCL_PUBLISHER_INCOMPATIBLE_TYPE]
    assert publisher_event_handlers(
        PublisherEventCallbacks(use_default_callbacks=False), publisher) == []
    with publisher.handle:
        incompatible = _rclpy.EventHandle(
            publisher.handle, QoSPublisherEventType.RCL_PUBLISHER_OFFERED_INCOMPATIBLE_QOS)
        matched = _rclpy.EventHandle(
            publisher.handle, QoSPublisherEventType.RCL_PUBLISHER_MATCHED)
    wait_set = _rclpy.WaitSet(0, 0, 0, 0, 0, 2, None)
    first, second = wait_set.add_event(incompatible), wait_set.add_event(matched)
    wait_set.wait(0)
    assert not wait_set.is_ready("event", first) and not wait_set.is_ready("event", second)
    empty = incompatible.take_event()
    assert isinstance(empty, QoSOfferedIncompatibleQoSInfo)
    assert (empty.total_count, empty.last_policy_kind) == (0, QoSPolicyKind.INVALID)

    node.create_subscription(String, "/qe/handles", lambda m: None, 5)  # asks for reliable
    started = time.monotonic()
    wait_set.wait(int(LIMIT * 1e9))
    assert time.monotonic() - started < LIMIT
    assert wait_set.is_ready("event", first)
    info = incompatible.take_event()
    assert (info.total_count, info.total_count_change) == (1, 1)
    assert info.last_policy_kind == QoSPolicyKind.RELIABILITY
    # Incompatible: not matched. Taken: nothing more to take.
    assert not matched.is_ready()
    wait_set.clear_entities()
    wait_set.add_event(incompatible)
    wait_set.wait(0)
    assert not wait_set.is_ready("event", 0)
    again = incompatible.take_event()
    assert (again.total_count, again.total_count_change) == (1, 0)
    incompatible.destroy_when_not_in_use()
