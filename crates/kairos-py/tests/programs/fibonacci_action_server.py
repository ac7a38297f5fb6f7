"""An rclpy action server, written as an rclpy user writes one; the tests run it
unmodified with `python -m kairos.run`. Goals of order < 0 are rejected; a goal of order
>= 100 runs until it is canceled."""

import threading

import rclpy
from example_interfaces.action import Fibonacci
from rclpy.action import ActionServer, CancelResponse, GoalResponse
from rclpy.callback_groups import ReentrantCallbackGroup
from rclpy.executors import ExternalShutdownException, MultiThreadedExecutor
from rclpy.node import Node


class FibonacciServer(Node):
    def __init__(self):
        super().__init__("fibonacci_server")
        self.canceled = threading.Event()
        self.server = ActionServer(
            self, Fibonacci, "fibonacci", self.execute,
            goal_callback=self.decide, cancel_callback=self.cancel,
            callback_group=ReentrantCallbackGroup())
        self.get_logger().info("serving fibonacci")

    def decide(self, goal):
        return GoalResponse.REJECT if goal.order < 0 else GoalResponse.ACCEPT

    def cancel(self, goal_handle):
        self.canceled.set()
        return CancelResponse.ACCEPT

    def execute(self, goal_handle):
        feedback = Fibonacci.Feedback(sequence=[0, 1])
        order = goal_handle.request.order
        if order >= 100:
            self.canceled.wait(30)
            while not goal_handle.is_cancel_requested:
                self.canceled.wait(0.01)
            goal_handle.canceled()
            self.get_logger().info("goal canceled")
            return Fibonacci.Result(sequence=feedback.sequence)
        for i in range(1, order):
            feedback.sequence.append(feedback.sequence[i] + feedback.sequence[i - 1])
            goal_handle.publish_feedback(feedback)
        goal_handle.succeed()
        return Fibonacci.Result(sequence=feedback.sequence)


def main(args=None):
    try:
        with rclpy.init(args=args):
            node = FibonacciServer()
            rclpy.spin(node, executor=MultiThreadedExecutor())
    except (KeyboardInterrupt, ExternalShutdownException):
        pass


if __name__ == "__main__":
    main()
