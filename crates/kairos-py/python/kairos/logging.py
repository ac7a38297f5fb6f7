"""rclpy's loggers: a node's (``node.get_logger()``) and named ones
(``rclpy.logging.get_logger('name')``).

A node's logger writes a line to the console in rcutils' format, an
``rcl_interfaces/msg/Log`` to ``/rosout`` and ``kairos:log`` to the trace; a named logger
no node owns writes the console and the trace.

Levels are rcutils': a level belongs to a logger's name (every logger object of that name
follows it) and a logger with none takes its nearest dotted ancestor's, else the default
(``_root_logger``'s, ``--log-level``). They live in kairos's Rust logging, so a level set
here also applies to the same-named loggers of Rust code in the process.

Each logging call returns whether it logged. ``once``, ``skip_first`` and
``throttle_duration_sec`` (with ``throttle_time_source_type``, a clock; system time by
default) keep their state per logger object and call site, as rclpy's do; they are
evaluated throttle, then skip_first, then once, and the first that says no ends the call.
The options of one call site may not change between calls (``ValueError``).
"""

import enum
import os
import pathlib
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


_OPTIONS = ("name", "once", "skip_first", "throttle_duration_sec",
            "throttle_time_source_type")

# ``_root_logger.set_level(UNSET)``: the default logs everything (kairos stores DEBUG) and
# reads back as UNSET, as in rcutils.
_root_unset = False


class _CallSite:
    """The state of one call site's filters."""

    def __init__(self, severity, options):
        self.severity = severity
        self.options = options
        self.first_seen = False  # skip_first
        self.logged_once = False  # once
        self.last_ns = 0  # throttle: the time of the last line let through

    def admit(self, options):
        duration = options.get("throttle_duration_sec")
        if duration:
            clock = options.get("throttle_time_source_type")
            if clock is None:
                clock = _system_clock()
            now = clock.now().nanoseconds
            if now - self.last_ns < duration * 1e9:
                return False
            self.last_ns = now
        if options.get("skip_first"):
            if not self.first_seen:
                self.first_seen = True
                return False
        if options.get("once"):
            if self.logged_once:
                return False
            self.logged_once = True
        return True


_SYSTEM_CLOCK = None


def _system_clock():
    global _SYSTEM_CLOCK
    if _SYSTEM_CLOCK is None:
        from kairos.clock import Clock, ClockType

        _SYSTEM_CLOCK = Clock(clock_type=ClockType.SYSTEM_TIME)
    return _SYSTEM_CLOCK


class Logger:
    """rclpy's logger shape: ``logger.info('...')`` is a line of a kairos logger,
    ``[INFO] [<time>] [<name>]: ...`` on the console (rcutils' format); ``core`` is the
    node that owns it (None for a named logger)."""

    def __init__(self, core, name, child=""):
        self._core = core
        self.name = name
        self._child = child
        self._call_sites = {}

    # -- levels ------------------------------------------------------------------

    def set_level(self, level):
        """Sets the level of every logger of this name (UNSET: inherit again)."""
        set_logger_level(self.name, level)

    def get_effective_level(self):
        return get_logger_effective_level(self.name)

    def is_enabled_for(self, severity):
        severity = LoggingSeverity(severity)
        return severity != LoggingSeverity.UNSET and severity >= self.get_effective_level()

    def get_child(self, name):
        if not name:
            raise ValueError("Child logger name must not be empty.")
        child = f"{self._child}.{name}" if self._child else name
        return Logger(self._core, f"{self.name}.{name}" if self.name else name, child)

    # -- lines -------------------------------------------------------------------

    def log(self, message, severity, **kwargs):
        """Logs ``message`` at ``severity``; True if it was logged."""
        unknown = [key for key in kwargs if key not in _OPTIONS]
        if unknown:
            raise TypeError(f"parameter '{unknown[0]}' is not one of the recognized logging "
                            f"options {list(_OPTIONS)}")
        if ("throttle_time_source_type" in kwargs
                and "throttle_duration_sec" not in kwargs):
            raise TypeError("required parameter 'throttle_duration_sec' not specified but "
                            "is required for the throttle filter")
        severity = LoggingSeverity(severity)
        frame = sys._getframe(1)
        if frame.f_code.co_filename == __file__:  # debug(), info(), ...: their caller
            frame = frame.f_back
        key = (frame.f_code.co_filename, frame.f_lineno, frame.f_code.co_name)
        site = self._call_sites.get(key)
        if site is None:
            site = self._call_sites[key] = _CallSite(severity, dict(kwargs))
        else:
            if site.options.get("name") != kwargs.get("name"):
                raise ValueError("Logger name cannot be changed between calls.")
            if site.severity != severity:
                raise ValueError("Logger severity cannot be changed between calls.")
            if site.options != kwargs:
                raise ValueError("Logging parameters cannot be changed between calls.")
        name = kwargs.get("name") or self.name
        if not _enabled(name, severity):
            return False
        if not site.admit(kwargs):
            return False
        file, line = frame.f_code.co_filename, frame.f_lineno
        if self._core is not None and "name" not in kwargs:
            self._core.log(int(severity), str(message), self._child, file, line)
        else:
            _kairos.log(int(severity), name, str(message), file, line)
        return True

    def debug(self, message, **kwargs):
        return self.log(message, LoggingSeverity.DEBUG, **kwargs)

    def info(self, message, **kwargs):
        return self.log(message, LoggingSeverity.INFO, **kwargs)

    def warning(self, message, **kwargs):
        return self.log(message, LoggingSeverity.WARN, **kwargs)

    warn = warning

    def error(self, message, **kwargs):
        return self.log(message, LoggingSeverity.ERROR, **kwargs)

    def fatal(self, message, **kwargs):
        return self.log(message, LoggingSeverity.FATAL, **kwargs)


def _enabled(name, severity):
    return severity != LoggingSeverity.UNSET and severity >= get_logger_effective_level(name)


def get_logger(name):
    """The logger ``name``, which no node owns."""
    if not name:
        raise ValueError("Logger name must not be empty.")
    return Logger(None, name)


def set_logger_level(name, level, detailed_error=False):
    """Sets the level of the loggers ``name`` (``""``: the default; UNSET: inherit)."""
    global _root_unset
    level = LoggingSeverity(level)
    if not name:
        _root_unset = level == LoggingSeverity.UNSET
    _kairos.set_logger_level(name, int(level))


def get_logger_level(name):
    """The level set for ``name`` itself (UNSET when none)."""
    if not name and _root_unset:
        return LoggingSeverity.UNSET
    return LoggingSeverity(_kairos.logger_level(name))


def get_logger_effective_level(name):
    """The level ``name``'s lines are filtered at."""
    if _root_unset and (not name or _kairos.logger_effective_level(name)
                        == _kairos.logger_effective_level("")):
        return LoggingSeverity.UNSET
    return LoggingSeverity(_kairos.logger_effective_level(name))


def get_logging_severity_from_string(log_severity):
    """The severity named ``log_severity`` (any case); ``RuntimeError`` for another."""
    try:
        return LoggingSeverity[str(log_severity).upper()]
    except KeyError:
        raise RuntimeError(f"unknown logging severity '{log_severity}': one of "
                           f"{', '.join(s.name for s in LoggingSeverity)}") from None


def get_logging_directory():
    """Where ROS 2 tools put log files: ``$ROS_LOG_DIR``, else ``$ROS_HOME/log``, else
    ``~/.ros/log``."""
    if os.environ.get("ROS_LOG_DIR"):
        return pathlib.Path(os.path.expanduser(os.environ["ROS_LOG_DIR"]))
    if os.environ.get("ROS_HOME"):
        return pathlib.Path(os.path.expanduser(os.environ["ROS_HOME"])) / "log"
    return pathlib.Path(os.path.expanduser("~")) / ".ros" / "log"


def clear_config():
    """Forgets every logger level; the default goes back to INFO."""
    global _root_unset
    _root_unset = False
    _kairos.clear_logger_levels()


def initialize():
    """Logging needs no set-up in kairos; kept for rclpy's programs."""


def shutdown():
    """Logging needs no tear-down in kairos; kept for rclpy's programs."""


#: The logger of the default level (rcutils' unnamed root logger).
_root_logger = Logger(None, "")
