"""``launch_testing.io_handler``: what each process printed, in order, and waits for a
text for the tests that run during the launch."""

import threading

from kairos.launch_testing.util import NoMatchingProcessException, resolveProcesses


class IoHandler:
    """Every output event, in the order they came, and by process name."""

    def __init__(self):
        self._sequence_list = []
        self._process_name_dict = {}

    def track(self, process_name):
        self._process_name_dict.setdefault(process_name, [])

    def append(self, process_io):
        self._sequence_list.append(process_io)
        self._process_name_dict.setdefault(process_io.process_name, []).append(process_io)

    def __iter__(self):
        return iter(list(self._sequence_list))

    def processes(self):
        return [events[0].action for events in self._process_name_dict.values() if events]

    def process_names(self):
        return list(self._process_name_dict.keys())

    def __getitem__(self, key):
        if isinstance(key, str):
            return list(self._process_name_dict[key])
        return list(self._process_name_dict[key.process_details["name"]])


class ActiveIoHandler:
    """An :class:`IoHandler` filled by the launch as it runs, with waits."""

    def __init__(self):
        self._sync_lock = threading.Condition()
        self._io_handler = IoHandler()

    @property
    def io_event(self):
        return self._sync_lock

    def track(self, process_name):
        with self._sync_lock:
            self._io_handler.track(process_name)
            self._sync_lock.notify_all()

    def append(self, process_io):
        with self._sync_lock:
            self._io_handler.append(process_io)
            self._sync_lock.notify_all()

    def __iter__(self):
        with self._sync_lock:
            return iter(list(self._io_handler))

    def processes(self):
        with self._sync_lock:
            return self._io_handler.processes()

    def process_names(self):
        with self._sync_lock:
            return self._io_handler.process_names()

    def __getitem__(self, key):
        with self._sync_lock:
            return self._io_handler[key]

    def assertWaitFor(self, *args, **kwargs):  # noqa: N802
        assert self.waitFor(*args, **kwargs), "Waiting for output timed out"

    def waitFor(self, expected_output, process=None, cmd_args=None, *,  # noqa: N802
                strict_proc_matching=True, output_filter=None, timeout=10,
                strip_ansi_escape_sequences=True, stream="stderr"):
        """Whether ``expected_output`` (text, a regex, or a list of them in order) shows in
        ``stream`` of the processes ``process`` names within ``timeout`` seconds."""
        from kairos.launch_testing.asserts import assertInStream

        def found():
            try:
                assertInStream(self._io_handler, expected_output, process, cmd_args,
                               output_filter=output_filter,
                               strict_proc_matching=strict_proc_matching,
                               strip_ansi_escape_sequences=strip_ansi_escape_sequences,
                               stream=stream)
            except (NoMatchingProcessException, AssertionError):
                return False
            return True
        with self._sync_lock:
            success = self._sync_lock.wait_for(found, timeout=timeout)
        if not success:
            # A process that never was (or never printed) is said, not a plain timeout.
            resolveProcesses(self, process=process, cmd_args=cmd_args,
                             strict_proc_matching=False)
        return success
