"""``launch_ros.event_handlers``: what to do when a managed node changes state."""

from kairos.launch._core import EventHandler
from kairos.launch_ros.events.lifecycle import StateTransition


class OnStateTransition(EventHandler):
    """``entities`` when ``target_lifecycle_node`` (any managed node when None) makes a
    transition that matches the labels given (``transition``, ``start_state``,
    ``goal_state``; None matches every one)."""

    def __init__(self, *, entities, target_lifecycle_node=None, transition=None,
                 start_state=None, goal_state=None, matcher=None, handle_once=False):
        self.target_lifecycle_node = target_lifecycle_node
        self.labels = {"transition": transition, "start_state": start_state,
                       "goal_state": goal_state}
        self.extra = matcher
        super().__init__(matcher=self._match,
                         entities=entities if isinstance(entities, list) else [entities],
                         handle_once=handle_once)

    def _match(self, event):
        if not isinstance(event, StateTransition):
            return False
        if self.target_lifecycle_node is not None and \
                event.action is not self.target_lifecycle_node:
            return False
        if self.extra is not None and not self.extra(event):
            return False
        return all(want is None or getattr(event, key) == want
                   for key, want in self.labels.items())


__all__ = ["OnStateTransition"]
