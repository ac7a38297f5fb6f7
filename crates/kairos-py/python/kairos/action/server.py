"""The action server, rclpy's shape on kairos-action's server: the goal table, ROS 2's
cancel policy, the three services, the status and feedback topics, result keeping and
expiry and the goal trace are the Rust server's (``_kairos.ActionServerCore``, one
protocol for Rust and Python servers); this module maps rclpy's callbacks onto it and
runs accepted goals on the executor.

Ground rules:

- The goal and cancel callbacks (plain or ``async def``) decide in the server's callback
  group; ``get_result`` runs in a reentrant group of its own and awaits the goal's result
  without holding a worker, so any number of clients can wait for results while goals
  execute.
- Each goal has a guard condition in the server's group; its steps (the accepted
  callback, then the execution ``execute()`` asks for) run there, after the goal's
  response is on its way, as rclpy runs them after answering.
- A goal ends once, in rcl_action's order: ``succeed()``, ``abort()`` or ``canceled()``
  sets its final status (published at once), and the execute callback's return value is
  its result, handed to every waiting ``get_result`` and kept ``result_timeout`` seconds
  for clients that ask later.
"""

import collections
import enum
import inspect

from kairos import _kairos
from kairos.action_msgs.msg import GoalStatus
from kairos.unique_identifier_msgs.msg import UUID
from kairos.waitable import NumberOfEntities


class GoalResponse(enum.Enum):
    """What a goal callback decides."""
    REJECT = 1
    ACCEPT = 2


class CancelResponse(enum.Enum):
    """What a cancel callback decides."""
    REJECT = 1
    ACCEPT = 2


class GoalEvent(enum.Enum):
    """What moves a goal from one status to the next."""
    EXECUTE = 1
    CANCEL_GOAL = 2
    SUCCEED = 3
    ABORT = 4
    CANCELED = 5


class GoalTransitionError(RuntimeError):
    """A goal was asked for a transition its status does not allow (e.g. ``succeed()``
    twice, or ``canceled()`` without a cancel request)."""


#: The status each event asks for; whether the goal may take it from where it is is
#: kairos-action's state machine (``_kairos.goal_can_become``), the one Rust servers run.
_EVENT_STATUS = {
    GoalEvent.EXECUTE: GoalStatus.STATUS_EXECUTING,
    GoalEvent.CANCEL_GOAL: GoalStatus.STATUS_CANCELING,
    GoalEvent.SUCCEED: GoalStatus.STATUS_SUCCEEDED,
    GoalEvent.ABORT: GoalStatus.STATUS_ABORTED,
    GoalEvent.CANCELED: GoalStatus.STATUS_CANCELED,
}

_STATUS_NAMES = {
    GoalStatus.STATUS_UNKNOWN: "unknown", GoalStatus.STATUS_ACCEPTED: "accepted",
    GoalStatus.STATUS_EXECUTING: "executing", GoalStatus.STATUS_CANCELING: "canceling",
    GoalStatus.STATUS_SUCCEEDED: "succeeded", GoalStatus.STATUS_CANCELED: "canceled",
    GoalStatus.STATUS_ABORTED: "aborted",
}

def goal_id_text(goal_id):
    """A goal id (``unique_identifier_msgs/UUID``) as the canonical UUID text."""
    return _kairos.goal_id_text(bytes(goal_id.uuid))


def default_goal_callback(goal_request):
    """rclpy's default: every goal is accepted."""
    return GoalResponse.ACCEPT


def default_handle_accepted_callback(goal_handle):
    """rclpy's default: an accepted goal executes at once."""
    goal_handle.execute()


def default_cancel_callback(cancel_request):
    """rclpy's default: cancel requests are rejected."""
    return CancelResponse.REJECT


class ServerGoalHandle:
    """One accepted goal, as the server's callbacks see it: a view of the Rust goal
    (``_kairos.ActionGoal``) with rclpy's methods."""

    def __init__(self, action_server, core):
        self._server = action_server
        self._core = core
        self._goal_id = UUID(uuid=list(core.goal_id))
        self._steps = collections.deque()
        self._guard = action_server._node.create_guard_condition(
            self._next_step, callback_group=action_server._callback_group, _coroutines=True)

    @property
    def request(self):
        """The goal message the client sent."""
        return self._core.request

    @property
    def goal_id(self):
        return self._goal_id

    @property
    def status(self):
        return self._core.status

    @property
    def is_active(self):
        return not _kairos.goal_is_terminal(self.status)

    @property
    def is_cancel_requested(self):
        return self.status == GoalStatus.STATUS_CANCELING

    def execute(self, execute_callback=None):
        """Runs the execute callback (the server's, or ``execute_callback``) on the
        executor. A goal whose cancel was requested before it ran stays canceling, and its
        execute callback runs to handle the cancel (as rclpy)."""
        if not self.is_cancel_requested:
            self._update_state(GoalEvent.EXECUTE)
        callback = execute_callback or self._server._execute_callback
        self._schedule(lambda: self._server._execute_goal(callback, self))

    def publish_feedback(self, feedback):
        """Publishes ``feedback`` (the action's ``Feedback``) for this goal; ignored once
        the goal ended."""
        feedback_type = self._server._action_type.Feedback
        if not isinstance(feedback, feedback_type):
            raise TypeError(f"publish_feedback takes a {feedback_type.__qualname__}, "
                            f"not a {type(feedback).__qualname__}")
        if self.is_active:
            self._core.publish_feedback(feedback)

    def succeed(self):
        self._update_state(GoalEvent.SUCCEED)

    def abort(self):
        self._update_state(GoalEvent.ABORT)

    def canceled(self):
        self._update_state(GoalEvent.CANCELED)

    def destroy(self):
        """Forgets the goal's pending steps (the goal itself stays until it ends)."""
        self._server._node.destroy_guard_condition(self._guard)

    def _update_state(self, event):
        if event == GoalEvent.CANCEL_GOAL:
            raise GoalTransitionError(
                "a goal becomes canceling when its server accepts a client's cancel request "
                "(the cancel callback returns CancelResponse.ACCEPT), not by a call")
        if event == GoalEvent.EXECUTE:
            refused = self._core.execute()
        else:
            refused = self._core.end(_EVENT_STATUS[event])
        if refused is not None:
            raise GoalTransitionError(
                f"goal {goal_id_text(self.goal_id)} of action "
                f"'{self._server._action_name}' is {_STATUS_NAMES[self.status]}: "
                f"{event.name.lower()} is not a transition it allows (a goal ends once; "
                "canceled() needs an accepted cancel request)")

    def _abort_if_active(self):
        try:
            self._update_state(GoalEvent.ABORT)
            return True
        except GoalTransitionError:
            return False

    def _schedule(self, step):
        self._steps.append(step)
        self._guard.trigger()

    def _next_step(self):
        try:
            step = self._steps.popleft()
        except IndexError:
            return None
        return step()

    def __repr__(self):
        return (f"<ServerGoalHandle {goal_id_text(self.goal_id)} "
                f"{_STATUS_NAMES[self.status]}>")


class ActionServer:
    """rclpy's ``ActionServer``: ``execute_callback(goal_handle)`` returns the result (an
    ``async def`` one may await futures and sleeps); ``goal_callback(goal)`` and
    ``cancel_callback(goal_handle)`` decide (either may be ``async def``);
    ``handle_accepted_callback(goal_handle)`` starts or defers ``goal_handle.execute()``.

    The QoS profile arguments are accepted as rclpy's are; the entities use rcl_action's
    QoS (what rclpy's defaults are), as kairos-action's Rust servers do."""

    def __init__(self, node, action_type, action_name, execute_callback, *,
                 callback_group=None, goal_callback=default_goal_callback,
                 handle_accepted_callback=default_handle_accepted_callback,
                 cancel_callback=default_cancel_callback, goal_service_qos_profile=None,
                 result_service_qos_profile=None, cancel_service_qos_profile=None,
                 feedback_pub_qos_profile=None, status_pub_qos_profile=None,
                 result_timeout=900):
        self._node = node
        self._action_type = action_type
        self._action_name = action_name
        self._execute_callback = execute_callback
        self._goal_callback = goal_callback
        self._handle_accepted_callback = handle_accepted_callback
        self._cancel_callback = cancel_callback
        self._callback_group = callback_group or node.default_callback_group
        # The Python handles of the goals the Rust server knows, by goal id bytes.
        self._handles = {}
        self._core = node._core.create_action_server(
            action_type, action_name, float(result_timeout), self._decide_goal,
            self._decide_cancel, self._accepted, node._group(callback_group))
        # Ended goals are forgotten result_timeout after their end (the Rust server
        # forgets them whenever it is asked); this timer asks four times per timeout (at
        # most ten times a second), so a result is kept at least its timeout, and at most
        # a quarter of it (or 0.1 s) longer, and the status topic says so.
        self._expire_timer = node.create_timer(
            max(float(result_timeout) / 4.0, 0.1), self._prune,
            callback_group=self._callback_group)
        node._action_servers.append(self)

    @property
    def action_type(self):
        return self._action_type

    @property
    def _goal_handles(self):
        """rclpy's name for the goals the server keeps (running, or ended with their result
        kept), by goal id bytes."""
        return self._prune()

    def get_num_entities(self):
        """The action server's own entities, as rcl_action counts them: three services and
        the timer that forgets expired results."""
        return NumberOfEntities(num_timers=1, num_services=3)

    def register_execute_callback(self, execute_callback):
        self._execute_callback = execute_callback

    def register_goal_callback(self, goal_callback):
        self._goal_callback = goal_callback or default_goal_callback

    def register_cancel_callback(self, cancel_callback):
        self._cancel_callback = cancel_callback or default_cancel_callback

    def register_handle_accepted_callback(self, handle_accepted_callback):
        self._handle_accepted_callback = (handle_accepted_callback
                                          or default_handle_accepted_callback)

    # -- what the Rust server asks ------------------------------------------------------

    async def _decide_goal(self, goal):
        decision = self._goal_callback(goal)
        if inspect.isawaitable(decision):
            decision = await decision
        return decision == GoalResponse.ACCEPT

    async def _decide_cancel(self, goal_id):
        goal = self._handles.get(goal_id)
        if goal is None:
            return False
        decision = self._cancel_callback(goal)
        if inspect.isawaitable(decision):
            decision = await decision
        return decision == CancelResponse.ACCEPT

    def _accepted(self, core):
        goal = ServerGoalHandle(self, core)
        self._handles[core.goal_id] = goal
        goal._schedule(lambda: self._handle_accepted_callback(goal))

    # -- execution ----------------------------------------------------------------------

    def _execute_goal(self, execute_callback, goal):
        """Runs a goal's execute callback: a plain one here, a coroutine by returning it
        to the guard condition's task, which drives it."""
        try:
            returned = execute_callback(goal)
        except Exception as error:  # noqa: BLE001 - the goal must end, and it is logged
            return self._finish(goal, None, error)
        if inspect.isawaitable(returned):
            return self._execute_coroutine(goal, returned)
        return self._finish(goal, returned, None)

    async def _execute_coroutine(self, goal, coroutine):
        try:
            result = await coroutine
        except Exception as error:  # noqa: BLE001 - the goal must end, and it is logged
            return self._finish(goal, None, error)
        return self._finish(goal, result, None)

    def _finish(self, goal, result, error):
        logger = self._node.get_logger()
        name = goal_id_text(goal.goal_id)
        if error is not None:
            logger.error(f"action '{self._action_name}': the execute callback of goal {name} "
                         f"raised {type(error).__name__}: {error}; the goal is aborted")
            goal._abort_if_active()
            result = None
        elif goal.is_active:
            logger.warning(f"action '{self._action_name}': the execute callback of goal {name} "
                           "returned without succeed(), abort() or canceled(); the goal is "
                           "aborted")
            goal._abort_if_active()
        try:
            goal._core.send_result(result)
        except TypeError as wrong:
            logger.error(f"action '{self._action_name}': the execute callback of goal {name} "
                         f"returned what is not its Result ({wrong}); the default result is "
                         "sent")
            goal._core.send_result(None)
        goal.destroy()
        return None

    # -- results ------------------------------------------------------------------------

    def _prune(self):
        """Forgets the handles of goals whose result was kept for ``result_timeout``
        seconds (the Rust server forgets the goals); the goals kept, by id bytes."""
        # Only handles made before the Rust server was asked can have expired: a goal
        # accepted meanwhile is in the table, but not yet in what it answered.
        before = list(self._handles)
        known = set(self._core.goal_ids())
        for key in before:
            if key not in known:
                self._handles.pop(key, None)
        return dict(self._handles)

    def destroy(self):
        """Removes the server's services and topics; goals still running are aborted, and
        the results they leave go to nobody. The node's ``destroy_node`` calls it."""
        if self not in self._node._action_servers:
            return
        self._node._action_servers.remove(self)
        for goal in list(self._handles.values()):
            goal._abort_if_active()
            goal._core.send_result(None)
            goal.destroy()
        self._handles = {}
        self._core.destroy()
        self._node.destroy_timer(self._expire_timer)
