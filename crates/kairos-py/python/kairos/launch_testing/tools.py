"""``launch_testing.tools``: a process launched from a test, and a proxy to watch it."""

from kairos._layout import stands_for_package

stands_for_package(__name__, ("process",))

import contextlib  # noqa: E402

from kairos.launch.events.process import ProcessExited, ProcessStarted  # noqa: E402


class ProcessProxy:
    """A view of one ``ExecuteProcess`` of the launch: its state, its output, waits."""

    def __init__(self, process_action, proc_info, proc_output, *, output_filter=None):
        from kairos.launch.actions import ExecuteProcess
        from kairos.launch_testing.io_handler import ActiveIoHandler
        from kairos.launch_testing.proc_info_handler import ActiveProcInfoHandler
        for value, kind, name in ((process_action, ExecuteProcess, "process_action"),
                                  (proc_info, ActiveProcInfoHandler, "proc_info"),
                                  (proc_output, ActiveIoHandler, "proc_output")):
            if not isinstance(value, kind):
                raise TypeError(f"'{name}' must be a {kind.__name__}, not "
                                f"{type(value).__name__}")
        if output_filter is not None and not callable(output_filter):
            raise TypeError(f"Expected 'output_filter' to be callable but got "
                            f"'{output_filter!r}'")
        self._process_action = process_action
        self._proc_info = proc_info
        self._proc_output = proc_output
        self._output_filter = output_filter

    @property
    def target_process_action(self):
        return self._process_action

    def _text(self, keep):
        try:
            events = self._proc_output._io_handler[self._process_action]
        except (KeyError, TypeError):
            return ""
        text = "".join(e.text.decode(errors="replace") for e in events if keep(e))
        return self._output_filter(text) if self._output_filter else text

    @property
    def stdout(self):
        return self._text(lambda e: e.from_stdout)

    @property
    def stderr(self):
        return self._text(lambda e: e.from_stderr)

    @property
    def output(self):
        return self._text(lambda e: True)

    def _state(self):
        handler = self._proc_info._proc_info_handler
        if self._process_action not in handler.processes():
            return None
        return handler[self._process_action]

    @property
    def running(self):
        return isinstance(self._state(), ProcessStarted)

    @property
    def terminated(self):
        return isinstance(self._state(), ProcessExited)

    @property
    def exit_code(self):
        return self._proc_info[self._process_action].returncode

    def wait_for_shutdown(self, timeout=None):
        """Whether the process ended within ``timeout`` seconds (``None``: until it does)."""
        with self._proc_info.proc_event:
            return self._proc_info.proc_event.wait_for(lambda: self.terminated,
                                                       timeout=timeout)

    def wait_for_output(self, condition=None, timeout=None):
        """Whether, within ``timeout`` seconds, the process runs and its output satisfies
        ``condition`` (``None``: any, even none yet); true or false, it carries the output."""
        condition = condition or (lambda output: True)
        if not callable(condition):
            raise TypeError(f"Expected 'condition' to be callable but got '{condition!r}'")
        seen = [None]

        def satisfied():
            seen[0] = self.output
            return self.running and condition(seen[0])
        with self._proc_output.io_event:
            result = self._proc_output.io_event.wait_for(satisfied, timeout=timeout)
        return _BoolWithText(bool(result), seen[0])


class _BoolWithText:
    def __init__(self, result, output):
        self._result = result
        self._output = output

    def __bool__(self):
        return self._result

    def __repr__(self):
        return f"<BoolWithText({self._result}): {self._output!r}>"


@contextlib.contextmanager
def launch_process(launch_service, process_action, proc_info, proc_output, **kwargs):
    """Starts ``process_action`` in the running launch and yields its
    :class:`ProcessProxy`; on leaving, stops the process if it still runs."""
    from kairos.launch.actions import ExecuteProcess
    from kairos.launch.events import IncludeLaunchDescription
    from kairos.launch.events.process import ShutdownProcess, matches_action
    from kairos.launch.launch_description import LaunchDescription
    if not isinstance(process_action, ExecuteProcess):
        raise TypeError(f"'process_action' must be an ExecuteProcess, not "
                        f"{type(process_action).__name__}")
    launch_service.emit_event(IncludeLaunchDescription(LaunchDescription([process_action])))
    proxy = ProcessProxy(process_action, proc_info, proc_output, **kwargs)
    try:
        yield proxy
    finally:
        if not proxy.terminated:
            launch_service.emit_event(ShutdownProcess(
                process_matcher=matches_action(process_action)))


__all__ = ["ProcessProxy", "launch_process"]
