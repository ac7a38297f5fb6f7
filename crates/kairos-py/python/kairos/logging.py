"""rclpy's loggers: a node's (``node.get_logger()``) and named ones
(``rclpy.logging.get_logger('name')``).

A node's logger writes a line to the console in rcutils' format, an
``rcl_interfaces/msg/Log`` to ``/rosout`` and ``kairos:log`` to the trace; a named logger
no node owns writes the console and the trace. Levels come from ``--ros-args
--log-level``.
"""

import enum
import sys

from kairos import _kairos


class LoggingSeverity(enum.IntEnum):
    """rcutils' severities."""
    UNSET = 0
    DEBUG = 10
    INFO = 20
    WARN = 30
    ERROR = 40
    FATAL = 50


class Logger:
    """rclpy's logger shape: ``logger.info('...')`` is a line of a kairos logger,
    ``[INFO] [<time>] [<name>]: ...`` on the console (rcutils' format); ``core`` is the
    node that owns it (None for a named logger)."""

    _SEVERITY = {"DEBUG": 10, "INFO": 20, "WARN": 30, "ERROR": 40, "FATAL": 50}

    def __init__(self, core, name, child=""):
        self._core = core
        self.name = name
        self._child = child

    def _log(self, level, message):
        frame = sys._getframe(2)
        file, line = frame.f_code.co_filename, frame.f_lineno
        if self._core is None:
            _kairos.log(self._SEVERITY[level], self.name, str(message), file, line)
        else:
            self._core.log(self._SEVERITY[level], str(message), self._child, file, line)
        return True

    def debug(self, message, **_):
        return self._log("DEBUG", message)

    def info(self, message, **_):
        return self._log("INFO", message)

    def warning(self, message, **_):
        return self._log("WARN", message)

    warn = warning

    def error(self, message, **_):
        return self._log("ERROR", message)

    def fatal(self, message, **_):
        return self._log("FATAL", message)

    def get_child(self, name):
        child = f"{self._child}.{name}" if self._child else name
        return Logger(self._core, f"{self.name}.{name}", child)


def get_logger(name):
    """The logger ``name``, which no node owns."""
    return Logger(None, name)
