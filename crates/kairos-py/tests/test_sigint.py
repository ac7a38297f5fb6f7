"""Ctrl-C: SIGINT shuts the executor down, prints kairos's report, and the program goes
on from where it spun, as with rclpy."""

import signal
import subprocess
import sys

SCRIPT = """
import kairos
from kairos.node import Node
kairos.init()
node = Node("sigint_node")
ticks = []
def tick():
    if not ticks:
        print("spinning", flush=True)  # the executor runs the node: Ctrl-C now
    ticks.append(1)
node.create_timer(0.01, tick)
try:
    kairos.spin(node)
except KeyboardInterrupt:
    print("KeyboardInterrupt", flush=True)
print("after spin", flush=True)
kairos.shutdown()
"""


def test_sigint_shuts_down_with_the_report_printed():
    process = subprocess.Popen([sys.executable, "-c", SCRIPT], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
    try:
        assert process.stdout.readline().strip() == "spinning"
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=30)
    finally:
        process.kill()
    assert "kairos: SIGINT: shutting down 1 executor(s)" in err, err
    assert "kairos: clean shutdown after" in err, err
    # As rclpy: spin raises KeyboardInterrupt in the main thread, after kairos's report.
    assert out.splitlines()[-2:] == ["KeyboardInterrupt", "after spin"], (out, err)
    assert process.returncode == 0, (out, err)
