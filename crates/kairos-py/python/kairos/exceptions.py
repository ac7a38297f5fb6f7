"""rclpy's exception types, where kairos raises them."""

from kairos._graph import NodeNameNonExistentError  # noqa: F401


class InvalidHandle(RuntimeError):
    """Use of a node (or entity) after it was destroyed."""


class NotInitializedException(Exception):
    """Something that needs an initialized context (a node) was made without one."""

    def __init__(self, *args):
        super().__init__("rclpy.init() has not been called", *args)


class NameValidationException(ValueError):
    """A node name, namespace, topic or service name that breaks a rule of ROS names (a
    ``ValueError`` too, as kairos raised for bad names before)."""

    def __init__(self, name_type, name, error_msg, invalid_index):
        self.name, self.error_msg, self.invalid_index = name, error_msg, invalid_index
        super().__init__(f"Invalid {name_type}: {error_msg}:\n  '{name}'\n"
                         f"   {' ' * invalid_index}^")


class InvalidNamespaceException(NameValidationException):
    def __init__(self, name, error_msg, invalid_index):
        super().__init__("namespace", name, error_msg, invalid_index)


class InvalidNodeNameException(NameValidationException):
    def __init__(self, name, error_msg, invalid_index):
        super().__init__("node name", name, error_msg, invalid_index)


class InvalidTopicNameException(NameValidationException):
    def __init__(self, name, error_msg, invalid_index):
        super().__init__("topic name", name, error_msg, invalid_index)


class InvalidServiceNameException(NameValidationException):
    def __init__(self, name, error_msg, invalid_index):
        super().__init__("service name", name, error_msg, invalid_index)


class ROSInterruptException(Exception):
    """A sleep or wait ended by shutdown (rclpy's ``Rate.sleep``)."""

    def __init__(self):
        super().__init__("rclpy.shutdown() has been called")


class ParameterException(Exception):
    """A parameter operation that is not allowed."""

    def __init__(self, error_msg, parameters, *args):
        super().__init__(f"{error_msg}: {parameters}", *args)


class ParameterNotDeclaredException(ParameterException):
    def __init__(self, parameters, *args):
        super().__init__("Invalid access to undeclared parameter(s)", parameters, *args)


class ParameterAlreadyDeclaredException(ParameterException):
    def __init__(self, parameters, *args):
        super().__init__("Parameter(s) already declared", parameters, *args)


class InvalidParameterException(ParameterException):
    """A parameter name that is not valid."""

    def __init__(self, parameter_name, *args):
        super().__init__("Invalid parameter name", parameter_name, *args)


class InvalidParameterTypeException(ParameterException):
    def __init__(self, desired_parameter, expected_type, *args):
        from kairos.parameter import Parameter

        got = Parameter.Type.from_parameter_value(desired_parameter.value).name
        super().__init__(
            f"Trying to set parameter '{desired_parameter.name}' to "
            f"'{desired_parameter.value}' of type '{got}', expecting type '{expected_type}'",
            desired_parameter.name, *args)


class InvalidParameterValueException(ParameterException):
    def __init__(self, parameter, value, reason, *args):
        super().__init__(f"Invalid parameter value ({value}) for parameter. Reason: {reason}",
                         parameter, *args)


class ParameterImmutableException(ParameterException):
    def __init__(self, parameter_name, *args):
        super().__init__("Attempted to modify read-only parameter", parameter_name, *args)


class ParameterUninitializedException(ParameterException):
    def __init__(self, parameter_name, *args):
        super().__init__(f"The parameter '{parameter_name}' is not initialized",
                         parameter_name, *args)


class RCLError(RuntimeError):
    """An error rclpy's C layer (rcl) reports; kairos raises it where rcl would."""


class UnknownROSArgsError(RCLError):
    """``--ros-args`` holds an argument ROS 2 does not define."""


class RCLInvalidROSArgsError(RCLError):
    """``--ros-args`` holds an argument that cannot be read (a rule without ``:=``, a flag
    without its value, a parameter file that does not read)."""


class NoTypeSupportImportedException(Exception):
    """A message or service class whose type support was never imported."""

    def __init__(self, *args):
        super().__init__("no type support imported", *args)
