"""rclpy's ``ParameterEventHandler``: callbacks for changes of one parameter of one node,
or for every parameter event, from one ``/parameter_events`` subscription.

Callbacks run on the executor that spins the node, newest first, with the handler's
lock held (so adding or removing a callback from a callback of another thread waits for
it, never interleaves).
"""

import itertools
import threading
from collections import defaultdict

from kairos.qos import qos_profile_parameter_events
from kairos.rcl_interfaces.msg import ParameterEvent


class ParameterCallbackHandle:
    def __init__(self, parameter_name, node_name, callback):
        self.parameter_name = parameter_name
        self.node_name = node_name
        self.callback = callback
        self.mutex = threading.Lock()


class ParameterEventCallbackHandle:
    def __init__(self, callback):
        self.callback = callback
        self.mutex = threading.Lock()


class ParameterEventHandler:
    class Callbacks:
        def __init__(self):
            self.parameter_callbacks = defaultdict(list)
            self.event_callbacks = []
            self.mutex = threading.RLock()

        def event_callback(self, event):
            with self.mutex:
                for (name, node), handles in list(self.parameter_callbacks.items()):
                    parameter = ParameterEventHandler.get_parameter_from_event(
                        event, parameter_name=name, node_name=node)
                    if parameter is not None:
                        for handle in list(handles):
                            with handle.mutex:
                                handle.callback(parameter)
                for handle in list(self.event_callbacks):
                    with handle.mutex:
                        handle.callback(event)

        def add_parameter_callback(self, parameter_name, node_name, callback):
            handle = ParameterCallbackHandle(parameter_name, node_name, callback)
            with self.mutex:
                self.parameter_callbacks[(parameter_name, node_name)].insert(0, handle)
            return handle

        def remove_parameter_callback(self, handle):
            key = (handle.parameter_name, handle.node_name)
            with self.mutex:
                handles = self.parameter_callbacks.get(key)
                if not handles or handle not in handles:
                    raise RuntimeError("Callback doesn't exist")
                handles.remove(handle)
                if not handles:
                    del self.parameter_callbacks[key]

        def add_parameter_event_callback(self, callback):
            handle = ParameterEventCallbackHandle(callback)
            with self.mutex:
                self.event_callbacks.insert(0, handle)
            return handle

        def remove_parameter_event_callback(self, handle):
            with self.mutex:
                if handle not in self.event_callbacks:
                    raise RuntimeError("Callback doesn't exist")
                self.event_callbacks.remove(handle)

    def __init__(self, node, qos_profile=qos_profile_parameter_events, callback_group=None,
                 **_):
        self.node = node
        self.qos_profile = qos_profile
        self._callbacks = ParameterEventHandler.Callbacks()
        self.parameter_event_subscription = node.create_subscription(
            ParameterEvent, "/parameter_events", self._callbacks.event_callback,
            qos_profile, callback_group=callback_group)

    def destroy(self):
        self.node.destroy_subscription(self.parameter_event_subscription)

    @staticmethod
    def get_parameter_from_event(event, parameter_name, node_name):
        """The ``rcl_interfaces/msg/Parameter`` of ``parameter_name`` new or changed in
        ``event``, if the event is ``node_name``'s; else None."""
        if event.node != node_name:
            return None
        for parameter in itertools.chain(event.new_parameters, event.changed_parameters):
            if parameter.name == parameter_name:
                return parameter
        return None

    @staticmethod
    def get_parameters_from_event(event):
        yield from itertools.chain(event.new_parameters, event.changed_parameters)

    def add_parameter_callback(self, parameter_name, node_name, callback):
        """``callback(parameter_msg)`` when ``node_name`` (relative names against this
        node's namespace; empty: this node) sets ``parameter_name``."""
        return self._callbacks.add_parameter_callback(
            parameter_name, self._resolve_path(node_name), callback)

    def remove_parameter_callback(self, handle):
        self._callbacks.remove_parameter_callback(handle)

    def add_parameter_event_callback(self, callback):
        return self._callbacks.add_parameter_event_callback(callback)

    def remove_parameter_event_callback(self, handle):
        self._callbacks.remove_parameter_event_callback(handle)

    def _resolve_path(self, node_path=None):
        if not node_path:
            return self.node.get_fully_qualified_name()
        if node_path.startswith("/"):
            return node_path
        namespace = self.node.get_namespace().strip("/")
        return f"/{namespace}/{node_path}" if namespace else f"/{node_path}"
