"""The launch's own logging (``launch.logging`` as ROS 2 has it): loggers that print to
the screen and write the launch's log file, and the loggers of a process's output.

What a launch file may count on:

- :func:`get_logger` gives a logger that writes both to the screen
  (``[INFO] [name]: message``) and to ``launch.log`` in the launch's log folder, with
  its time. The verbosity is one, :attr:`LaunchConfig.level`, for all of them.
- The log folder is chosen when first needed: ``$ROS_LOG_DIR``, else ``$ROS_HOME/log``,
  else ``~/.ros/log`` (``~`` expanded; an empty variable counts as unset), and in it a
  folder of its own named after the time, host and process, with ``latest`` linked to
  it. Under ``kairos launch``, it is the launcher's own log folder (where ``output:
  log`` files go), so one launch writes to one place. Setting ``log_dir`` to a path
  that is not a folder is a ``ValueError``, never a log written elsewhere.
- Formats are ``logging.Formatter`` formats (``{`` style unless another style is
  given), or the aliases ``default`` and ``default_with_timestamp``; giving a style
  with an alias is a ``ValueError``. ``OVERRIDE_LAUNCH_SCREEN_FORMAT`` and
  ``OVERRIDE_LAUNCH_LOG_FORMAT`` override them (``\\n`` and the like decoded).
- :func:`get_output_loggers` gives a process's ``stdout`` and ``stderr`` loggers for an
  ``output`` configuration (``screen``, ``log``, ``both``, ``own_log``, ``full``, or a
  mapping of ``stdout``/``stderr``/``both`` to ``screen``/``log``/``own_log``); an
  unknown word is a ``ValueError`` naming it. Their lines are printed as the process
  wrote them.
- :func:`reset` forgets every handler and level set so far (a test's fresh start)."""

import datetime
import locale
import logging
import os
import socket
import sys
import warnings

from kairos.launch.logging import handlers

__all__ = ["get_logger", "get_output_loggers", "handlers", "launch_config", "reset"]

#: The log folder of the launcher driving this process's launch file, if one is.
_launcher_log_dir = None

_SCREEN_ALIASES = {
    "default": "[{levelname}] [{name}]: {msg}",
    "default_with_timestamp": "{created:.7f} [{levelname}] [{name}]: {msg}",
}
_LOG_ALIASES = {"default": "{created:.7f} [{levelname}] [{name}]: {msg}"}

_SOURCES = ("stdout", "stderr", "both")
_DESTINATIONS = ("screen", "log", "own_log")
#: The ``output`` words, as destinations per source.
_OUTPUT_ALIASES = {
    "screen": {"both": {"screen"}},
    "log": {"both": {"log"}, "stderr": {"screen"}},
    "both": {"both": {"log", "screen"}},
    "own_log": {"both": {"own_log"}, "stdout": {"own_log"}, "stderr": {"own_log"}},
    "full": {"both": {"screen", "log", "own_log"}, "stdout": {"own_log"},
             "stderr": {"own_log"}},
}


def _get_logging_directory():
    """Where ROS 2 keeps logs: ``$ROS_LOG_DIR``, ``$ROS_HOME/log`` or ``~/.ros/log``."""
    folder = os.environ.get("ROS_LOG_DIR")
    if not folder:
        folder = os.path.join(os.environ.get("ROS_HOME") or os.path.join("~", ".ros"), "log")
    return os.path.normpath(os.path.expanduser(folder))


def _make_unique_log_dir(*, base_path):
    """Makes and returns a new folder under ``base_path`` named after the time, the host
    and this process."""
    while True:
        stamp = datetime.datetime.now().strftime("%Y-%m-%d-%H-%M-%S-%f")
        folder = os.path.join(base_path, f"{stamp}-{socket.gethostname()}-{os.getpid()}")
        try:
            os.makedirs(folder)
            return folder
        except FileExistsError:
            continue


def _renew_latest_log_dir(*, log_dir):
    """Points ``latest`` beside ``log_dir`` at it; False when ``latest`` is there and is
    not a link (it is left alone)."""
    latest = os.path.join(os.path.dirname(log_dir), "latest")
    if os.path.lexists(latest):
        if not os.path.islink(latest):
            return False
        os.unlink(latest)
    os.symlink(log_dir, latest, target_is_directory=True)
    return True


class _Screen:
    """The standard output as it is when written to (a test's capture, a redirection),
    with what its encoding cannot hold replaced rather than raising."""

    def write(self, text):
        out = sys.stdout
        encoding = getattr(out, "encoding", None) or locale.getpreferredencoding(False)
        out.write(text.encode(encoding, "replace").decode(encoding, "replace"))

    def flush(self):
        sys.stdout.flush()


def _formatter(fmt, style, aliases, what):
    override = os.environ.get(f"OVERRIDE_LAUNCH_{what.upper()}_FORMAT")
    if override:
        fmt, style = override.encode("latin1").decode("unicode_escape"), "{"
    if fmt is None:
        return None
    if fmt in aliases:
        if style is not None:
            raise ValueError(
                f'Cannot set a custom format style for the "{fmt}" {what} format: an alias '
                "has its own; give the format itself to choose a style")
        fmt = aliases[fmt]
    return logging.Formatter(fmt, style=style or "{")


class LaunchConfig:
    """The launch's logging settings: verbosity, log folder, formats, and the handlers
    made from them (one screen handler, one per log file)."""

    def __init__(self):
        self.reset()

    def reset(self):
        """Back to the defaults; the handlers made so far are forgotten."""
        self._log_dir = None
        self._log_handler_factory = None
        self.file_handlers = {}
        self.screen_handler = None
        self.screen_formatter = None
        self.file_formatter = None
        logging.root.setLevel(logging.INFO)
        self.set_screen_format("default")
        self.set_log_format("default")

    @property
    def level(self):
        """The verbosity of every launch logger."""
        return logging.root.getEffectiveLevel()

    @level.setter
    def level(self, new_level):
        logging.root.setLevel(new_level)

    @property
    def log_dir(self):
        """The launch's log folder, made the first time it is asked for."""
        if self._log_dir is None:
            if _launcher_log_dir is not None:
                os.makedirs(_launcher_log_dir, exist_ok=True)
                self._log_dir = _launcher_log_dir
            else:
                self._log_dir = _make_unique_log_dir(base_path=_get_logging_directory())
                try:
                    linked = _renew_latest_log_dir(log_dir=self._log_dir)
                except OSError as e:
                    warnings.warn(f"Cannot link 'latest' to the log folder: {e}")
                else:
                    if not linked:
                        warnings.warn(
                            "Cannot link 'latest' to the log folder: it is there and is "
                            "not a link")
        return self._log_dir

    @log_dir.setter
    def log_dir(self, new_log_dir):
        if new_log_dir is not None:
            if not os.path.isdir(new_log_dir):
                raise ValueError(f"{new_log_dir} is not a directory")
            if self.file_handlers:
                warnings.warn(
                    f"Log files under {self._log_dir} are open already; they stay there")
        self._log_dir = new_log_dir

    @property
    def log_handler_factory(self):
        """Makes a log file's handler: ``factory(path, encoding=...)``, a handler with
        per-logger formatting (see :mod:`launch.logging.handlers`)."""
        if self._log_handler_factory is None:
            self._log_handler_factory = handlers.WatchedFileHandler
        return self._log_handler_factory

    @log_handler_factory.setter
    def log_handler_factory(self, factory):
        self._log_handler_factory = factory

    def set_screen_format(self, screen_format, *, screen_style=None):
        """The screen's format (``default``, ``default_with_timestamp`` or a format)."""
        self.screen_formatter = _formatter(screen_format, screen_style, _SCREEN_ALIASES,
                                           "screen")
        if self.screen_handler is not None:
            self.screen_handler.setFormatter(self.screen_formatter)

    def set_log_format(self, log_format, *, log_style=None):
        """The log files' format (``default`` or a format)."""
        self.file_formatter = _formatter(log_format, log_style, _LOG_ALIASES, "log")
        for handler in self.file_handlers.values():
            handler.setFormatter(self.file_formatter)

    def get_screen_handler(self):
        """The one handler that prints to the screen."""
        if self.screen_handler is None:
            self.screen_handler = handlers.StreamHandler(_Screen())
            self.screen_handler.setFormatter(self.screen_formatter)
        return self.screen_handler

    def get_log_file_path(self, file_name="launch.log"):
        """The path of the log file ``file_name`` in the log folder."""
        return os.path.join(self.log_dir, file_name)

    def get_log_file_handler(self, file_name="launch.log"):
        """The handler of the log file ``file_name``, made once."""
        if file_name not in self.file_handlers:
            handler = self.log_handler_factory(self.get_log_file_path(file_name),
                                               encoding="utf-8")
            handler.setFormatter(self.file_formatter)
            self.file_handlers[file_name] = handler
        return self.file_handlers[file_name]


launch_config = LaunchConfig()


def use_launcher_log_dir(folder):
    """Makes ``folder``, the launcher's log folder, the launch's log folder from now on,
    through :func:`reset` too (a launch file's driver calls it once, first)."""
    global _launcher_log_dir
    _launcher_log_dir = os.path.abspath(folder)
    launch_config.log_dir = None


def log_launch_config(*, logger=logging.root):
    """Logs where the log files are and the verbosity, for the user."""
    if launch_config.file_handlers:
        logger.info(f"All log files can be found below {launch_config.log_dir}")
    logger.info("Default logging verbosity is set to "
                f"{logging.getLevelName(logging.root.getEffectiveLevel())}")


def _add_once(logger, handler):
    if handler not in logger.handlers:
        logger.addHandler(handler)


def get_logger(name=None):
    """The logger ``name``, printing to the screen and writing the launch's log file."""
    logger = logging.getLogger(name)
    _add_once(logger, launch_config.get_screen_handler())
    _add_once(logger, launch_config.get_log_file_handler())
    return logger


def _normalize_output_configuration(config):
    """``config`` as destinations per source (``stdout``, ``stderr``, ``both``)."""
    normalized = {source: set() for source in _SOURCES}
    if isinstance(config, str):
        if config not in _OUTPUT_ALIASES:
            raise ValueError(
                f"{config} is not a valid standard output config i.e. one of "
                + ", ".join(f'"{alias}"' for alias in _OUTPUT_ALIASES))
        normalized.update({k: set(v) for k, v in _OUTPUT_ALIASES[config].items()})
        return normalized
    if not isinstance(config, dict):
        raise ValueError(f"{config} is not a valid output configuration: give one of "
                         + ", ".join(_OUTPUT_ALIASES) + " or a mapping of sources to "
                         "destinations")
    for source, destinations in config.items():
        if source not in _SOURCES:
            raise ValueError(f'{source} is not a valid output source i.e. "stdout", '
                             '"stderr" or "both"')
        destinations = {destinations} if isinstance(destinations, str) else set(destinations)
        for destination in destinations:
            if destination not in _DESTINATIONS:
                raise ValueError(f'{destination} is not a valid output destination i.e. '
                                 '"screen", "log" or "own_log"')
        normalized[source] = destinations
    return normalized


def get_output_loggers(process_name, output_config):
    """The ``(stdout, stderr)`` loggers of the process ``process_name`` for
    ``output_config``: on the screen its lines as written; in the launch's log file with
    their time; ``own_log`` in ``NAME-stdout.log`` / ``NAME-stderr.log`` (a source's own)
    or ``NAME.log`` (both together)."""
    config = _normalize_output_configuration(output_config)
    for source in ("stdout", "stderr"):
        logger = logging.getLogger(f"{process_name}-{source}")
        wanted = config["both"] | config[source]
        if "screen" in wanted:
            screen = launch_config.get_screen_handler()
            if screen not in logger.handlers:
                screen.setFormatterFor(logger, logging.Formatter("{msg}", style="{"))
                logger.addHandler(screen)
        if "log" in wanted:
            main = launch_config.get_log_file_handler()
            if main not in logger.handlers:
                main.setFormatterFor(logger, logging.Formatter("{created:.7f} {msg}",
                                                               style="{"))
                logger.addHandler(main)
        if "own_log" in config[source]:
            own = launch_config.get_log_file_handler(f"{process_name}-{source}.log")
            own.setFormatter(logging.Formatter(fmt=None))
            _add_once(logger, own)
        if "own_log" in config["both"]:
            combined = launch_config.get_log_file_handler(f"{process_name}.log")
            combined.setFormatter(logging.Formatter("{msg}", style="{"))
            _add_once(logger, combined)
    return (logging.getLogger(f"{process_name}-stdout"),
            logging.getLogger(f"{process_name}-stderr"))


class LaunchLogger(logging.getLoggerClass()):
    """A logger that does not pass its records to its parents (each has the handlers it
    needs), and that :func:`reset` can find again."""

    all_loggers = []

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.propagate = False
        LaunchLogger.all_loggers.append(self)


def reset():
    """Forgets every launch logger's level and handlers, and the configuration."""
    for logger in LaunchLogger.all_loggers:
        logger.setLevel(logging.NOTSET)
        logger.handlers.clear()
    launch_config.reset()
    logging.setLoggerClass(LaunchLogger)


reset()
