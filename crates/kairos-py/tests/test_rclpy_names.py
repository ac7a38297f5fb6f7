"""rclpy's public modules under ``kairos.run``: each a program imports is kairos's
(CONFORMANCE.md lists those kairos still lacks)."""

from kairos import run


def test_rclpy_modules_programs_import_are_kairos_s():
    run.install()
    import rclpy.client
    import rclpy.guard_condition
    import rclpy.impl.logging_severity
    import rclpy.service
    from kairos.logging import LoggingSeverity
    assert rclpy.impl.logging_severity.LoggingSeverity is LoggingSeverity
    assert rclpy.impl.logging_severity.LoggingSeverity.WARN == 30
    assert rclpy.client.Client.__name__ == "Client"
    assert rclpy.service.Service.__name__ == "Service"
    assert rclpy.guard_condition.GuardCondition.__name__ == "GuardCondition"
