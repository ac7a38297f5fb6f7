"""The action client: sends goals, hears their feedback and status, asks for results and
cancels.

Ground rules:

- A goal's feedback callback is registered before its request leaves, so no feedback
  the server sends after accepting it is missed. As in rclpy it stays until the goal's
  result comes, even if its :class:`ClientGoalHandle` is dropped before (or, for a
  dropped handle, until the status topic says the goal ended; a status that comes before
  the goal's response does not count, the handle is not made yet). Feedback and the result
  travel apart, so feedback sent just before the result may come after it: it is then
  counted in ``unmatched_feedback``, as is feedback for no goal this client follows;
  never dropped silently.
- The ``*_async`` futures complete from the client's done callbacks, which the executor
  runs in the client's callback group: they complete under ``spin``, ``spin_once``,
  ``spin_until_future_complete`` and ``await`` alike.
- The blocking ``send_goal``, ``get_result`` and ``cancel_goal`` are kairos service calls:
  they raise ``WouldDeadlock`` at once where the answer could never come.
"""

import threading
import time
import uuid
import weakref

from kairos import _kairos
from kairos.action.server import goal_id_text
from kairos.action_msgs.msg import GoalInfo, GoalStatus
from kairos.qos import DurabilityPolicy, QoSProfile
from kairos.unique_identifier_msgs.msg import UUID
from kairos.waitable import NumberOfEntities

#: rcl_action's QoS of the status topic: the latest status, kept for late joiners.
STATUS_QOS = QoSProfile(depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL)


def trace_goal(handle, goal_id, event, status=0):
    """Records a step of a goal in the trace (``kairos:goal``), as Rust clients do (Python
    servers are kairos-action's and trace themselves), so ``kairos trace goals`` joins
    both sides."""
    if _kairos.tracing():
        _kairos.trace_goal(handle, goal_id_text(goal_id), event, int(status))


_ENDED = (GoalStatus.STATUS_SUCCEEDED, GoalStatus.STATUS_CANCELED, GoalStatus.STATUS_ABORTED)


class ClientGoalHandle:
    """A goal a client sent, and what the server answered."""

    def __init__(self, action_client, goal_id, goal_response):
        self._client = action_client
        self._goal_id = goal_id
        self._goal_response = goal_response
        self._status = GoalStatus.STATUS_UNKNOWN

    @property
    def goal_id(self):
        return self._goal_id

    @property
    def stamp(self):
        return self._goal_response.stamp

    @property
    def accepted(self):
        return self._goal_response.accepted

    @property
    def status(self):
        return self._status

    def _check_accepted(self, what):
        if not self.accepted:
            raise RuntimeError(f"cannot {what}: the server rejected this goal")

    def cancel_goal(self):
        """Asks the server to cancel the goal and waits for its answer."""
        self._check_accepted("cancel the goal")
        return self._client._cancel_goal(self)

    def cancel_goal_async(self):
        """A future of the server's answer to a cancel request (``CancelGoal.Response``)."""
        self._check_accepted("cancel the goal")
        return self._client._cancel_goal_async(self)

    def get_result(self):
        """Waits for the goal's result (``GetResult.Response``: ``status`` and ``result``)."""
        self._check_accepted("get the result")
        return self._client._get_result(self)

    def get_result_async(self):
        """A future of the goal's ``GetResult.Response`` (``status`` and ``result``)."""
        self._check_accepted("get the result")
        return self._client._get_result_async(self)

    def __repr__(self):
        return (f"<ClientGoalHandle {bytes(self._goal_id.uuid).hex()} "
                f"accepted={self.accepted} status={self._status}>")


def _then(future, on_value):
    """A future of ``on_value(result)`` once ``future`` completes (its exception, if any,
    passes through)."""
    out = _kairos.Future()

    def done(completed):
        try:
            value = completed.result()
        except BaseException as error:  # noqa: BLE001 - handed to the waiter
            out.set_exception(error)
            return
        out.set_result(on_value(value))

    future.add_done_callback(done)
    return out


class ActionClient:
    """rclpy's ``ActionClient`` for the action ``action_name`` of type ``action_type``."""

    def __init__(self, node, action_type, action_name, *, callback_group=None,
                 goal_service_qos_profile=None, result_service_qos_profile=None,
                 cancel_service_qos_profile=None, feedback_sub_qos_profile=None,
                 status_sub_qos_profile=None):
        self._node = node
        self._action_type = action_type
        self._action_name = action_name
        self._callback_group = callback_group or node.default_callback_group
        impl = action_type.Impl
        entity = f"{action_name}/_action/"
        group = self._callback_group
        self._send_goal_client = node.create_client(
            impl.SendGoalService, entity + "send_goal", callback_group=group)
        self._cancel_client = node.create_client(
            impl.CancelGoalService, entity + "cancel_goal", callback_group=group)
        self._result_client = node.create_client(
            impl.GetResultService, entity + "get_result", callback_group=group)
        self._clients = [self._send_goal_client, self._cancel_client, self._result_client]
        self._lock = threading.Lock()
        self._feedback_callbacks = {}
        self._goal_handles = weakref.WeakValueDictionary()
        #: Accepted goals whose result has not come: their feedback callbacks live on.
        self._awaiting_result = set()
        #: Feedback messages for goals this client does not follow (any more).
        self.unmatched_feedback = 0
        self._subscriptions = [
            node.create_subscription(impl.FeedbackMessage, entity + "feedback",
                                     self._on_feedback, feedback_sub_qos_profile or 10,
                                     callback_group=group),
            node.create_subscription(impl.GoalStatusMessage, entity + "status",
                                     self._on_status, status_sub_qos_profile or STATUS_QOS,
                                     callback_group=group),
        ]
        self._trace = _kairos.trace_action(
            node._core, node.resolve_service_name(action_name), False)

    @property
    def action_type(self):
        return self._action_type

    def get_num_entities(self):
        """The action client's own entities, as rcl_action counts them: three service
        clients and two subscriptions (feedback and status)."""
        return NumberOfEntities(num_subs=2, num_clients=3)

    # -- the server -----------------------------------------------------------------------

    def server_is_ready(self):
        """True when the action's three services have a server."""
        return all(client.service_is_ready() for client in self._clients)

    def wait_for_server(self, timeout_sec=None):
        """Waits until the server is ready; False at ``timeout_sec`` (None: no deadline,
        but shutdown ends the wait)."""
        deadline = None if timeout_sec is None else time.monotonic() + timeout_sec
        for client in self._clients:
            left = None if deadline is None else max(0.0, deadline - time.monotonic())
            if not client.wait_for_service(timeout_sec=left):
                return False
        return True

    # -- goals ----------------------------------------------------------------------------

    def _request(self, goal, feedback_callback, goal_uuid):
        goal_id = goal_uuid if goal_uuid is not None else UUID(uuid=list(uuid.uuid4().bytes))
        if feedback_callback is not None:
            with self._lock:
                self._feedback_callbacks[bytes(goal_id.uuid)] = feedback_callback
        trace_goal(self._trace, goal_id, "sent")
        return goal_id, self._action_type.Impl.SendGoalService.Request(goal_id=goal_id,
                                                                         goal=goal)

    def _handle(self, goal_id, response):
        key = bytes(goal_id.uuid)
        handle = ClientGoalHandle(self, goal_id, response)
        if response.accepted:
            trace_goal(self._trace, goal_id, "accepted", GoalStatus.STATUS_ACCEPTED)
        else:
            trace_goal(self._trace, goal_id, "rejected")
        with self._lock:
            if response.accepted:
                self._goal_handles[key] = handle
                self._awaiting_result.add(key)
            else:
                self._feedback_callbacks.pop(key, None)
        return handle

    def send_goal_async(self, goal, feedback_callback=None, goal_uuid=None):
        """Sends ``goal``; a future of its :class:`ClientGoalHandle` (``accepted`` says
        whether the server took it). ``feedback_callback(feedback_message)`` gets its
        feedback."""
        goal_id, request = self._request(goal, feedback_callback, goal_uuid)
        return _then(self._send_goal_client.call_async(request),
                     lambda response: self._handle(goal_id, response))

    def send_goal(self, goal, feedback_callback=None, goal_uuid=None):
        """Sends ``goal``, waits until it is accepted, then for its result: the
        ``GetResult.Response``, or None when the server rejected it."""
        goal_id, request = self._request(goal, feedback_callback, goal_uuid)
        handle = self._handle(goal_id, self._send_goal_client.call(request))
        if not handle.accepted:
            return None
        return handle.get_result()

    def _result_request(self, goal_handle):
        return self._action_type.Impl.GetResultService.Request(goal_id=goal_handle.goal_id)

    def _on_result(self, goal_handle, response):
        # As rclpy: a goal's feedback callback lives until its result came (its handle
        # may be dropped before); feedback that comes later is counted, not delivered.
        key = bytes(goal_handle.goal_id.uuid)
        with self._lock:
            self._feedback_callbacks.pop(key, None)
            self._awaiting_result.discard(key)
        goal_handle._status = response.status
        trace_goal(self._trace, goal_handle.goal_id, "result", response.status)
        return response

    def _get_result_async(self, goal_handle):
        future = self._result_client.call_async(self._result_request(goal_handle))
        return _then(future, lambda response: self._on_result(goal_handle, response))

    def _get_result(self, goal_handle):
        response = self._result_client.call(self._result_request(goal_handle))
        return self._on_result(goal_handle, response)

    def _cancel_request(self, goal_handle):
        return self._action_type.Impl.CancelGoalService.Request(
            goal_info=GoalInfo(goal_id=goal_handle.goal_id))

    def _cancel_sent(self, goal_handle):
        trace_goal(self._trace, goal_handle.goal_id, "cancel_sent", goal_handle.status)
        return self._cancel_request(goal_handle)

    def _cancel_answered(self, goal_handle, response):
        canceling = any(bytes(info.goal_id.uuid) == bytes(goal_handle.goal_id.uuid)
                        for info in response.goals_canceling)
        if response.return_code == 0 and canceling:
            trace_goal(self._trace, goal_handle.goal_id, "canceling",
                       GoalStatus.STATUS_CANCELING)
        else:
            trace_goal(self._trace, goal_handle.goal_id, "cancel_refused", goal_handle.status)
        return response

    def _cancel_goal_async(self, goal_handle):
        future = self._cancel_client.call_async(self._cancel_sent(goal_handle))
        return _then(future, lambda response: self._cancel_answered(goal_handle, response))

    def _cancel_goal(self, goal_handle):
        response = self._cancel_client.call(self._cancel_sent(goal_handle))
        return self._cancel_answered(goal_handle, response)

    # -- feedback and status --------------------------------------------------------------

    def _on_feedback(self, message):
        key = bytes(message.goal_id.uuid)
        with self._lock:
            callback = self._feedback_callbacks.get(key)
            followed = self._goal_handles.get(key)
            if callback is None and (followed is None or followed.status in _ENDED):
                self.unmatched_feedback += 1
        if callback is not None or followed is not None:
            status = followed.status if followed is not None else 0
            trace_goal(self._trace, message.goal_id, "feedback", status)
        if callback is not None:
            callback(message)

    def _on_status(self, message):
        with self._lock:
            for status in message.status_list:
                key = bytes(status.goal_info.goal_id.uuid)
                handle = self._goal_handles.get(key)
                if handle is not None:
                    handle._status = status.status
                elif status.status in _ENDED and key in self._awaiting_result:
                    # Its handle was made and dropped, and the goal ended: no result will
                    # be asked for. (A status can come before the goal's response: a goal
                    # with no handle yet keeps its callback.)
                    self._feedback_callbacks.pop(key, None)
                    self._awaiting_result.discard(key)

    def destroy(self):
        for client in self._clients:
            self._node.destroy_client(client)
        for subscription in self._subscriptions:
            self._node.destroy_subscription(subscription)
        self._clients, self._subscriptions = [], []
