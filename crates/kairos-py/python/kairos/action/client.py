"""The action client: sends goals, hears their feedback and status, asks for results and
cancels.

Ground rules:

- The client is kairos-action's ``ActionClient`` (``_kairos.ActionClientCore``), made for
  the action's type as topics and services are: the goal protocol, the status and
  feedback routing and the goal trace are the Rust client's, shared with Rust programs.
- A goal's feedback callback is registered before its request leaves, so no feedback
  the server sends after accepting it is missed. As in rclpy it stays until the goal's
  result comes, even if its :class:`ClientGoalHandle` is dropped before (or, for a
  dropped handle, until the status topic says the goal ended). Feedback and the result
  travel apart, so feedback sent just before the result may come after it: it is then
  counted in ``unmatched_feedback``, as is feedback for no goal this client follows;
  never dropped silently.
- The ``*_async`` futures complete from the client's done callbacks, which the executor
  runs in the client's callback group: they complete under ``spin``, ``spin_once``,
  ``spin_until_future_complete`` and ``await`` alike.
- The blocking ``send_goal``, ``get_result`` and ``cancel_goal`` are kairos service calls:
  they raise ``WouldDeadlock`` at once where the answer could never come.
"""

import uuid

from kairos import _kairos
from kairos.builtin_interfaces.msg import Time
from kairos.action_msgs.msg import GoalStatus
from kairos.unique_identifier_msgs.msg import UUID
from kairos.waitable import NumberOfEntities

#: How long a blocking call without a timeout waits: until shutdown or cancel.
_FOREVER = float("inf")


class ClientGoalHandle:
    """A goal a client sent, and what the server answered."""

    def __init__(self, action_client, goal_id, core):
        self._client = action_client
        self._goal_id = goal_id
        #: The Rust goal (``_kairos.ActionClientGoal``); None when the server rejected it.
        self._core = core

    @property
    def goal_id(self):
        return self._goal_id

    @property
    def stamp(self):
        if self._core is None:
            return Time()
        sec, nanosec = self._core.stamp
        return Time(sec=sec, nanosec=nanosec)

    @property
    def accepted(self):
        return self._core is not None

    @property
    def status(self):
        return GoalStatus.STATUS_UNKNOWN if self._core is None else self._core.status

    def _accepted_core(self, what):
        if self._core is None:
            raise RuntimeError(f"cannot {what}: the server rejected this goal")
        return self._core

    def cancel_goal(self):
        """Asks the server to cancel the goal and waits for its answer
        (``CancelGoal.Response``)."""
        return self._accepted_core("cancel the goal").cancel(_FOREVER)

    def cancel_goal_async(self):
        """A future of the server's answer to a cancel request (``CancelGoal.Response``)."""
        return self._accepted_core("cancel the goal").cancel_async()

    def get_result(self):
        """Waits for the goal's result (``GetResult.Response``: ``status`` and ``result``)."""
        return self._result_within(_FOREVER)

    def _result_within(self, timeout_sec):
        """:meth:`get_result`, raising ``TimeoutError`` after ``timeout_sec``."""
        return self._accepted_core("get the result").get_result(timeout_sec)

    def get_result_async(self):
        """A future of the goal's ``GetResult.Response`` (``status`` and ``result``)."""
        return self._accepted_core("get the result").get_result_async()

    def __repr__(self):
        return (f"<ClientGoalHandle {bytes(self._goal_id.uuid).hex()} "
                f"accepted={self.accepted} status={self.status}>")


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
    """rclpy's ``ActionClient`` for the action ``action_name`` of type ``action_type``.

    The QoS profile arguments are accepted and not applied: the services and topics use
    rcl_action's QoS (rclpy's defaults), as the Rust client does."""

    def __init__(self, node, action_type, action_name, *, callback_group=None,
                 goal_service_qos_profile=None, result_service_qos_profile=None,
                 cancel_service_qos_profile=None, feedback_sub_qos_profile=None,
                 status_sub_qos_profile=None):
        self._node = node
        self._action_type = action_type
        self._action_name = action_name
        self._callback_group = callback_group or node.default_callback_group
        self._core = node._core.create_action_client(
            action_type, action_name, node._group(callback_group))
        node._action_clients.append(self)

    @property
    def action_type(self):
        return self._action_type

    @property
    def unmatched_feedback(self):
        """Feedback messages for goals this client does not follow (any more)."""
        return self._core.unmatched_feedback

    def get_num_entities(self):
        """The action client's own entities, as rcl_action counts them: three service
        clients and two subscriptions (feedback and status)."""
        return NumberOfEntities(num_subs=2, num_clients=3)

    # -- the server -----------------------------------------------------------------------

    def server_is_ready(self):
        """True when the action's three services have a server."""
        return self._core.server_is_ready()

    def wait_for_server(self, timeout_sec=None):
        """Waits until the server is ready; False at ``timeout_sec`` (None: no deadline,
        but shutdown ends the wait)."""
        return self._core.wait_for_server(_FOREVER if timeout_sec is None else timeout_sec)

    # -- goals ----------------------------------------------------------------------------

    @staticmethod
    def _goal_id(goal_uuid):
        return goal_uuid if goal_uuid is not None else UUID(uuid=list(uuid.uuid4().bytes))

    def send_goal_async(self, goal, feedback_callback=None, goal_uuid=None):
        """Sends ``goal``; a future of its :class:`ClientGoalHandle` (``accepted`` says
        whether the server took it). ``feedback_callback(feedback_message)`` gets its
        feedback."""
        goal_id = self._goal_id(goal_uuid)
        future = self._core.send_goal_async(goal, bytes(goal_id.uuid), feedback_callback)
        return _then(future, lambda core: ClientGoalHandle(self, goal_id, core))

    def send_goal(self, goal, feedback_callback=None, goal_uuid=None):
        """Sends ``goal``, waits until it is accepted, then for its result: the
        ``GetResult.Response``, or None when the server rejected it."""
        handle = self._sent_within(goal, _FOREVER, feedback_callback, goal_uuid)
        if not handle.accepted:
            return None
        return handle.get_result()

    def _sent_within(self, goal, timeout_sec, feedback_callback=None, goal_uuid=None):
        """Sends ``goal`` and waits for the server's answer: its
        :class:`ClientGoalHandle`; ``TimeoutError`` after ``timeout_sec``."""
        goal_id = self._goal_id(goal_uuid)
        core = self._core.send_goal(goal, bytes(goal_id.uuid), feedback_callback, timeout_sec)
        return ClientGoalHandle(self, goal_id, core)

    def destroy(self):
        """Takes the client's services and topics off the graph. The node's
        ``destroy_node`` calls it."""
        if self in self._node._action_clients:
            self._node._action_clients.remove(self)
        self._core.destroy()
