"""ROS 2's ``launch.conditions`` on kairos."""

from kairos.launch._core import (
    Condition, SubstitutionFailure, normalize_to_list_of_substitutions, perform_substitutions)


def evaluate_condition_expression(context, expression):
    text = perform_substitutions(context, expression).strip().lower()
    if text in ("true", "1"):
        return True
    if text in ("false", "0"):
        return False
    raise SubstitutionFailure(
        f"a condition's expression is '{text}': it must be true, false, 1 or 0")


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
