"""``launch_ros.events.lifecycle``: asking a managed node for a transition, and hearing
the transitions it makes."""

import time


class ChangeState:
    """Ask the managed nodes ``lifecycle_node_matcher`` selects (a callable on the
    ``LifecycleNode`` action) for transition ``transition_id``
    (``lifecycle_msgs.msg.Transition.TRANSITION_CONFIGURE``, ...)."""

    name = "launch_ros.events.lifecycle.ChangeState"

    def __init__(self, *, lifecycle_node_matcher, transition_id):
        self.lifecycle_node_matcher = lifecycle_node_matcher
        self.transition_id = transition_id


class StateTransition:
    """A managed node changed state: its ``~/transition_event`` message, and the action
    that started it. ``transition``, ``start_state`` and ``goal_state`` are labels."""

    name = "launch_ros.events.lifecycle.StateTransition"

    def __init__(self, *, action, msg):
        self.action = action
        self.msg = msg
        self.timestamp = time.time()
        self.transition = msg.transition.label
        self.start_state = msg.start_state.label
        self.goal_state = msg.goal_state.label


__all__ = ["ChangeState", "StateTransition"]
