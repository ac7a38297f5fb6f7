"""rclpy's ``signals``, as far as kairos has them: which signals the runtime handles.

kairos handles SIGINT and SIGTERM together (its handler shuts every executor down and
prints their reports, see ``kairos.init``) from the first node on, unless
``KAIROS_SIGNAL_HANDLER=off`` was set before it. Installing or removing the handlers from
Python (rclpy's ``install_signal_handlers`` / ``uninstall_signal_handlers``) is not
there yet.
"""

import enum
import os


class SignalHandlerOptions(enum.IntEnum):
    NO = 0
    SIGINT = 1
    SIGTERM = 2
    ALL = 3


def _handler_enabled():
    value = os.environ.get("KAIROS_SIGNAL_HANDLER", "").strip().lower()
    return value not in ("0", "off", "false")


def get_current_signal_handlers_options():
    """ALL while kairos is initialized and its handler is on; NO otherwise (after
    shutdown, Ctrl-C is Python's KeyboardInterrupt again)."""
    from kairos.utilities import get_default_context

    if _handler_enabled() and get_default_context().ok():
        return SignalHandlerOptions.ALL
    return SignalHandlerOptions.NO
