"""A node's ``parameters=[...]`` as launch_ros keeps and reads them: normalized when the
node is made (names and values as substitutions, nested mappings flattened to
``a.b``), evaluated when it is launched (substitution results read as YAML, lists of one
type), then given to the node.

``normalize_parameters`` and ``evaluate_parameters`` are ROS 2's functions of these names
(``launch_ros.utilities``); a value the node could never take (a list of mixed types, a
mapping where a value belongs) is a ``TypeError`` naming the parameter.
"""

import os
import pathlib
from collections.abc import Mapping, Sequence

import yaml

from kairos.launch._core import (
    Substitution, normalize_to_list_of_substitutions, perform_substitutions)
from kairos.launch.substitutions import TextSubstitution
from kairos.launch_ros.parameter_descriptions import Parameter, ParameterFile, ParameterValue

_SCALARS = (bool, int, float, str)


def _normalize_array(value):
    """A list value, all items of one kind: numbers, bools, text, or substitutions."""
    if not isinstance(value, Sequence):
        raise TypeError(f"Value {value!r} must be a sequence")
    kinds = set()
    for item in value:
        if isinstance(item, Substitution):
            kinds.add(Substitution)
        elif isinstance(item, _SCALARS):
            kinds.add(type(item))
        elif isinstance(item, Sequence) and all(isinstance(x, (str, Substitution))
                                                for x in item):
            kinds.add(tuple)  # one item written as text and substitutions
        elif isinstance(item, Sequence):
            raise TypeError(f"a parameter's list holds a list ({item!r}): nested lists are "
                            "not supported")
        else:
            raise TypeError(f"a parameter's list holds {type(item).__name__} ({item!r})")
    if kinds == {int}:
        return tuple(int(e) for e in value)
    if kinds in ({float}, {int, float}):
        return tuple(float(e) for e in value)
    if Substitution in kinds and kinds <= {str, Substitution}:
        # Text and substitutions side by side are one text.
        return tuple(normalize_to_list_of_substitutions(value))
    if kinds == {bool}:
        return tuple(bool(e) for e in value)
    # Each item its own text, read as YAML when evaluated.
    return tuple(normalize_to_list_of_substitutions(
        yaml.dump(e) if isinstance(e, _SCALARS) else e) for e in value)


def normalize_parameter_dict(parameters, *, _prefix=None):
    """``{name: value}`` with names as tuples of substitutions (nested mappings joined
    with ``.``) and values normalized."""
    if not isinstance(parameters, Mapping):
        raise TypeError("expected dict")
    normalized = {}
    for name, value in parameters.items():
        if not isinstance(name, (str, Substitution, Sequence)) or isinstance(name, bytes):
            raise TypeError(f"a parameter's name is text or substitutions, not "
                            f"{type(name).__name__} ({name!r})")
        name = normalize_to_list_of_substitutions(name)
        if _prefix:
            name = [*_prefix, TextSubstitution(text="."), *name]
        if isinstance(value, Mapping):
            normalized.update(normalize_parameter_dict(value, _prefix=name))
        elif isinstance(value, ParameterValue):
            normalized[tuple(name)] = value
        elif isinstance(value, str):
            normalized[tuple(name)] = tuple(normalize_to_list_of_substitutions(yaml.dump(value)))
        elif isinstance(value, Substitution):
            normalized[tuple(name)] = tuple(normalize_to_list_of_substitutions(value))
        elif isinstance(value, (float, bool, int, bytes)):
            normalized[tuple(name)] = value
        elif isinstance(value, Sequence):
            normalized[tuple(name)] = _normalize_array(value)
        else:
            raise TypeError(f"Unexpected type for parameter value {value!r}")
    return normalized


def normalize_parameters(parameters):
    """A node's parameters (a list of mappings, parameter files, paths and
    ``Parameter``s) as a tuple, each normalized."""
    if isinstance(parameters, str) or not isinstance(parameters, Sequence):
        raise TypeError(f"Expecting list of parameters, got {parameters}")
    normalized = []
    for entry in parameters:
        if isinstance(entry, Mapping):
            normalized.append(normalize_parameter_dict(entry))
        elif isinstance(entry, (Parameter, ParameterFile)):
            normalized.append(entry)
        else:
            normalized.append(ParameterFile(entry))
    return tuple(normalized)


def _uniform(sequence):
    """Whether a list is one the node can take: not empty, items of one scalar type."""
    if not sequence or type(sequence[0]) not in _SCALARS:
        return False
    return all(isinstance(item, type(sequence[0])) for item in sequence)


def _not_a_list(name):
    return TypeError(
        "Expected a non-empty sequence, with items of uniform type. Allowed sequence item "
        f"types are bool, int, float, str. Got inconsistent input for \"{name}\"")


def evaluate_parameter_dict(context, parameters):
    """``{name: value}`` of a normalized mapping: each substitution's text read as YAML."""
    if not isinstance(parameters, Mapping):
        raise TypeError("expected dict")
    evaluated = {}
    for name, value in parameters.items():
        if not isinstance(name, tuple):
            raise TypeError(f"Expecting tuple of substitutions got {name!r}")
        name = perform_substitutions(context, list(name))
        if isinstance(value, tuple) and value and isinstance(value[0], Substitution):
            text = perform_substitutions(context, list(value)) or "''"
            try:
                read = yaml.safe_load(text)
            except yaml.YAMLError:
                raise TypeError(
                    f"Unable to parse the value of parameter {name} as yaml. If the parameter "
                    "is meant to be a string, try wrapping it in launch_ros."
                    "parameter_descriptions.ParameterValue(value, value_type=str)") from None
            if type(read) in (*_SCALARS, bytes):
                value = read
            elif isinstance(read, Sequence):
                if not _uniform(read):
                    raise _not_a_list(name)
                value = tuple(read)
            else:
                raise TypeError(
                    "Allowed value types are bytes, bool, int, float, str, Sequence[bool], "
                    f"Sequence[int], Sequence[float], Sequence[str]. Got {type(read)} for "
                    f"\"{name}\". If the parameter is meant to be a string, try wrapping it "
                    "in launch_ros.parameter_descriptions.ParameterValue(value, "
                    "value_type=str)")
        elif isinstance(value, tuple) and value and isinstance(value[0], Sequence):
            read = [yaml.safe_load(perform_substitutions(context, list(item))) for item in value]
            if not _uniform(read):
                raise _not_a_list(name)
            value = tuple(read)
        elif isinstance(value, tuple) and value:
            value = tuple(type(value[0])(item) for item in value)
        elif isinstance(value, ParameterValue):
            value = value.evaluate(context)
        elif not isinstance(value, (*_SCALARS, bytes)):
            raise TypeError(f"given unnormalized parameters {name!r}, {value!r}")
        evaluated[name] = value
    return evaluated


def evaluate_parameters(context, parameters):
    """Normalized parameters evaluated: parameter files as ``pathlib.Path``, mappings as
    ``{name: value}``, ``Parameter``s as they are."""
    evaluated = []
    for entry in parameters:
        if isinstance(entry, ParameterFile):
            evaluated.append(pathlib.Path(os.fspath(entry.evaluate(context))))
        elif isinstance(entry, Parameter):
            evaluated.append(entry)
        elif isinstance(entry, Mapping):
            evaluated.append(evaluate_parameter_dict(context, entry))
    return tuple(evaluated)
