"""rclpy's ``LoggingService``: ``~/get_logger_levels`` and ``~/set_logger_levels`` on a
node made with ``enable_logger_service=True``, so another process (``ros2 service call``)
reads and changes this process's logger levels. A level that is not a severity is a
refused result with the reason, not an exception in the executor.
"""

from kairos import logging
from kairos.rcl_interfaces.msg import LoggerLevel, SetLoggerLevelsResult
from kairos.rcl_interfaces.srv import GetLoggerLevels, SetLoggerLevels


class LoggingService:
    def __init__(self, node):
        name = node.get_name()
        node.create_service(GetLoggerLevels, f"{name}/get_logger_levels", self._get_levels)
        node.create_service(SetLoggerLevels, f"{name}/set_logger_levels", self._set_levels)

    @staticmethod
    def _get_levels(request, response):
        response.levels = [LoggerLevel(name=name, level=int(logging.get_logger_level(name)))
                           for name in request.names]
        return response

    @staticmethod
    def _set_levels(request, response):
        for level in request.levels:
            try:
                logging.set_logger_level(level.name, level.level, detailed_error=True)
                result = SetLoggerLevelsResult(successful=True)
            except ValueError:
                result = SetLoggerLevelsResult(
                    successful=False, reason="Failed reason: Invalid logger level.")
            response.results.append(result)
        return response
