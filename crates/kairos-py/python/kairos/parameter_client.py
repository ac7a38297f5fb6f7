"""rclpy's ``AsyncParameterClient``: another node's parameters through its six parameter
services (any ROS 2 node's, kairos's or not), each call returning a future.

``wait_for_services`` waits on the graph (kairos's ``wait_for_service``, woken by graph
changes, never early, ended by shutdown) instead of polling every 0.25 s as rclpy does.
"""

import time

from kairos.parameter import Parameter, parameter_dict_from_yaml_file
from kairos.qos import qos_profile_parameter_events, qos_profile_services_default
from kairos.rcl_interfaces.msg import ParameterEvent
from kairos.rcl_interfaces.srv import (
    DescribeParameters,
    GetParameters,
    GetParameterTypes,
    ListParameters,
    SetParameters,
    SetParametersAtomically,
)


def _messages(parameters):
    return [p.to_parameter_msg() if isinstance(p, Parameter) else p for p in parameters]


class AsyncParameterClient:
    def __init__(self, node, remote_node_name, qos_profile=qos_profile_services_default,
                 callback_group=None):
        self.remote_node_name = remote_node_name
        self.node = node

        def client(srv_type, suffix):
            return node.create_client(srv_type, f"{remote_node_name}/{suffix}",
                                      qos_profile=qos_profile,
                                      callback_group=callback_group)

        self._get_parameter_client = client(GetParameters, "get_parameters")
        self._list_parameter_client = client(ListParameters, "list_parameters")
        self._set_parameter_client = client(SetParameters, "set_parameters")
        self._get_parameter_types_client = client(GetParameterTypes, "get_parameter_types")
        self._describe_parameters_client = client(DescribeParameters, "describe_parameters")
        self._set_parameters_atomically_client = client(SetParametersAtomically,
                                                        "set_parameters_atomically")

    def _clients(self):
        return (self._list_parameter_client, self._set_parameter_client,
                self._get_parameter_client, self._get_parameter_types_client,
                self._describe_parameters_client, self._set_parameters_atomically_client)

    def services_are_ready(self):
        return all(c.service_is_ready() for c in self._clients())

    def wait_for_services(self, timeout_sec=None):
        """Whether all six services are there within ``timeout_sec`` (None: no limit)."""
        deadline = None if timeout_sec is None else time.monotonic() + max(0.0, timeout_sec)
        for client in self._clients():
            left = None if deadline is None else max(0.0, deadline - time.monotonic())
            if not client.wait_for_service(timeout_sec=left):
                return False
        return True

    @staticmethod
    def _call(client, request, callback):
        future = client.call_async(request)
        if callback is not None:
            future.add_done_callback(callback)
        return future

    def list_parameters(self, prefixes=None, depth=None, callback=None):
        request = ListParameters.Request()
        if prefixes:
            request.prefixes = list(prefixes)
        if depth:
            request.depth = depth
        return self._call(self._list_parameter_client, request, callback)

    def get_parameters(self, names, callback=None):
        return self._call(self._get_parameter_client,
                          GetParameters.Request(names=list(names)), callback)

    def set_parameters(self, parameters, callback=None):
        return self._call(self._set_parameter_client,
                          SetParameters.Request(parameters=_messages(parameters)), callback)

    def describe_parameters(self, names, callback=None):
        return self._call(self._describe_parameters_client,
                          DescribeParameters.Request(names=list(names)), callback)

    def get_parameter_types(self, names, callback=None):
        return self._call(self._get_parameter_types_client,
                          GetParameterTypes.Request(names=list(names)), callback)

    def set_parameters_atomically(self, parameters, callback=None):
        return self._call(self._set_parameters_atomically_client,
                          SetParametersAtomically.Request(parameters=_messages(parameters)),
                          callback)

    def delete_parameters(self, names, callback=None):
        """Sets each of ``names`` to NOT_SET, which undeclares it where the remote node
        allows undeclared parameters (refused otherwise, in the response)."""
        return self.set_parameters([Parameter(name) for name in names], callback)

    def load_parameter_file(self, parameter_file, use_wildcard=False, callback=None):
        values = parameter_dict_from_yaml_file(parameter_file, use_wildcard)
        return self.set_parameters(list(values.values()), callback=callback)

    def load_parameter_file_atomically(self, parameter_file, use_wildcard=False,
                                       callback=None):
        values = parameter_dict_from_yaml_file(parameter_file, use_wildcard)
        return self.set_parameters_atomically(list(values.values()), callback=callback)

    def on_parameter_event(self, callback, qos_profile=qos_profile_parameter_events, *,
                           callback_group=None, **_):
        """A subscription to ``/parameter_events`` (every node's, not only the remote's)."""
        return self.node.create_subscription(ParameterEvent, "/parameter_events", callback,
                                             qos_profile, callback_group=callback_group)
