"""An rclpy action client, written as an rclpy user writes one; the tests run it
unmodified with `python -m kairos.run`. It sends a goal and waits for its result with
callbacks, sends a goal the server rejects, then cancels a goal that runs until
canceled, and prints what it saw."""

import sys

import rclpy
from action_msgs.msg import GoalStatus
from example_interfaces.action import Fibonacci
from rclpy.action import ActionClient
from rclpy.node import Node


class FibonacciClient(Node):
    def __init__(self):
        super().__init__("fibonacci_client")
        self.client = ActionClient(self, Fibonacci, "fibonacci")
        self.feedback = []

    def on_feedback(self, message):
        self.feedback.append(list(message.feedback.sequence))

    def run(self, order):
        future = self.client.send_goal_async(Fibonacci.Goal(order=order),
                                             feedback_callback=self.on_feedback)
        rclpy.spin_until_future_complete(self, future, timeout_sec=30)
        return future.result()


def main():
    rclpy.init()
    node = FibonacciClient()
    if not node.client.wait_for_server(timeout_sec=30):
        print("no server", flush=True)
        return 1
    goal = node.run(6)
    # As in rclpy, a goal's feedback callback goes when its result comes, and feedback
    # and the result travel apart: take the feedback first.
    for _ in range(300):
        if len(node.feedback) == 5:
            break
        rclpy.spin_once(node, timeout_sec=0.1)
    result = goal.get_result_async()
    rclpy.spin_until_future_complete(node, result, timeout_sec=30)
    succeeded = result.result().status == GoalStatus.STATUS_SUCCEEDED
    print("result", succeeded, list(result.result().result.sequence), flush=True)
    print("feedback", len(node.feedback), node.feedback[-1] if node.feedback else None,
          flush=True)
    print("rejected", not node.run(-1).accepted, flush=True)
    endless = node.run(100)
    cancel = endless.cancel_goal_async()
    rclpy.spin_until_future_complete(node, cancel, timeout_sec=30)
    print("canceling", len(cancel.result().goals_canceling), flush=True)
    result = endless.get_result_async()
    rclpy.spin_until_future_complete(node, result, timeout_sec=30)
    print("canceled", result.result().status == GoalStatus.STATUS_CANCELED, flush=True)
    node.destroy_node()
    rclpy.shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())
