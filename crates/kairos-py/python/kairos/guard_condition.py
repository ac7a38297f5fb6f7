"""rclpy's ``rclpy.guard_condition``: the class of what ``Node.create_guard_condition``
returns (``trigger()`` runs its callback once on the executor)."""

from kairos._kairos import GuardCondition  # noqa: F401
