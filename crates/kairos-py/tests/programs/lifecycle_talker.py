"""An rclpy lifecycle talker, written as an rclpy user writes one; the tests run it
unmodified with `python -m kairos.run` and drive it with `kairos lifecycle`. Each
`on_*` prints its name; its timer publishes while active."""

import rclpy
from rclpy.executors import ExternalShutdownException, SingleThreadedExecutor
from rclpy.lifecycle import Node, State, TransitionCallbackReturn
from std_msgs.msg import String


class Talker(Node):
    def __init__(self):
        super().__init__("lc_talker")
        self.count = 0
        self.pub = None
        self.timer = None

    def tick(self):
        self.count += 1
        self.pub.publish(String(data=f"hello {self.count}"))

    def on_configure(self, state: State) -> TransitionCallbackReturn:
        self.pub = self.create_lifecycle_publisher(String, "lifecycle_chatter", 10)
        self.timer = self.create_timer(0.02, self.tick)
        print("on_configure from", state.label, flush=True)
        return TransitionCallbackReturn.SUCCESS

    def on_activate(self, state: State) -> TransitionCallbackReturn:
        print("on_activate from", state.label, flush=True)
        return super().on_activate(state)

    def on_deactivate(self, state: State) -> TransitionCallbackReturn:
        print("on_deactivate from", state.label, flush=True)
        return super().on_deactivate(state)

    def on_shutdown(self, state: State) -> TransitionCallbackReturn:
        self.destroy_timer(self.timer)
        print("on_shutdown from", state.label, "dropped while inactive:",
              self.pub.dropped_while_inactive > 0, flush=True)
        return TransitionCallbackReturn.SUCCESS


def main():
    try:
        with rclpy.init():
            executor = SingleThreadedExecutor()
            executor.add_node(Talker())
            executor.spin()
    except (KeyboardInterrupt, ExternalShutdownException):
        pass


if __name__ == "__main__":
    main()
