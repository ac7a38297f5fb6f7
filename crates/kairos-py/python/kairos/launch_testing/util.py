"""``launch_testing.util``: finding the processes a test names, and a process that keeps
a launch alive."""

from kairos._layout import stands_for_package

stands_for_package(__name__, ("proc_lookup",))

import sys  # noqa: E402

#: ``cmd_args`` that matches a process started without arguments.
NO_CMD_ARGS = object()


class NoMatchingProcessException(Exception):
    """No process recorded matches what a test named."""


def _describe(process):
    details = getattr(process, "process_details", None)
    if details:
        return " ".join([details["name"], *details["cmd"][1:]])
    return getattr(process, "command_line", None) or "a process not started yet"


def _by_name(info, name, cmd_args):
    def args_match(process):
        cmd = process.process_details["cmd"]
        if cmd_args is None:
            return True
        if cmd_args is NO_CMD_ARGS:
            return len(cmd) == 1
        return all(arg in cmd[1:] for arg in cmd_args)
    return [p for p in info.processes()
            if name in p.process_details["name"] and args_match(p)]


def resolveProcesses(info_obj, *, process=None, cmd_args=None, strict_proc_matching=True):
    """The processes of ``info_obj`` (a ``proc_info`` or ``proc_output``) that ``process``
    names: all of them for ``None``, that one for an ``ExecuteProcess``, those whose name
    contains it for a string (``cmd_args`` narrowing it; more than one is an error when
    ``strict_proc_matching``). None matching is :class:`NoMatchingProcessException`."""
    from kairos.launch.actions import ExecuteLocal
    if process is None:
        found = list(info_obj.processes())
        if not found:
            raise NoMatchingProcessException("No data recorded for any process")
        return found
    if isinstance(process, ExecuteLocal):
        if process in list(info_obj.processes()):
            return [process]
        raise NoMatchingProcessException(f"No data recorded for proc {_describe(process)}")
    if isinstance(process, str):
        if isinstance(cmd_args, str):
            cmd_args = [cmd_args]
        found = _by_name(info_obj, process, cmd_args)
        names = ", ".join(sorted(_describe(p) for p in info_obj.processes()))
        if not found:
            raise NoMatchingProcessException(
                f"Did not find any processes matching name '{process}' and args "
                f"'{cmd_args}'. Procs: {names}")
        if strict_proc_matching and len(found) > 1:
            raise Exception(
                f"Found multiple processes matching name '{process}' and cmd_args "
                f"'{cmd_args}'. Procs: {names}")
        return found
    raise TypeError(f"proc argument must be 'ExecuteProcess' or 'str' not {type(process)}")


_KEEP_ALIVE = """
import time
try:
    while True:
        time.sleep(3600)
except KeyboardInterrupt:
    pass
"""


def KeepAliveProc():  # noqa: N802 - ROS 2's name
    """A process that does nothing until the launch stops it, so a launch whose processes
    all end by themselves lives until the tests are done."""
    from kairos.launch.actions import ExecuteProcess
    return ExecuteProcess(cmd=[sys.executable, "-c", _KEEP_ALIVE])


__all__ = ["KeepAliveProc", "NO_CMD_ARGS", "NoMatchingProcessException", "resolveProcesses"]
