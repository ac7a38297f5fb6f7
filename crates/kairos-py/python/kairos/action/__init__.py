"""rclpy's actions on kairos: ``ActionServer``, ``ActionClient``, ``GoalResponse`` and
``CancelResponse``, with rclpy's semantics, on the wire as rmw_zenoh carries them.

An action is three services (``<name>/_action/send_goal``, ``cancel_goal``,
``get_result``) and two topics (``feedback``, ``status``) of the types the action's
``Impl`` names, so a kairos action talks to ROS 2's, to kairos's Rust ``kairos-action``
and to ``kairos action send_goal`` alike.

What kairos adds to rclpy's behaviour:

- Waiting has a way out: ``wait_for_server(timeout_sec)`` returns False at its deadline,
  the blocking ``send_goal``/``get_result``/``cancel_goal`` are kairos calls (they raise
  ``WouldDeadlock`` at once where they could never complete), and a server that leaves
  fails the calls pending on it.
- A goal's execution runs on the executor in the server's callback group (an
  ``async def`` execute callback holds it until it returns), so the group's rules apply
  to it as to every other callback; an execute callback that raises aborts its goal with
  the error on the node's logger, never silently.
- A goal ends once: a transition its state does not allow raises
  :class:`GoalTransitionError` saying which.
"""

from kairos.action.client import ActionClient, ClientGoalHandle
from kairos.action.server import (
    ActionServer,
    CancelResponse,
    GoalEvent,
    GoalResponse,
    GoalTransitionError,
    ServerGoalHandle,
)
from kairos.action.graph import (
    get_action_client_names_and_types_by_node,
    get_action_names_and_types,
    get_action_server_names_and_types_by_node,
)

__all__ = [
    "ActionClient", "ActionServer", "CancelResponse", "ClientGoalHandle", "GoalEvent",
    "GoalResponse", "GoalTransitionError", "ServerGoalHandle",
    "get_action_client_names_and_types_by_node", "get_action_names_and_types",
    "get_action_server_names_and_types_by_node",
]
