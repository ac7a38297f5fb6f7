"""A node's parameters with rclpy's rules: what ``Node`` does with ``declare_parameter``,
``set_parameters`` and the rest.

What holds:
- A parameter is declared before it is read or set, unless the node allows undeclared
  parameters (then a set declares it, dynamically typed, and a set to NOT_SET removes it).
- A declared parameter is statically typed by its default value or the type given, unless
  its descriptor says ``dynamic_typing``; a set of another type is refused.
- A set goes through, in order: the pre-set callbacks (which may change the list), the
  descriptor checks (read-only, type, integer and floating-point ranges), the on-set
  callbacks (any may refuse); then it is stored, published on ``/parameter_events`` and
  told to the post-set callbacks. A refused set changes nothing.
- ``set_parameters_atomically`` applies all or none; ``set_parameters`` one at a time.
- ``use_sim_time`` is declared on every node (a bool, ``false`` unless overridden) and a
  set that is accepted moves the node's clock, timers and sleeps to simulation time (or
  back). rclpy switches in an on-set callback, before the set is known to succeed; here a
  refused set leaves the clock alone.
"""

import math
import warnings

from kairos.exceptions import (
    InvalidParameterTypeException,
    InvalidParameterValueException,
    ParameterAlreadyDeclaredException,
    ParameterImmutableException,
    ParameterNotDeclaredException,
    ParameterUninitializedException,
)
from kairos.parameter import PARAMETER_SEPARATOR_STRING, Parameter
from kairos.rcl_interfaces.msg import (
    ListParametersResult,
    ParameterDescriptor,
    ParameterEvent,
    ParameterType,
    ParameterValue,
    SetParametersResult,
)
from kairos.rcl_interfaces.srv import ListParameters
from kairos.time_source import USE_SIM_TIME_NAME
from kairos.validate_parameter_name import validate_parameter_name

DEPTH_RECURSIVE = ListParameters.Request.DEPTH_RECURSIVE


def _refused(reason):
    return SetParametersResult(successful=False, reason=reason)


def _accepted():
    return SetParametersResult(successful=True)


class ParametersMixin:
    """The parameter half of ``Node`` (see the module's rules)."""

    # Relative tolerance of floating-point range bounds and steps, as rclpy's.
    PARAM_REL_TOL = 1e-6

    def _init_parameters(self, overrides, allow_undeclared, declare_overrides):
        self._parameters = {}
        self._descriptors = {}
        self._parameter_overrides = dict(overrides)
        self._allow_undeclared_parameters = allow_undeclared
        self._pre_set_parameters_callbacks = []
        self._on_set_parameters_callbacks = []
        self._post_set_parameters_callbacks = []
        if declare_overrides:
            self.declare_parameters(
                "", [(name, p.value, ParameterDescriptor())
                     for name, p in self._parameter_overrides.items()],
                ignore_override=True)
        if not self.has_parameter(USE_SIM_TIME_NAME):
            self.declare_parameter(USE_SIM_TIME_NAME, False)
        use_sim_time = self._parameters[USE_SIM_TIME_NAME]
        if use_sim_time.type_ == Parameter.Type.BOOL and use_sim_time.value:
            self._core.set_use_sim_time(True)

    # -- declare -----------------------------------------------------------------

    def declare_parameter(self, name, value=None, descriptor=None, ignore_override=False):
        """Declares one parameter: with a default value, a ``Parameter.Type`` (statically
        typed, not yet set) or a descriptor; the program's overrides win unless
        ``ignore_override``."""
        if value is None and descriptor is None:
            entry = (name,)
        else:
            entry = (name, value, ParameterDescriptor() if descriptor is None else descriptor)
        return self.declare_parameters("", [entry], ignore_override)[0]

    def declare_parameters(self, namespace, parameters, ignore_override=False):
        """Declares ``(name,)``, ``(name, value_or_type)`` or ``(name, value_or_type,
        descriptor)`` entries under ``namespace``; all of them or none."""
        declared, descriptors = [], {}
        for index, entry in enumerate(parameters):
            if not 1 <= len(entry) <= 3:
                raise TypeError(f"Invalid parameter tuple length at index {index} in "
                                f"parameters list: {entry}; expecting length between 1 and 3")
            name = entry[0]
            if not isinstance(name, str):
                raise TypeError(f"First element {name} at index {index} in parameters list "
                                "is not a str.")
            if namespace:
                name = f"{namespace}{PARAMETER_SEPARATOR_STRING}{name}"
            validate_parameter_name(name)
            second = entry[1] if len(entry) > 1 else None
            descriptor = entry[2] if len(entry) > 2 else ParameterDescriptor()
            if not isinstance(descriptor, ParameterDescriptor):
                raise TypeError(f"Third element {descriptor} at index {index} in parameters "
                                "list is not a ParameterDescriptor.")
            if len(entry) == 1:
                warnings.warn(
                    f"parameter '{name}' is declared by its name alone, which is deprecated "
                    "(as in rclpy): give a default value, a Parameter.Type, or a descriptor "
                    "with dynamic_typing=True", UserWarning, stacklevel=3)
                descriptor.dynamic_typing = True
            value = None
            if isinstance(second, Parameter.Type):
                if second == Parameter.Type.NOT_SET:
                    raise ValueError(f"Cannot declare parameter {{{name}}} as statically "
                                     "typed of type NOT_SET")
                if descriptor.dynamic_typing:
                    raise ValueError(f"When declaring parameter {{{name}}} passing a "
                                     "descriptor with `dynamic_typing=True` is not allowed "
                                     "when the parameter type is provided")
                descriptor.type = int(second)
            else:
                value = second
                if not descriptor.dynamic_typing:
                    descriptor.type = (value.type if isinstance(value, ParameterValue)
                                       else int(Parameter.Type.from_parameter_value(value)))
                    if descriptor.type == ParameterType.PARAMETER_NOT_SET:
                        raise ValueError("Cannot declare a statically typed parameter with "
                                         "default value of type PARAMETER_NOT_SET")
            if not ignore_override and name in self._parameter_overrides:
                value = self._parameter_overrides[name].value
            if isinstance(value, ParameterValue):
                raise ValueError(f"Cannot declare parameter {name} from a ParameterValue; "
                                 "give its Python value")
            declared.append(Parameter(name, value=value))
            descriptors[name] = descriptor
        already = [p.name for p in declared if p.name in self._parameters]
        if already:
            raise ParameterAlreadyDeclaredException(already)
        for parameter in declared:
            result = self._commit([parameter], descriptors, declaring=True)
            if not result.successful:
                expected = Parameter.Type(descriptors[parameter.name].type)
                if result.reason.startswith("Wrong parameter type"):
                    raise InvalidParameterTypeException(parameter, expected.name)
                raise InvalidParameterValueException(parameter.name, parameter.value,
                                                     result.reason)
        return [self._parameters[p.name] for p in declared]

    def undeclare_parameter(self, name):
        if not self.has_parameter(name):
            raise ParameterNotDeclaredException(name)
        if self._descriptors[name].read_only:
            raise ParameterImmutableException(name)
        del self._parameters[name]
        del self._descriptors[name]

    # -- read --------------------------------------------------------------------

    def has_parameter(self, name):
        return name in self._parameters

    def get_parameter(self, name):
        """The declared parameter; ``ParameterUninitializedException`` for a statically
        typed one not set yet. Undeclared: NOT_SET if allowed, else
        ``ParameterNotDeclaredException``."""
        if name in self._parameters:
            parameter = self._parameters[name]
            if (parameter.type_ != Parameter.Type.NOT_SET
                    or self._descriptors[name].dynamic_typing):
                return parameter
            raise ParameterUninitializedException(name)
        if self._allow_undeclared_parameters:
            return Parameter(name, Parameter.Type.NOT_SET, None)
        raise ParameterNotDeclaredException(name)

    def get_parameters(self, names):
        _check_names(names)
        return [self.get_parameter(name) for name in names]

    def get_parameter_or(self, name, alternative_value=None):
        """The parameter, or ``alternative_value`` (NOT_SET by default) when it is not
        declared or not set."""
        if alternative_value is None:
            alternative_value = Parameter(name, Parameter.Type.NOT_SET)
        parameter = self._parameters.get(name)
        if parameter is None or parameter.type_ == Parameter.Type.NOT_SET:
            return alternative_value
        return parameter

    def get_parameter_type(self, name):
        if name in self._parameters:
            return self._parameters[name].type_.value
        if self._allow_undeclared_parameters:
            return Parameter.Type.NOT_SET
        raise ParameterNotDeclaredException(name)

    def get_parameter_types(self, names):
        _check_names(names)
        return [self.get_parameter_type(name) for name in names]

    def get_parameters_by_prefix(self, prefix):
        """``{name after "prefix.": parameter}`` for the parameters under ``prefix``."""
        if prefix:
            prefix += PARAMETER_SEPARATOR_STRING
        return {name[len(prefix):]: p for name, p in self._parameters.items()
                if name.startswith(prefix)}

    def describe_parameter(self, name):
        if name in self._descriptors:
            return self._descriptors[name]
        if self._allow_undeclared_parameters:
            return ParameterDescriptor()
        raise ParameterNotDeclaredException(name)

    def describe_parameters(self, names):
        return [self.describe_parameter(name) for name in names]

    def list_parameters(self, prefixes, depth):
        """rcl_interfaces' ``ListParameters``: the names under ``prefixes`` (all when
        empty) at most ``depth`` separators deep (``0``: any depth), and their prefixes."""
        if not isinstance(prefixes, list):
            raise TypeError("The prefixes argument must be a list")
        if not all(isinstance(prefix, str) for prefix in prefixes):
            raise TypeError("All prefixes must be instances of type str")
        if not isinstance(depth, int):
            raise TypeError("The depth must be instance of type int")
        if depth < 0:
            raise ValueError("The depth must be greater than or equal to zero")

        def shallow(name):
            return depth == DEPTH_RECURSIVE or name.count(PARAMETER_SEPARATOR_STRING) < depth

        def wanted(name):
            if not prefixes:
                return shallow(name)
            return any(
                name == prefix or (name.startswith(prefix + PARAMETER_SEPARATOR_STRING)
                                   and shallow(name[len(prefix) + 1:]))
                for prefix in prefixes)

        result = ListParametersResult()
        for name in self._parameters:
            if not wanted(name):
                continue
            result.names.append(name)
            parent = name.rpartition(PARAMETER_SEPARATOR_STRING)[0]
            if parent and parent not in result.prefixes:
                result.prefixes.append(parent)
        return result

    # -- set ---------------------------------------------------------------------

    def set_parameters(self, parameter_list):
        """Sets each parameter on its own; one ``SetParametersResult`` each."""
        return [self._set_atomically([parameter]) for parameter in parameter_list]

    def set_parameters_atomically(self, parameter_list):
        """Sets all the parameters or none; one ``SetParametersResult``."""
        return self._set_atomically(parameter_list)

    def set_descriptor(self, name, descriptor, alternative_value=None):
        """Replaces a parameter's descriptor. If the current value breaks it,
        ``alternative_value`` (a ``ParameterValue``) is stored instead, or
        ``InvalidParameterValueException``. Returns the value now stored."""
        if not self.has_parameter(name):
            if not self._allow_undeclared_parameters:
                raise ParameterNotDeclaredException(name)
            return self.get_parameter(name).get_parameter_value()
        if self.describe_parameter(name).read_only:
            raise ParameterImmutableException(name)
        current = self.get_parameter(name)
        candidates = [current]
        if alternative_value is not None:
            from kairos.rcl_interfaces.msg import Parameter as ParameterMsg
            candidates.append(Parameter.from_parameter_msg(
                ParameterMsg(name=name, value=alternative_value)))
        for candidate in candidates:
            result = self._check_descriptor(candidate, descriptor, check_read_only=False)
            if result.successful:
                self._parameters[name] = candidate
                break
        else:
            raise InvalidParameterValueException(name, candidates[-1].value, result.reason)
        self._descriptors[name] = descriptor
        return self.get_parameter(name).get_parameter_value()

    def _set_atomically(self, parameter_list):
        if self._pre_set_parameters_callbacks:
            changed = []
            for callback in self._pre_set_parameters_callbacks:
                changed.extend(callback(parameter_list))
            parameter_list = changed
            if not parameter_list:
                return _refused("parameter list cannot be empty, this might be due to "
                                "pre_set_parameters_callback modifying the original "
                                "parameters list.")
        if not all(isinstance(p, Parameter) for p in parameter_list):
            raise TypeError(f"parameter must be instance of type '{Parameter!r}'")
        undeclared = [p.name for p in parameter_list if p.name not in self._parameters]
        if undeclared and not self._allow_undeclared_parameters:
            raise ParameterNotDeclaredException(undeclared)
        return self._commit(parameter_list, None, declaring=False)

    def _commit(self, parameter_list, descriptors, declaring):
        """Checks ``parameter_list`` against the descriptors (the given ones when
        declaring) and the on-set callbacks; if all accept, stores it, publishes the
        parameter event and runs the post-set callbacks."""
        for parameter in parameter_list:
            descriptor = (descriptors if declaring else self._descriptors).get(parameter.name)
            if descriptor is not None:
                result = self._check_descriptor(parameter, descriptor,
                                                check_read_only=not declaring)
                if not result.successful:
                    return result
        for callback in self._on_set_parameters_callbacks:
            result = callback(parameter_list)
            if not result.successful:
                return result

        event = ParameterEvent(node=self.get_fully_qualified_name())
        for parameter in parameter_list:
            name = parameter.name
            if not declaring and parameter.type_ == Parameter.Type.NOT_SET:
                event.deleted_parameters.append(parameter.to_parameter_msg())
                self._parameters.pop(name, None)
                self._descriptors.pop(name, None)
                continue
            if declaring:
                self._descriptors[name] = descriptors[name]
            elif name not in self._descriptors:
                self._descriptors[name] = ParameterDescriptor(dynamic_typing=True)
            if self.get_parameter_or(name).type_ == Parameter.Type.NOT_SET:
                event.new_parameters.append(parameter.to_parameter_msg())
            else:
                event.changed_parameters.append(parameter.to_parameter_msg())
            self._parameters[name] = parameter
            if name == USE_SIM_TIME_NAME and parameter.type_ == Parameter.Type.BOOL:
                self._core.set_use_sim_time(parameter.value)
        if getattr(self, "_parameter_event_publisher", None) is not None:
            event.stamp = self.get_clock().now().to_msg()
            self._parameter_event_publisher.publish(event)
        for callback in self._post_set_parameters_callbacks:
            callback(parameter_list)
        return _accepted()

    def _check_descriptor(self, parameter, descriptor, check_read_only=True):
        descriptor.name = parameter.name
        if check_read_only and descriptor.read_only:
            return _refused(f"Trying to set a read-only parameter: {parameter.name}.")
        if descriptor.dynamic_typing:
            descriptor.type = int(parameter.type_)
        elif parameter.name in self._parameters and parameter.type_ == Parameter.Type.NOT_SET:
            return _refused("Static parameter cannot be undeclared")
        elif (parameter.type_ != Parameter.Type.NOT_SET
              and int(parameter.type_) != descriptor.type):
            return _refused(f"Wrong parameter type, expected "
                            f"'{Parameter.Type(descriptor.type).name}' got '{parameter.type_.name}'")
        if parameter.type_ == Parameter.Type.INTEGER and descriptor.integer_range:
            return self._check_integer_range(parameter, descriptor.integer_range[0])
        if parameter.type_ == Parameter.Type.DOUBLE and descriptor.floating_point_range:
            return self._check_floating_point_range(parameter,
                                                    descriptor.floating_point_range[0])
        return _accepted()

    def _check_integer_range(self, parameter, bounds):
        low = min(bounds.from_value, bounds.to_value)
        high = max(bounds.from_value, bounds.to_value)
        value = parameter.value
        if value in (low, high):
            return _accepted()
        if not low < value < high:
            return _refused(f"Parameter {parameter.name} out of range. "
                            f"Min: {low}, Max: {high}, value: {value}")
        if bounds.step != 0 and (value - low) % bounds.step != 0:
            return _refused(f"The parameter value for {parameter.name} is not a valid step. "
                            f"Min: {low}, max: {high}, value: {value}, step: {bounds.step}")
        return _accepted()

    def _check_floating_point_range(self, parameter, bounds):
        low = min(bounds.from_value, bounds.to_value)
        high = max(bounds.from_value, bounds.to_value)
        value = parameter.value

        def close(a, b):
            return math.isclose(a, b, rel_tol=self.PARAM_REL_TOL)

        if close(value, low) or close(value, high):
            return _accepted()
        if not low < value < high:
            return _refused(f"Parameter {parameter.name} out of range "
                            f"Min: {low}, Max: {high}, value: {value}")
        if bounds.step != 0.0:
            steps = round((value - low) / bounds.step)
            if not close(low + steps * bounds.step, value):
                return _refused(
                    f"The parameter value for {parameter.name} is not close enough to a "
                    f"valid step. Min: {low}, max: {high}, value: {value}, "
                    f"step: {bounds.step}")
        return _accepted()

    # -- callbacks ---------------------------------------------------------------

    def add_pre_set_parameters_callback(self, callback):
        """``callback(parameters) -> parameters``: may change what a set sets."""
        self._pre_set_parameters_callbacks.insert(0, callback)

    def add_on_set_parameters_callback(self, callback):
        """``callback(parameters) -> SetParametersResult``: may refuse a set."""
        self._on_set_parameters_callbacks.insert(0, callback)

    def add_post_set_parameters_callback(self, callback):
        """``callback(parameters)``: told of each set that took effect."""
        self._post_set_parameters_callbacks.insert(0, callback)

    def remove_pre_set_parameters_callback(self, callback):
        self._pre_set_parameters_callbacks.remove(callback)

    def remove_on_set_parameters_callback(self, callback):
        self._on_set_parameters_callbacks.remove(callback)

    def remove_post_set_parameters_callback(self, callback):
        self._post_set_parameters_callbacks.remove(callback)


def _check_names(names):
    if not all(isinstance(name, str) for name in names):
        raise TypeError("All names must be instances of type str")

