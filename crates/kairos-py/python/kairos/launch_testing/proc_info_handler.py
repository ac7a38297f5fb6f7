"""``launch_testing.proc_info_handler``: each process's latest event (started, then
exited), and waits on them for the tests that run during the launch."""

import threading

from kairos.launch.events.process import ProcessExited
from kairos.launch_testing.util import NoMatchingProcessException, resolveProcesses


class ProcInfoHandler:
    """The latest start or exit event of each process, by its action."""

    def __init__(self):
        self._proc_info = {}

    def append(self, process_info):
        self._proc_info[process_info.action] = process_info

    def __iter__(self):
        return iter(list(self._proc_info.values()))

    def processes(self):
        return list(self._proc_info.keys())

    def process_names(self):
        return [action.process_details["name"] for action in self._proc_info]

    def __getitem__(self, key):
        if isinstance(key, str):
            for action, info in self._proc_info.items():
                if key in action.process_details["name"]:
                    return info
            raise KeyError(key)
        return self._proc_info[key]


class ActiveProcInfoHandler:
    """A :class:`ProcInfoHandler` filled by the launch as it runs, with waits."""

    def __init__(self):
        self._sync_lock = threading.Condition()
        self._proc_info_handler = ProcInfoHandler()

    @property
    def proc_event(self):
        return self._sync_lock

    def append(self, process_info):
        with self._sync_lock:
            self._proc_info_handler.append(process_info)
            self._sync_lock.notify_all()

    def __iter__(self):
        with self._sync_lock:
            return iter(list(self._proc_info_handler))

    def processes(self):
        with self._sync_lock:
            return self._proc_info_handler.processes()

    def process_names(self):
        with self._sync_lock:
            return self._proc_info_handler.process_names()

    def __getitem__(self, key):
        with self._sync_lock:
            return self._proc_info_handler[key]

    def _wait(self, predicate, timeout):
        with self._sync_lock:
            return self._sync_lock.wait_for(predicate, timeout=timeout)

    def assertWaitForShutdown(self, process, cmd_args=None, *, timeout=10):  # noqa: N802
        def exited():
            try:
                found = resolveProcesses(self._proc_info_handler, process=process,
                                         cmd_args=cmd_args, strict_proc_matching=True)[0]
            except NoMatchingProcessException:
                return False
            return isinstance(self._proc_info_handler[found], ProcessExited)
        assert self._wait(exited, timeout), \
            f"Timed out waiting for process '{process}' to finish"

    def assertWaitForStartup(self, process, cmd_args=None, *, timeout=10):  # noqa: N802
        def started():
            try:
                resolveProcesses(self._proc_info_handler, process=process,
                                 cmd_args=cmd_args, strict_proc_matching=True)
            except NoMatchingProcessException:
                return False
            return True
        assert self._wait(started, timeout), \
            f"Timed out waiting for process '{process}' to start"
