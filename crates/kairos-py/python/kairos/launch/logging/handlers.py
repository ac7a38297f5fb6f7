"""Every handler class of Python's ``logging`` and ``logging.handlers``, able to format
the records of each logger its own way (``launch.logging.handlers`` as ROS 2 has it).

A process's output shares the screen and the launch's log file with the launch's own
messages: on the screen, the launch's lines read ``[INFO] [launch]: ...`` while a
process's lines are printed as the process wrote them. One handler per destination,
each with a formatter per logger, keeps those lines in the order they were logged.

``launch.logging.handlers.StreamHandler`` is ``logging.StreamHandler`` with
``setFormatterFor(logger, formatter)`` and ``unsetFormatterFor(logger)``; a record
of a logger with no formatter of its own gets the handler's formatter."""

import logging
import logging.handlers


def with_per_logger_formatting(cls):
    """``cls`` (a ``logging.Handler`` class) with a formatter per logger name."""

    class PerLogger(cls):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            self._formatters = {}

        def setFormatterFor(self, logger, formatter):  # noqa: N802 (logging's style)
            """Formats the records of ``logger`` (a logger or its name) with
            ``formatter``."""
            self._formatters[_name_of(logger)] = formatter

        def unsetFormatterFor(self, logger):  # noqa: N802
            """Formats the records of ``logger`` with the handler's formatter again."""
            self._formatters.pop(_name_of(logger), None)

        def format(self, record):
            formatter = self._formatters.get(record.name)
            if formatter is not None:
                return formatter.format(record)
            return super().format(record)

    PerLogger.__name__ = cls.__name__
    PerLogger.__qualname__ = cls.__qualname__
    PerLogger.__doc__ = cls.__doc__
    return PerLogger


def _name_of(logger):
    return logger if isinstance(logger, str) else logger.name


def _handler_classes():
    found = {}
    for module in (logging, logging.handlers):
        for name, value in vars(module).items():
            if (not name.startswith("_") and isinstance(value, type)
                    and issubclass(value, logging.Handler)):
                found[name] = with_per_logger_formatting(value)
    return found


_HANDLERS = _handler_classes()
globals().update(_HANDLERS)

__all__ = ["with_per_logger_formatting", *sorted(_HANDLERS)]
