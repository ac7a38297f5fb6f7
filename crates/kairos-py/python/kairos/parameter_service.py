"""rclpy's ``ParameterService``: the six ROS 2 parameter services of a node
(``~/describe_parameters``, ``~/get_parameters``, ``~/get_parameter_types``,
``~/list_parameters``, ``~/set_parameters``, ``~/set_parameters_atomically``), so
``ros2 param`` and ``kairos param`` read and set a Python node's parameters.

A request naming an undeclared parameter gets an empty answer (as rclpy's); a set of an
undeclared parameter is a refused result with the reason, never an exception in the
executor. Two nodes of one name in a process both serve them, as in ROS 2; a request
reaches the older node (kairos gives each request to the oldest server alive).
"""

import weakref

from kairos.exceptions import ParameterNotDeclaredException, ParameterUninitializedException
from kairos.parameter import Parameter
from kairos.qos import qos_profile_parameters
from kairos.rcl_interfaces.msg import ListParametersResult, SetParametersResult
from kairos.rcl_interfaces.srv import (
    DescribeParameters,
    GetParameters,
    GetParameterTypes,
    ListParameters,
    SetParameters,
    SetParametersAtomically,
)


class ParameterService:
    def __init__(self, node):
        self._node_weak_ref = weakref.ref(node)
        name = node.get_name()
        for srv_type, suffix, callback in (
                (DescribeParameters, "describe_parameters", self._describe),
                (GetParameters, "get_parameters", self._get),
                (GetParameterTypes, "get_parameter_types", self._get_types),
                (ListParameters, "list_parameters", self._list),
                (SetParameters, "set_parameters", self._set),
                (SetParametersAtomically, "set_parameters_atomically", self._set_atomically)):
            node.create_service(srv_type, f"{name}/{suffix}", callback,
                                qos_profile=qos_profile_parameters)

    def _node(self):
        node = self._node_weak_ref()
        if node is None:
            raise ReferenceError("the node of these parameter services was destroyed")
        return node

    def _describe(self, request, response):
        try:
            response.descriptors = self._node().describe_parameters(list(request.names))
        except ParameterNotDeclaredException:
            response.descriptors = []
        return response

    def _get(self, request, response):
        try:
            parameters = self._node().get_parameters(list(request.names))
            response.values = [p.get_parameter_value() for p in parameters]
        except (ParameterNotDeclaredException, ParameterUninitializedException):
            response.values = []
        return response

    def _get_types(self, request, response):
        try:
            response.types = [int(t) for t in
                              self._node().get_parameter_types(list(request.names))]
        except ParameterNotDeclaredException:
            response.types = []
        return response

    def _list(self, request, response):
        try:
            response.result = self._node().list_parameters(list(request.prefixes),
                                                           request.depth)
        except (TypeError, ValueError):
            response.result = ListParametersResult()
        return response

    def _set(self, request, response):
        node = self._node()
        response.results = [self._try_set(node, [Parameter.from_parameter_msg(p)])
                            for p in request.parameters]
        return response

    def _set_atomically(self, request, response):
        response.result = self._try_set(
            self._node(), [Parameter.from_parameter_msg(p) for p in request.parameters])
        return response

    @staticmethod
    def _try_set(node, parameters):
        try:
            return node.set_parameters_atomically(parameters)
        except ParameterNotDeclaredException as e:
            return SetParametersResult(successful=False, reason=str(e))
