"""``launch_ros.parameter_descriptions``: parameter values and files for a node."""

from kairos.launch._core import normalize_to_list_of_substitutions, perform_substitutions


class ParameterValue:
    def __init__(self, value, *, value_type=None):
        self.value = value
        self.value_type = value_type

    def evaluate(self, context):
        from kairos.launch._core import Substitution
        if isinstance(self.value, (str, Substitution)) or (
                isinstance(self.value, list) and self.value
                and all(isinstance(v, (str, Substitution)) for v in self.value)
                and any(isinstance(v, Substitution) for v in self.value)):
            text = perform_substitutions(context, normalize_to_list_of_substitutions(self.value))
            if self.value_type is str:
                return text
            import yaml
            try:
                return yaml.safe_load(text) if text else text
            except yaml.YAMLError:
                return text
        return self.value


class ParameterFile:
    def __init__(self, param_file, *, allow_substs=False):
        self.param_file = normalize_to_list_of_substitutions(param_file)
        self.allow_substs = allow_substs

    def evaluate(self, context):
        path = perform_substitutions(context, self.param_file)
        if not self.allow_substs:
            return path
        import tempfile
        from kairos.launch.substitutions import _expand_frontend
        with open(path) as f:
            text = _expand_frontend(f.read(), context)
        out = tempfile.NamedTemporaryFile("w", suffix=".yaml", delete=False,
                                          prefix="kairos_launch_params_")
        out.write(text)
        out.close()
        return out.name


class Parameter:
    def __init__(self, name, value):
        self.name = name
        self.value = value
