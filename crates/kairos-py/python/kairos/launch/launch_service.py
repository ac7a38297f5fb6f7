"""ROS 2's ``LaunchService`` on kairos: a launch run from Python code, in the caller's
process (``ls.include_launch_description(ld); ls.run()``), as ROS 2's tests and tools do.

The caller's process is the launch's driver (``kairos.launch.driver``): it evaluates the
descriptions and runs the event handlers, in the thread that calls :meth:`run`. The
kairos launcher (``kairos launch --serve-driver``, the binary ``KAIROS_BIN`` names, else
``kairos`` on ``PATH``; it starts no router, as ROS 2's service starts none) is its child and owns the processes and the bounded stop, as under
``kairos launch``: the driver asks, the launcher acts and tells. So a handler can never
delay a stop, and :meth:`run` ends once the launcher has: when nothing runs any more
(``shutdown_when_idle``), or after :meth:`shutdown` or a ``Shutdown`` event, within the
stop's bound.
"""

import os
import shutil
import subprocess
import sys

from kairos.launch import logging as launch_logging
from kairos.launch.driver import Driver, ThreadRequests
from kairos.launch.events import Shutdown

#: How long the launcher may take to exit once its notices have ended.
LAUNCHER_GRACE = 10.0


def kairos_binary():
    """The kairos binary: ``KAIROS_BIN``, else ``kairos`` on ``PATH``."""
    named = os.environ.get("KAIROS_BIN")
    if named:
        return named
    found = shutil.which("kairos")
    if found is None:
        raise RuntimeError(
            "LaunchService runs its launch on the kairos launcher, and no kairos binary was "
            "found: install kairos (`cargo install --path crates/kairos-cli`) or set "
            "KAIROS_BIN to its path")
    return found


async def _asked():
    """What :meth:`LaunchService.shutdown` gives to await: the stop is asked already."""


class _ServiceDriver(Driver):
    owns_process = False

    def __init__(self, service, argv):
        super().__init__(service._name, argv, None)
        self.service = service

    def evaluate(self):
        for description in self.service._descriptions:
            self.evaluate_description(description)
        self.service._descriptions = []

    def busy(self):
        waiting = not self.service._shutdown_when_idle and not self.context.is_shutdown
        self.send({"op": "busy", "busy": self.timers_pending() or waiting, "seen": self.seen})


class LaunchService:
    """Runs launch descriptions on the kairos launcher from the caller's process."""

    def __init__(self, *, argv=None, noninteractive=False, debug=False):
        self._name = os.path.abspath(sys.argv[0] if sys.argv and sys.argv[0] else
                                     "launch_service")
        self._descriptions = []
        self._shutdown_when_idle = True
        self._running = False
        self._stop_asked = None
        self._async = False
        self.noninteractive = noninteractive
        self.debug = debug
        self._driver = _ServiceDriver(self, argv or [])
        self._requests = ThreadRequests(self._on_request)
        self._driver.add_source(self._requests)

    @property
    def context(self):
        return self._driver.context

    @property
    def task(self):
        return None

    def include_launch_description(self, launch_description):
        """Adds a description: launched when :meth:`run` starts, or at once if it runs."""
        if self._running:
            self._requests.put(("include", launch_description))
        else:
            self._descriptions.append(launch_description)

    def emit_event(self, event):
        """Emits ``event`` into the launch (from any thread)."""
        self._requests.put(("event", event))

    def shutdown(self, force_sync=False):
        """Stops the launch (from any thread): the launcher's bounded stop, asked at once.
        While :meth:`run_async` runs, also returns a coroutine to await or schedule, as
        ROS 2's does (the stop is asked whether or not it is awaited)."""
        if self._running:
            self._requests.put(("shutdown", "LaunchService.shutdown() was called"))
        else:
            self._stop_asked = "LaunchService.shutdown() was called before run()"
        if self._async and not force_sync:
            return _asked()
        return None

    def _on_request(self, request):
        kind, value = request
        if kind == "shutdown":
            if not self.context.is_shutdown:
                self._driver.emit(Shutdown(reason=value))
        elif kind == "include":
            self._driver.context._push()
            try:
                self._driver.evaluate_description(value)
            finally:
                self._driver.context._pop()
        else:
            self._driver.emit(value)

    def run(self, *, shutdown_when_idle=True):
        """Launches what was included; returns 0 when the launch ran and ended, 1 when it
        could not (an error in a description or a handler)."""
        if self._running:
            raise RuntimeError("LaunchService.run() is already running")
        self._shutdown_when_idle = shutdown_when_idle
        notices_read, notices_write = os.pipe()
        launcher = subprocess.Popen(
            # No router is started: as with ROS 2's LaunchService, the system's router is
            # the user's to run (`kairos router`).
            [kairos_binary(), "launch", "--no-router", "--serve-driver",
             f"/dev/fd/{notices_write}", "--log-dir", launch_logging.launch_config.log_dir,
             self._name],
            # The terminal's Ctrl-C reaches the launcher too (one process group): it starts
            # the bounded stop.
            stdin=subprocess.PIPE, pass_fds=(notices_write,), text=True)
        os.close(notices_write)
        driver = self._driver
        driver.out = launcher.stdin
        driver.input_fd = notices_read
        self._running = True
        if self._stop_asked is not None:
            self._requests.put(("shutdown", self._stop_asked))
        status = 1
        try:
            status = self._drive(driver)
        finally:
            self._running = False
            try:
                launcher.stdin.close()
            except OSError:
                pass
            os.close(notices_read)
            try:
                code = launcher.wait(LAUNCHER_GRACE)
            except subprocess.TimeoutExpired:
                launcher.kill()
                code = launcher.wait()
        # The launcher's 0 (clean), 1 (a stop escalated) and 3 (a process failed) are a
        # launch that ran; 2 is one that could not start.
        return 1 if status != 0 or code not in (0, 1, 3) else 0

    def _drive(self, driver):
        try:
            return driver.run()
        except BrokenPipeError:
            # The launcher has ended (and said why on its standard error).
            return 1

    async def run_async(self, *, shutdown_when_idle=True):
        """:meth:`run` on a thread of the running event loop's executor."""
        import asyncio
        loop = asyncio.get_running_loop()
        self._async = True
        try:
            return await loop.run_in_executor(
                None, lambda: self.run(shutdown_when_idle=shutdown_when_idle))
        finally:
            self._async = False
