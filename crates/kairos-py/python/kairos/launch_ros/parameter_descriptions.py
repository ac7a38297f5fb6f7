"""``launch_ros.parameter_descriptions``: parameter values and files for a node."""

from kairos.launch._core import normalize_to_list_of_substitutions, perform_substitutions


class ParameterValue:
    """A parameter's value: plain (checked against ``value_type`` when one is given: a
    ``TypeError`` naming it otherwise), or with substitutions, read when evaluated as
    ``value_type`` says (YAML's rules when none: a list of mixed types is a
    ``ValueError``). Evaluated once; ``value`` is then the result, as in ROS 2."""

    _UNSET = object()

    def __init__(self, value, *, value_type=None):
        from kairos.launch._type_utils import normalize_typed_substitution
        self._value = normalize_typed_substitution(value, value_type)
        self._value_type = value_type
        self._evaluated = self._UNSET

    @property
    def value(self):
        return self._value if self._evaluated is self._UNSET else self._evaluated

    @property
    def value_type(self):
        return self._value_type

    def evaluate(self, context):
        if self._evaluated is self._UNSET:
            from kairos.launch._type_utils import perform_typed_substitution
            self._evaluated = perform_typed_substitution(context, self._value,
                                                         self._value_type)
        return self._evaluated


class ParameterFile:
    """A parameter file for a node; with ``allow_substs``, its ``$(...)`` substitutions
    (ROS 2's grammar) are performed when the node is launched, into a temporary copy
    that ``cleanup()`` deletes."""

    def __init__(self, param_file, *, allow_substs=False):
        import pathlib
        self._param_file = param_file if isinstance(param_file, pathlib.Path) else \
            normalize_to_list_of_substitutions(param_file)
        self._allow_substs = allow_substs
        self._evaluated = None
        self._temporary = False

    @property
    def param_file(self):
        """The evaluated path once evaluated, else what was given."""
        return self._evaluated if self._evaluated is not None else self._param_file

    @property
    def allow_substs(self):
        return self._allow_substs

    def evaluate(self, context):
        """The file's path (``pathlib.Path``); with ``allow_substs``, a copy with its
        substitutions performed, which must still be YAML."""
        import pathlib
        if self._evaluated is not None:
            return self._evaluated
        path = self._param_file if isinstance(self._param_file, pathlib.Path) else \
            pathlib.Path(perform_substitutions(context, self._param_file))
        allow = self._allow_substs
        if not isinstance(allow, bool):
            from kairos.launch._type_utils import perform_typed_substitution
            allow = perform_typed_substitution(context, allow, bool)
        if allow:
            import tempfile
            import yaml
            from kairos.launch._core import SubstitutionFailure
            from kairos.launch.frontend.parse_substitution import parse_substitution
            with open(path) as f:
                text = perform_substitutions(context, parse_substitution(f.read()))
            try:
                yaml.safe_load(text)
            except yaml.YAMLError as e:
                raise SubstitutionFailure(
                    f"the parameter file {path}, substitutions performed, is not YAML: "
                    f"{e}") from None
            with tempfile.NamedTemporaryFile("w", suffix=".yaml", delete=False,
                                             prefix="kairos_launch_params_") as out:
                out.write(text)
            path = pathlib.Path(out.name)
            self._temporary = True
        self._evaluated = path
        return path

    def cleanup(self):
        """Deletes the substituted copy, if one was made."""
        if self._temporary and self._evaluated is not None:
            self._evaluated.unlink(missing_ok=True)
            self._temporary = False
            self._evaluated = None


class Parameter:
    """One parameter for a node: ``name`` (text or substitutions) and ``value`` (see
    :class:`ParameterValue`; ``value_type`` says how a substitution's result is read, or
    checks a plain value). Evaluated once: ``name`` and ``value`` are then the results."""

    def __init__(self, name, value, *, value_type=None):
        self._name = normalize_to_list_of_substitutions(name)
        self._value = ParameterValue(value, value_type=value_type)
        self._evaluated_name = None

    @property
    def name(self):
        return self._name if self._evaluated_name is None else self._evaluated_name

    @property
    def value(self):
        return self._value.value

    @property
    def value_type(self):
        return self._value.value_type

    def evaluate(self, context):
        """``(name, value)`` with the name's substitutions performed and the value read."""
        if self._evaluated_name is None:
            self._evaluated_name = perform_substitutions(context, self._name)
        return (self._evaluated_name, self._value.evaluate(context))
