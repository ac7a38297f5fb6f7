"""rclpy's ``rclpy.client``: the class of what ``Node.create_client`` returns (kairos's
native client: ``call``, ``call_async``, ``wait_for_service``, ``service_is_ready``)."""

from kairos._kairos import Client  # noqa: F401
