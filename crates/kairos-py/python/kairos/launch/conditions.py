"""ROS 2's ``launch.conditions`` on kairos."""

from kairos._layout import stands_for_package

# ROS 2's launch.conditions.<module> paths are this module (see kairos._layout).
stands_for_package(__name__, (
    "evaluate_condition_expression_impl", "if_condition",
    "invalid_condition_expression_error", "launch_configuration_equals",
    "launch_configuration_not_equals", "unless_condition"))

from kairos.launch._core import (
    Condition, SubstitutionFailure, normalize_to_list_of_substitutions, perform_substitutions)


VALID_TRUE_EXPRESSIONS = ["true", "1"]
VALID_FALSE_EXPRESSIONS = ["false", "0"]


class InvalidConditionExpressionError(SubstitutionFailure, ValueError):
    """A condition's expression that is neither true nor false (a launch file's error,
    reported at its line)."""

    def __init__(self, expression, unexpanded_expression, valid_expressions):
        super().__init__(
            f"invalid condition expression, expected one of [{', '.join(valid_expressions)}]"
            f" but got '{expression}', expanded from "
            f"'{' + '.join(str(s) for s in unexpanded_expression)}'")


def evaluate_condition_expression(context, expression):
    text = perform_substitutions(context, expression).strip().lower()
    if text in VALID_TRUE_EXPRESSIONS:
        return True
    if text in VALID_FALSE_EXPRESSIONS:
        return False
    raise InvalidConditionExpressionError(
        text, expression, VALID_TRUE_EXPRESSIONS + VALID_FALSE_EXPRESSIONS)


class IfCondition(Condition):
    def __init__(self, predicate_expression):
        self._expression = normalize_to_list_of_substitutions(predicate_expression)
        super().__init__(predicate=self._holds)

    def _holds(self, context):
        return evaluate_condition_expression(context, self._expression)


class UnlessCondition(IfCondition):
    def _holds(self, context):
        return not evaluate_condition_expression(context, self._expression)


class LaunchConfigurationEquals(Condition):
    def __init__(self, launch_configuration_name, expected_value):
        import warnings
        warnings.warn(
            "The 'LaunchConfigurationEquals' and 'LaunchConfigurationNotEquals' Conditions are "
            "deprecated, as in ROS 2: use IfCondition(EqualsSubstitution("
            "LaunchConfiguration('name'), 'value')) instead", UserWarning, stacklevel=2)
        self._name = launch_configuration_name
        self._expected = None if expected_value is None else \
            normalize_to_list_of_substitutions(expected_value)
        super().__init__(predicate=self._holds)

    def _holds(self, context):
        value = context.launch_configurations.get(self._name)
        expected = None if self._expected is None else \
            perform_substitutions(context, self._expected)
        return value == expected


class LaunchConfigurationNotEquals(LaunchConfigurationEquals):
    def _holds(self, context):
        return not super()._holds(context)
