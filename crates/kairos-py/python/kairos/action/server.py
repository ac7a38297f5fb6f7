"""The action server: takes goals, answers cancel requests, runs accepted goals on the
executor, publishes feedback and status, and hands each goal's result to every client
that asks for it.

Ground rules:

- The goal table's lock is never held while user code runs (goal, cancel, accepted and
  execute callbacks), so a callback may call back into the server.
- ``send_goal`` and ``cancel_goal`` run in the server's callback group; ``get_result``
  runs in a reentrant group of its own and awaits the goal's result without holding a
  worker, so any number of clients can wait for results while goals execute.
- Each goal has a guard condition in the server's group; its steps (the accepted
  callback, then the execution ``execute()`` asks for) run there, after the goal's
  response is on its way, as rclpy runs them after answering.
- A goal ends once. Its result goes to every waiting ``get_result`` and stays for
  ``result_timeout`` seconds after the end for clients that ask later.
"""

import collections
import enum
import inspect
import threading
import time

from kairos import _kairos
from kairos.action_msgs.msg import GoalInfo, GoalStatus, GoalStatusArray
from kairos.callback_groups import ReentrantCallbackGroup
from kairos.qos import DurabilityPolicy, QoSProfile
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

#: rcl_action's QoS of the status topic: the latest status, kept for late joiners.
STATUS_QOS = QoSProfile(depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL)


def goal_id_text(goal_id):
    """A goal id (``unique_identifier_msgs/UUID``) as the canonical UUID text."""
    return _kairos.goal_id_text(bytes(goal_id.uuid))


def trace_goal(handle, goal_id, event, status=0):
    """Records a step of a goal in the trace (``kairos:goal``), as Rust actions do, so
    ``kairos trace goals`` follows goals of Python and Rust servers and clients alike."""
    if _kairos.tracing():
        _kairos.trace_goal(handle, goal_id_text(goal_id), event, int(status))


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
    """One accepted goal, as the server's callbacks see it."""

    def __init__(self, action_server, goal_info, goal_request):
        self._server = action_server
        self._goal_info = goal_info
        self._goal_request = goal_request
        self._status = GoalStatus.STATUS_ACCEPTED
        self._lock = threading.Lock()
        self._result = _kairos.Future()
        self._ended_at = None
        self._steps = collections.deque()
        self._guard = action_server._node.create_guard_condition(
            self._next_step, callback_group=action_server._callback_group, _coroutines=True)

    @property
    def request(self):
        """The goal message the client sent."""
        return self._goal_request

    @property
    def goal_id(self):
        return self._goal_info.goal_id

    @property
    def status(self):
        return self._status

    @property
    def is_active(self):
        return not _kairos.goal_is_terminal(self._status)

    @property
    def is_cancel_requested(self):
        return self._status == GoalStatus.STATUS_CANCELING

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
        if not self.is_active:
            return
        message = self._server._action_type.Impl.FeedbackMessage(
            goal_id=self.goal_id, feedback=feedback)
        trace_goal(self._server._trace, self.goal_id, "feedback", self._status)
        self._server._feedback_publisher.publish(message)

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
        with self._lock:
            to = _EVENT_STATUS[event]
            if not _kairos.goal_can_become(self._status, to):
                raise GoalTransitionError(
                    f"goal {goal_id_text(self.goal_id)} of action "
                    f"'{self._server._action_name}' is {_STATUS_NAMES[self._status]}: "
                    f"{event.name.lower()} is not a transition it allows (a goal ends once; "
                    "canceled() needs an accepted cancel request)")
            self._status = to
        step = {GoalEvent.EXECUTE: "executing", GoalEvent.CANCEL_GOAL: "canceling"}.get(
            event, _STATUS_NAMES[to])
        trace_goal(self._server._trace, self.goal_id, step, to)
        if not self.is_active:
            self._ended_at = time.monotonic()
        self._server._publish_status()

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
                f"{_STATUS_NAMES[self._status]}>")


class ActionServer:
    """rclpy's ``ActionServer``: ``execute_callback(goal_handle)`` returns the result (an
    ``async def`` one may await futures and sleeps); ``goal_callback(goal)`` and
    ``cancel_callback(goal_handle)`` decide; ``handle_accepted_callback(goal_handle)``
    starts or defers ``goal_handle.execute()``."""

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
        self._result_timeout = result_timeout
        self._callback_group = callback_group or node.default_callback_group
        self._goals = {}
        self._lock = threading.Lock()
        impl = action_type.Impl
        entity = f"{action_name}/_action/"
        self._services = [
            node.create_service(impl.SendGoalService, entity + "send_goal", self._send_goal,
                                callback_group=self._callback_group),
            node.create_service(impl.CancelGoalService, entity + "cancel_goal",
                                self._cancel_goal, callback_group=self._callback_group),
            node.create_service(impl.GetResultService, entity + "get_result",
                                self._get_result, callback_group=ReentrantCallbackGroup()),
        ]
        self._feedback_publisher = node.create_publisher(
            impl.FeedbackMessage, entity + "feedback", feedback_pub_qos_profile or 10,
            callback_group=self._callback_group)
        self._status_publisher = node.create_publisher(
            impl.GoalStatusMessage, entity + "status", status_pub_qos_profile or STATUS_QOS,
            callback_group=self._callback_group)
        # Ended goals are forgotten result_timeout after their end, checked four times per
        # timeout (at most ten times a second): a result is kept at least its timeout, and
        # at most a quarter of it (or 0.1 s) longer.
        self._expire_timer = node.create_timer(
            max(float(result_timeout) / 4.0, 0.1), self._prune,
            callback_group=self._callback_group)
        self._destroyed = False
        self._trace = _kairos.trace_action(
            node._core, node.resolve_service_name(action_name), True)

    @property
    def action_type(self):
        return self._action_type

    @property
    def _goal_handles(self):
        """rclpy's name for the goals the server keeps (running, or ended with their result
        kept), by goal id bytes."""
        with self._lock:
            return dict(self._goals)

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

    # -- the three services -----------------------------------------------------------

    async def _send_goal(self, request, response):
        key = bytes(request.goal_id.uuid)
        self._prune()
        with self._lock:
            duplicate = key in self._goals
        if duplicate:
            self._node.get_logger().warning(
                f"action '{self._action_name}': a goal with id {goal_id_text(request.goal_id)} "
                "exists already; the request is rejected (clients must make each goal id new)")
            trace_goal(self._trace, request.goal_id, "rejected")
            response.accepted = False
            return response
        decision = self._goal_callback(request.goal)
        if inspect.isawaitable(decision):
            decision = await decision
        if decision != GoalResponse.ACCEPT:
            trace_goal(self._trace, request.goal_id, "rejected")
            response.accepted = False
            return response
        sec, nanosec = self._node.get_clock().now().seconds_nanoseconds()
        info = GoalInfo(goal_id=request.goal_id)
        info.stamp.sec, info.stamp.nanosec = sec, nanosec
        goal = ServerGoalHandle(self, info, request.goal)
        with self._lock:
            self._goals[key] = goal
        trace_goal(self._trace, request.goal_id, "accepted", goal.status)
        self._publish_status()
        goal._schedule(lambda: self._handle_accepted_callback(goal))
        response.accepted = True
        response.stamp = info.stamp
        return response

    async def _cancel_goal(self, request, response):
        """ROS 2's cancel policy: a zero id and zero stamp is every goal; a stamp adds the
        goals accepted at or before it; an id adds that goal."""
        info = request.goal_info
        key = bytes(info.goal_id.uuid)
        zero_id = not any(key)
        before = (info.stamp.sec, info.stamp.nanosec)
        with self._lock:
            candidates = [
                g for k, g in self._goals.items()
                if (zero_id and before == (0, 0)) or k == key
                or (before != (0, 0)
                    and (g._goal_info.stamp.sec, g._goal_info.stamp.nanosec) <= before)]
        canceling, ended = [], 0
        for goal in candidates:
            if not goal.is_active:
                ended += 1
                continue
            if not goal.is_cancel_requested:
                decision = self._cancel_callback(goal)
                if inspect.isawaitable(decision):
                    decision = await decision
                if decision != CancelResponse.ACCEPT:
                    continue
                try:
                    goal._update_state(GoalEvent.CANCEL_GOAL)
                except GoalTransitionError:
                    continue  # it ended meanwhile
            canceling.append(goal._goal_info)
        cancel = self._action_type.Impl.CancelGoalService.Response
        if canceling:
            response.return_code = cancel.ERROR_NONE
        elif not candidates:
            response.return_code = cancel.ERROR_NONE if zero_id else cancel.ERROR_UNKNOWN_GOAL_ID
        elif ended == len(candidates):
            response.return_code = cancel.ERROR_GOAL_TERMINATED
        else:
            response.return_code = cancel.ERROR_REJECTED
        response.goals_canceling = canceling
        return response

    async def _get_result(self, request, response):
        self._prune()
        with self._lock:
            goal = self._goals.get(bytes(request.goal_id.uuid))
        if goal is None:
            response.status = GoalStatus.STATUS_UNKNOWN
            return response
        status, result = await goal._result
        response.status = status
        response.result = result
        return response

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
        if result is None:
            result = self._action_type.Result()
        goal._result.set_result((goal.status, result))
        goal.destroy()
        return None

    # -- status -------------------------------------------------------------------------

    def _publish_status(self):
        if self._destroyed:
            return
        with self._lock:
            goals = list(self._goals.values())
        array = GoalStatusArray(status_list=[
            GoalStatus(goal_info=g._goal_info, status=g.status) for g in goals])
        self._status_publisher.publish(array)

    def _prune(self):
        """Forgets goals whose result was kept for ``result_timeout`` seconds."""
        now = time.monotonic()
        with self._lock:
            expired = [k for k, g in self._goals.items()
                       if g._ended_at is not None and now - g._ended_at >= self._result_timeout]
            for key in expired:
                goal = self._goals.pop(key)
                trace_goal(self._trace, goal.goal_id, "expired", goal.status)
        if expired:
            self._publish_status()

    def destroy(self):
        """Removes the server's services and topics; goals still running are aborted, and
        the results they leave go to nobody."""
        with self._lock:
            goals = list(self._goals.values())
        for goal in goals:
            goal._abort_if_active()
            goal.destroy()
            if not goal._result.done():
                goal._result.set_result((goal.status, self._action_type.Result()))
        self._destroyed = True
        for service in self._services:
            self._node.destroy_service(service)
        self._node.destroy_publisher(self._feedback_publisher)
        self._node.destroy_publisher(self._status_publisher)
        self._node.destroy_timer(self._expire_timer)
        self._services = []
