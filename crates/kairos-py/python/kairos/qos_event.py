"""rclpy's older name of ``rclpy.event_handler``."""

from kairos.event_handler import *  # noqa: F401,F403
from kairos.event_handler import (  # noqa: F401
    IncompatibleTypeInfo, PublisherEventCallbacks, QoSLivelinessChangedInfo, QoSLivelinessLostInfo,
    QoSMessageLostInfo, QoSOfferedDeadlineMissedInfo, QoSOfferedIncompatibleQoSInfo,
    QoSPublisherEventType, QoSPublisherMatchedInfo, QoSRequestedDeadlineMissedInfo, QoSRequestedIncompatibleQoSInfo,
    QoSSubscriptionEventType, QoSSubscriptionMatchedInfo, SubscriptionEventCallbacks, UnsupportedEventTypeError)
