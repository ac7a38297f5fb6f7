"""The driver of a Python launch file, run by ``kairos launch FILE.launch.py`` as
``python3 -m kairos.launch.driver FILE [name:=value ...]``.

It evaluates the file with kairos's ``launch`` and ``launch_ros`` and asks the launcher
for what the file wants, one JSON object per line on the standard output it was given
(the file's own prints go to standard error); the launcher's notices (a process
started, exited or printed; the launch is stopping) arrive one per line on standard
input and run the file's event handlers. The launcher owns the processes and the stop:
the driver asks, never acts, so nothing here can delay a stop. When its input closes,
the driver exits.

Nothing is asked of the launcher until the file's first evaluation is complete; an error
in it is reported with the launch file's line and nothing starts."""

import heapq
import json
import os
import queue
import select
import signal
import sys
import time
import traceback

from kairos.launch._core import (
    InvalidLaunchFileError, LaunchContext, SubstitutionFailure, _KAIROS_DIR, visit_all)
from kairos.launch.event_handlers import _as_entities
from kairos.launch.events import IncludeLaunchDescription, Shutdown
from kairos.launch.events.process import (
    ProcessExited, ProcessStarted, ProcessStderr, ProcessStdout, SignalProcess)


class ThreadRequests:
    """Requests of other threads for the driver's loop (a test shutting the launch
    down, ``LaunchService.emit_event``): a queue, and a pipe the loop selects on, so the
    loop alone talks to the launcher."""

    def __init__(self, handle):
        self._read, self._write = os.pipe()
        self._queue = queue.SimpleQueue()
        self._handle = handle

    def fileno(self):
        return self._read

    def put(self, request):
        self._queue.put(request)
        os.write(self._write, b".")

    def drain(self):
        os.read(self._read, 4096)
        while True:
            try:
                request = self._queue.get_nowait()
            except queue.Empty:
                return
            self._handle(request)


class Driver:
    #: Where the launcher's notices come from: the driver's standard input, unless the
    #: driver started the launcher (``LaunchService``).
    input_fd = 0
    #: Whether this process is the driver's own (started by the launcher for the file).
    owns_process = True

    def __init__(self, file, argv, out):
        self.file = os.path.abspath(file)
        self.argv = list(argv)
        self.out = out
        self.buffer = []
        self.ready = False
        self.next_id = 1
        self.processes = {}
        self.timers = []
        self.timer_seq = 0
        #: Timers another clock keeps (``ROSTimer`` on ROS time): their actions, each
        #: fired through :meth:`fire_timer` from a source of the loop when due.
        self.timers_elsewhere = set()
        #: What to close when the loop ends (the launch's ROS node).
        self.closers = []
        #: See :meth:`attachment`.
        self.attachments = {}
        self.seen = 0
        #: Other inputs of the loop (``fileno()`` and ``drain()``), such as the bridge to
        #: managed nodes (``kairos.launch_ros._lifecycle``).
        self.sources = []
        #: The Shutdown events this launch file emitted that the launcher has not yet
        #: answered with its stop.
        self.asked_shutdowns = []
        self.context = LaunchContext(driver=self, argv=argv)
        self.context.extend_locals({
            "current_launch_file_path": self.file,
            "current_launch_file_directory": os.path.dirname(self.file),
        })

    # -- requests to the launcher
    def send(self, message):
        if self.ready:
            self.out.write(json.dumps(message) + "\n")
            self.out.flush()
        else:
            self.buffer.append(message)

    def start(self, action, *, name, cmd, env, cwd, output, respawn, respawn_delay,
              required, env_only=False, respawn_max_retries=None, emulate_tty=False,
              sigterm_timeout=None, sigkill_timeout=None):
        if self.context.is_shutdown:
            return
        pid = self.next_id
        self.next_id += 1
        self.processes[pid] = {"action": action, "name": name, "cmd": cmd, "cwd": cwd,
                               "env": env, "pid": None}
        self.send({"op": "start", "id": pid, "name": name, "cmd": [str(c) for c in cmd],
                   "env": [[str(k), str(v)] for k, v in env.items()], "cwd": cwd,
                   "output": output, "respawn": bool(respawn),
                   "respawn_delay": float(respawn_delay), "required": bool(required),
                   "env_only": bool(env_only), "respawn_max_retries": respawn_max_retries,
                   "emulate_tty": bool(emulate_tty), "sigterm_timeout": sigterm_timeout,
                   "sigkill_timeout": sigkill_timeout,
                   "origin": action.origin, "io": self.wants_io()})

    def wants_io(self):
        from kairos.launch.event_handlers import OnProcessIO
        return any(isinstance(h, OnProcessIO) for h in self.context.event_handlers)

    def add_source(self, source):
        self.sources.append(source)

    def attachment(self, cls):
        """The driver's one ``cls`` (the managed nodes' bridge, the launch's ROS node),
        made as ``cls(driver)`` on first use: a source of the loop (``fileno()``,
        ``drain()``), and closed with the loop if it has a ``close()``."""
        attached = self.attachments.get(cls)
        if attached is None:
            attached = self.attachments[cls] = cls(self)
            self.add_source(attached)
            if hasattr(attached, "close"):
                self.closers.append(attached.close)
        return attached

    def prepare_ros(self):
        """Readies this process for a ROS node of the launch's own (managed nodes' bridge,
        ``launch_ros.ros_adapters``): the processes' transport, and Ctrl-C left to the
        launcher. Only in a driver process of the launcher's; a ``LaunchService`` runs in
        its caller's process, whose environment and signals stay the caller's."""
        if self.owns_process:
            os.environ.setdefault("KAIROS_TRANSPORT", "zenoh")
            os.environ["KAIROS_SIGNAL_HANDLER"] = "off"

    def log(self, text):
        self.send({"op": "log", "text": text})

    def emit(self, event):
        if isinstance(event, Shutdown):
            # The handlers get each Shutdown event itself, as ROS 2's do: once the launcher
            # says it is stopping (it words its own reason), or at once if it already is.
            if self.context.is_shutdown:
                self.dispatch(event)
                return
            self.asked_shutdowns.append(event)
            self.send({"op": "shutdown", "reason": event.reason})
        elif isinstance(event, IncludeLaunchDescription):
            # As ROS 2's launch service does for every launch: the description is launched.
            self.context._push()
            try:
                visit_all([event.launch_description], self.context)
            finally:
                self.context._pop()
        elif isinstance(event, SignalProcess):
            for pid, process in self.processes.items():
                if event.process_matcher(process["action"]):
                    self.send({"op": "signal", "id": pid, "signal": event.signal_number})
        else:
            self.dispatch(event)

    def schedule(self, period, action, context):
        snapshot = context.snapshot()
        self.timer_seq += 1
        heapq.heappush(self.timers, (time.monotonic() + period, self.timer_seq, action,
                                     snapshot))

    # -- events
    def dispatch(self, event):
        for handler in list(self.context.event_handlers):
            if handler.matches(event):
                self.context._push()
                try:
                    visit_all(_as_entities(handler.handle(event, self.context)),
                              self.context)
                finally:
                    self.context._pop()

    def notice(self, notice):
        kind = notice.get("ev")
        if kind == "shutdown":
            if not self.context.is_shutdown:
                self.context.is_shutdown = True
                self.timers = [t for t in self.timers if not t[2].cancel_on_shutdown]
                heapq.heapify(self.timers)
                for action in [a for a in self.timers_elsewhere if a.cancel_on_shutdown]:
                    action.cancel()
                    self.timers_elsewhere.discard(action)
                    self.context._completed(action)
                asked, self.asked_shutdowns = self.asked_shutdowns, []
                for event in asked or [Shutdown(reason=notice.get("reason", ""))]:
                    self.dispatch(event)
            return
        process = self.processes.get(notice.get("id"))
        if process is None:
            return
        if kind == "started":
            process["pid"] = notice["pid"]
            process["label"] = notice.get("label") or process["name"]
            if hasattr(process["action"], "process_details"):
                # ROS 2's: the environment is the one the process got.
                description = getattr(process["action"], "process_description", None)
                env = getattr(description, "final_env", None) or process["env"]
                process["action"].process_details = {
                    "action": process["action"], "name": process["label"],
                    "cmd": process["cmd"], "cwd": process["cwd"], "env": env,
                    "pid": process["pid"]}
        common = {"action": process["action"], "name": process.get("label", process["name"]),
                  "cmd": process["cmd"], "cwd": process["cwd"], "env": process["env"]}
        if kind == "started":
            self.dispatch(ProcessStarted(pid=notice["pid"], **common))
        elif kind == "exited":
            code = notice.get("code")
            if code is None and notice.get("signal") is not None:
                code = -notice["signal"]
            self.dispatch(ProcessExited(pid=process["pid"], returncode=code, **common))
            # Complete once it will not run again: no respawn, a stop, or its retries spent.
            action = process["action"]
            process["exits"] = process.get("exits", 0) + 1
            limit = getattr(action, "_respawn_limit", None)
            if not getattr(action, "_respawns", False) or self.context.is_shutdown or (
                    limit is not None and process["exits"] > limit):
                self.context._completed(action)
        elif kind == "io":
            text = (notice.get("text", "") + "\n").encode()
            event = ProcessStderr if notice.get("stream") == "stderr" else ProcessStdout
            self.dispatch(event(pid=process["pid"], text=text, **common))

    def fire_due_timers(self):
        now = time.monotonic()
        while self.timers and self.timers[0][0] <= now:
            _, _, action, snapshot = heapq.heappop(self.timers)
            self.fire_timer(action, snapshot)

    def fire_timer(self, action, snapshot):
        """The actions of the timer ``action``, in the scope it was started in (none if it
        was cancelled)."""
        self.timers_elsewhere.discard(action)
        if not action.cancelled:
            self.context._push()
            self.context.restore(snapshot)
            try:
                visit_all(action.actions, self.context)
            finally:
                self.context._pop()
        self.context._completed(action)

    def timers_pending(self):
        """Whether a timer of the launch is still to fire (the launch is not idle)."""
        return bool(self.timers or self.timers_elsewhere)

    def busy(self):
        self.send({"op": "busy", "busy": self.timers_pending(), "seen": self.seen})

    # -- the run
    def error(self, exc):
        file, line = where(exc, self.file)
        what = str(exc) if isinstance(exc, (InvalidLaunchFileError, SubstitutionFailure)) \
            else f"{type(exc).__name__}: {exc}"
        if not isinstance(exc, (InvalidLaunchFileError, SubstitutionFailure)):
            traceback.print_exception(exc, file=sys.stderr)
        message = {"op": "error", "file": file, "line": line, "what": what}
        self.out.write(json.dumps(message) + "\n")
        self.out.flush()

    def evaluate(self):
        from kairos.launch.launch_description_sources import launch_description_of
        self.evaluate_description(launch_description_of(self.file))

    def evaluate_description(self, description):
        visit_all([description], self.context)

    def run(self):
        try:
            return self._run()
        finally:
            for close in reversed(self.closers):
                close()

    def _run(self):
        try:
            self.evaluate()
        except Exception as e:  # noqa: BLE001 - every error of the file is the user's to see
            self.error(e)
            return 2
        self.ready = True
        for message in self.buffer:
            message_io = message.get("op") == "start"
            if message_io:
                message["io"] = self.wants_io()
            self.send(message)
        self.buffer = []
        self.busy()
        self.send({"op": "ready"})
        pending = b""
        while True:
            timeout = None
            if self.timers:
                timeout = max(0.0, self.timers[0][0] - time.monotonic())
            readable, _, _ = select.select([self.input_fd, *self.sources], [], [], timeout)
            for source in self.sources:
                if source in readable:
                    try:
                        source.drain()
                    except Exception as e:  # noqa: BLE001
                        self.error(e)
            if self.input_fd in readable:
                chunk = os.read(self.input_fd, 65536)
                if not chunk:
                    return 0
                pending += chunk
                *lines, pending = pending.split(b"\n")
                for line in lines:
                    if not line.strip():
                        continue
                    self.seen += 1
                    try:
                        self.notice(json.loads(line))
                    except Exception as e:  # noqa: BLE001
                        self.error(e)
            try:
                self.fire_due_timers()
            except Exception as e:  # noqa: BLE001
                self.error(e)
            self.busy()


def where(exc, launch_file):
    """The launch file and line an error belongs to: the deepest frame of the traceback
    outside kairos (a launch file's own code), else where the failing action was made."""
    found = None
    for frame, lineno in traceback.walk_tb(exc.__traceback__):
        path = os.path.abspath(frame.f_code.co_filename)
        if not path.startswith(_KAIROS_DIR + os.sep) and not path.startswith("<"):
            found = (path, lineno)
    if found is None:
        origin = getattr(exc, "kairos_origin", None)
        if origin and ":" in origin:
            path, _, line = origin.rpartition(":")
            if line.isdigit():
                return path, int(line)
        return launch_file, 0
    return found


def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["--log-dir"] and len(argv) > 1:
        use_log_dir(argv[1])
        argv = argv[2:]
    if not argv:
        print("usage: python -m kairos.launch.driver [--log-dir DIR] FILE [name:=value ...]",
              file=sys.stderr)
        return 2
    driver = Driver(argv[0], argv[1:], take_protocol_stream())
    try:
        return run_with_arguments(driver, argv[1:])
    except BrokenPipeError:
        # The launcher has ended and closed the pipe: so does the driver, quietly.
        os._exit(0)


def use_log_dir(folder):
    """The launcher's log folder as ``launch.logging``'s (``LaunchLogDir``, the file's
    ``launch.logging.get_logger``), so one launch writes in one place."""
    from kairos.launch import logging as launch_logging
    launch_logging.use_launcher_log_dir(folder)


def take_protocol_stream():
    """The stream to the launcher: the real standard output, which the protocol keeps;
    the file's own prints go to standard error from now on. Ctrl-C is the launcher's (it
    tells the driver of the stop as a notice), so this process ignores SIGINT."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    out = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return out


def run_with_arguments(driver, launch_arguments):
    """Sets the launch arguments (``name:=value``) and runs ``driver``."""
    for arg in launch_arguments:
        name, sep, value = arg.partition(":=")
        if not sep:
            print(f"launch argument '{arg}': write name:=value", file=sys.stderr)
            return 2
        driver.context.launch_configurations[name] = value
    return driver.run()


if __name__ == "__main__":
    sys.exit(main())
