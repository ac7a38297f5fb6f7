"""Events about processes: started, exited, their output; signals to send them."""

from kairos._layout import stands_for_package

# ROS 2's launch.events.process.<module> paths are this module (see kairos._layout).
stands_for_package(__name__, (
    "process_exited", "process_io", "process_matchers", "process_started", "process_stderr",
    "process_stdin", "process_stdout", "process_targeted_event", "running_process_event",
    "shutdown_process", "signal_process"))

import signal as _signal


class ProcessEvent:
    def __init__(self, *, action, name, cmd, cwd=None, env=None, pid):
        self.action = action
        self.name = name
        self.cmd = cmd
        self.cwd = cwd
        self.env = env
        self.pid = pid

    @property
    def execute_process_action(self):
        return self.action

    @property
    def process_name(self):
        """The process's name in the launch (``talker-1``), as ROS 2 numbers them."""
        return self.name


#: ROS 2's name for what every process event is.
RunningProcessEvent = ProcessEvent


class ProcessStarted(ProcessEvent):
    name_ = "launch.events.process.ProcessStarted"


class ProcessExited(ProcessEvent):
    def __init__(self, *, returncode, **kwargs):
        super().__init__(**kwargs)
        self.returncode = returncode


class ProcessIO(ProcessEvent):
    def __init__(self, *, text, fd, **kwargs):
        super().__init__(**kwargs)
        self.text = text
        self.fd = fd

    @property
    def from_stdout(self):
        return self.fd == 1

    @property
    def from_stderr(self):
        return self.fd == 2


class ProcessStdout(ProcessIO):
    def __init__(self, **kwargs):
        super().__init__(fd=1, **kwargs)


class ProcessStderr(ProcessIO):
    def __init__(self, **kwargs):
        super().__init__(fd=2, **kwargs)


class SignalProcess:
    """Send a signal to the processes `process_matcher` selects."""

    def __init__(self, *, signal_number, process_matcher):
        if isinstance(signal_number, str):
            signal_number = getattr(_signal, signal_number)
        self.signal_number = int(signal_number)
        self.process_matcher = process_matcher


class ShutdownProcess(SignalProcess):
    """Stop the processes `process_matcher` selects (SIGINT; the launcher escalates on
    its stop)."""

    def __init__(self, *, process_matcher):
        super().__init__(signal_number=_signal.SIGINT, process_matcher=process_matcher)


def matches_action(target_action):
    return lambda action: action is target_action


def matches_name(name):
    return lambda action: getattr(action, "process_name", None) == name


def matches_executable(executable):
    return lambda action: executable in (getattr(action, "command_line", None) or "")
