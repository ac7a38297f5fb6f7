"""Python nodes are traced like Rust ones (KAIROS_TRACE), and the analyzer names Python
callbacks by their module and qualified function name."""

import os

from conftest import kairos_bin, python, run

SCRIPT = """
import threading
import kairos
from kairos.node import Node
from kairos.std_msgs.msg import String


class Talker(Node):
    def __init__(self):
        super().__init__("traced_talker")
        self.publisher = self.create_publisher(String, "traced_chatter", 10)
        self.timer = self.create_timer(0.002, self.timer_callback)
        self.sent = 0

    def timer_callback(self):
        if self.sent < 20:
            self.publisher.publish(String(data="hi"))
            self.sent += 1


class Listener(Node):
    def __init__(self, done):
        super().__init__("traced_listener")
        self.done, self.heard = done, 0
        self.create_subscription(String, "traced_chatter", self.listener_callback, 10)

    def listener_callback(self, msg):
        self.heard += 1
        if self.heard == 20:
            self.done.set()


kairos.init()
done = threading.Event()
executor = kairos.SingleThreadedExecutor()
executor.add_node(Talker())
executor.add_node(Listener(done))
threading.Thread(target=executor.spin, daemon=True).start()
assert done.wait(60), "the listener did not hear 20 messages"
kairos.shutdown()
"""


def test_python_callbacks_are_traced_by_their_qualified_names(tmp_path):
    env = dict(os.environ, KAIROS_TRACE=str(tmp_path), KAIROS_TRANSPORT="")
    ran = python(SCRIPT, env)
    assert ran.returncode == 0, ran.stderr
    callbacks = run([kairos_bin(), "trace", "callbacks", str(tmp_path)], env)
    assert callbacks.returncode == 0, callbacks.stderr
    out = callbacks.stdout
    assert "__main__.Talker.timer_callback" in out, out
    assert "__main__.Listener.listener_callback" in out, out
