"""ROS 2's ``launch.substitutions`` on kairos."""

from kairos._layout import stands_for_package

# ROS 2's launch.substitutions.<module> paths are this module (see kairos._layout).
stands_for_package(__name__, (
    "anon_name", "boolean_substitution", "command", "environment_variable",
    "equals_substitution", "file_content", "find_executable", "if_else_substitution",
    "launch_configuration", "launch_log_dir", "local_substitution",
    "not_equals_substitution", "path_join_substitution", "python_expression",
    "substitution_failure", "text_substitution", "this_launch_file",
    "this_launch_file_dir"))

import math
import os
import re
import socket
import shlex
import shutil
import subprocess
import uuid

from kairos.launch._core import (
    Substitution, SubstitutionFailure, normalize_to_list_of_substitutions,
    perform_substitutions, perform_text)

#: How long ``Command`` may run before the launch fails (kairos launch's bound).
COMMAND_TIMEOUT = 30.0


class TextSubstitution(Substitution):
    def __init__(self, *, text):
        if not isinstance(text, str):
            raise TypeError(f"TextSubstitution takes a str, got {type(text).__name__}")
        self.text = text

    def perform(self, context):
        return self.text

    def __repr__(self):
        return f"'{self.text}'"


class LaunchConfiguration(Substitution):
    def __init__(self, variable_name, *, default=None):
        self.variable_name = normalize_to_list_of_substitutions(variable_name)
        if default is None:
            self.default = None
        else:
            # As ROS 2's: any item that is neither text nor a substitution is its str()
            # (default=2 is "2").
            items = default if isinstance(default, (list, tuple)) else [default]
            items = [d if isinstance(d, (str, Substitution)) else str(d) for d in items]
            self.default = normalize_to_list_of_substitutions(
                "".join(items) if items and all(isinstance(d, str) for d in items)
                else items)

    def perform(self, context):
        name = perform_substitutions(context, self.variable_name)
        if name in context.launch_configurations:
            return context.launch_configurations[name]
        if self.default is not None:
            return perform_substitutions(context, self.default)
        raise SubstitutionFailure(
            f"launch configuration '{name}' does not exist: declare it with "
            f"DeclareLaunchArgument('{name}', default_value=...) or pass {name}:=VALUE")

    def __repr__(self):
        return f"LaunchConfiguration({self.variable_name!r})"


class EnvironmentVariable(Substitution):
    def __init__(self, name, *, default_value=None):
        self.name = normalize_to_list_of_substitutions(name)
        self.default_value = None if default_value is None else \
            normalize_to_list_of_substitutions(default_value)

    def perform(self, context):
        name = perform_substitutions(context, self.name)
        value = context.environment.get(name)
        if value is not None:
            return value
        if self.default_value is not None:
            return perform_substitutions(context, self.default_value)
        raise SubstitutionFailure(
            f"environment variable '{name}' does not exist (give default_value=...)")


class PathJoinSubstitution(Substitution):
    def __init__(self, substitutions):
        self.substitutions = [normalize_to_list_of_substitutions(s) for s in substitutions]

    def perform(self, context):
        return os.path.join(*[perform_substitutions(context, s) for s in self.substitutions])

    def __truediv__(self, other):
        return PathJoinSubstitution([*self.substitutions, other])


class ThisLaunchFileDir(Substitution):
    def perform(self, context):
        path = context.locals_.get("current_launch_file_directory")
        if path is None:
            raise SubstitutionFailure("ThisLaunchFileDir used outside a launch file")
        return path


class ThisLaunchFile(Substitution):
    def perform(self, context):
        path = context.locals_.get("current_launch_file_path")
        if path is None:
            raise SubstitutionFailure("ThisLaunchFile used outside a launch file")
        return path


class LaunchLogDir(Substitution):
    """The launch's log folder (``launch.logging``'s; under ``kairos launch``, the
    launcher's)."""

    def describe(self):
        return "LaunchLogDir()"

    def perform(self, context):
        from kairos.launch.logging import launch_config
        return launch_config.log_dir


class FindExecutable(Substitution):
    def __init__(self, *, name):
        self.name = normalize_to_list_of_substitutions(name)

    def perform(self, context):
        name = perform_substitutions(context, self.name)
        found = shutil.which(name, path=context.environment.get("PATH"))
        if found is None:
            raise SubstitutionFailure(f"executable '{name}' not found on PATH")
        return found


class AnonName(Substitution):
    def __init__(self, name):
        self.name = normalize_to_list_of_substitutions(name)

    def perform(self, context):
        name = perform_substitutions(context, self.name)
        if name not in context.anon_names:
            # As ROS 2 makes one: the name, the host, the process and a random number.
            host = re.sub(r"[^A-Za-z0-9_]", "_", socket.gethostname())
            context.anon_names[name] = \
                f"{name}_{host}_{os.getpid()}_{uuid.uuid4().int % (1 << 63)}"
        return context.anon_names[name]


class PythonExpression(Substitution):
    """The value of a Python expression, evaluated with ``python_modules`` imported
    (``math`` by default, whose names are also there bare: ``ceil(1.6)``). An error in
    it is the expression's own (a ``NameError`` for a module not given), as in ROS 2."""

    def __init__(self, expression, python_modules=("math",)):
        self.expression = normalize_to_list_of_substitutions(expression)
        self.python_modules = [normalize_to_list_of_substitutions(m) for m in python_modules]

    def describe(self):
        expression = "".join(s.describe() if not isinstance(s, TextSubstitution) else s.text
                             for s in self.expression)
        modules = ["".join(s.text if isinstance(s, TextSubstitution) else s.describe()
                           for s in m) for m in self.python_modules]
        return f"PythonExpr({expression!r}, {modules!r})"

    def perform(self, context):
        expression = perform_substitutions(context, self.expression)
        scope = {}
        for m in self.python_modules:
            name = perform_substitutions(context, m)
            scope[name] = __import__(name)
            if name == "math":
                scope.update({k: getattr(math, k) for k in dir(math) if not k.startswith("_")})
        try:
            return str(eval(expression, scope))
        except Exception as e:
            if hasattr(e, "add_note"):
                e.add_note(f"in PythonExpression '{expression}'")
            raise


class Command(Substitution):
    """The standard output of a command (``xacro robot.urdf.xacro``), run while the
    launch is performed, bounded by :data:`COMMAND_TIMEOUT`."""

    def __init__(self, command, *, on_stderr="fail"):
        self.command = normalize_to_list_of_substitutions(command) \
            if isinstance(command, (str, Substitution)) else \
            [normalize_to_list_of_substitutions(c) for c in command]
        self.on_stderr = on_stderr

    def perform(self, context):
        if self.command and isinstance(self.command[0], list):
            words = [perform_substitutions(context, c) for c in self.command]
            line = " ".join(words)
        else:
            line = perform_substitutions(context, self.command)
            words = shlex.split(line)
        on_stderr = perform_text(context, self.on_stderr)
        try:
            result = subprocess.run(words, capture_output=True, text=True,
                                    timeout=COMMAND_TIMEOUT, env=context.environment)
        except FileNotFoundError as e:
            raise SubstitutionFailure(f"file not found: Command '{line}': {e}")
        except subprocess.TimeoutExpired:
            raise SubstitutionFailure(
                f"Command '{line}' did not finish within {COMMAND_TIMEOUT:.0f} s")
        if result.returncode != 0:
            raise SubstitutionFailure(
                f"executed command failed. Command: {line} (exit code {result.returncode}): "
                f"{result.stderr.strip()}")
        if result.stderr.strip():
            if on_stderr == "fail":
                raise SubstitutionFailure(
                    f"executed command showed stderr output. Command: {line}\n"
                    f"Captured stderr output: {result.stderr.strip()}")
            if on_stderr in ("warn", "capture"):
                if on_stderr == "capture":
                    return result.stdout + result.stderr
                import sys
                print(f"[WARNING] Command '{line}': {result.stderr.strip()}", file=sys.stderr)
        return result.stdout


class LocalSubstitution(Substitution):
    def __init__(self, expression, description=None):
        self.expression = expression

    def perform(self, context):
        value = context.locals_
        parts = self.expression.split(".")
        try:
            current = value[parts[0]]
            for p in parts[1:]:
                current = getattr(current, p)
        except (KeyError, AttributeError):
            raise SubstitutionFailure(f"no local '{self.expression}'")
        return str(current)


def _bool(context, subs):
    text = perform_substitutions(context, subs).strip().lower()
    if text in ("true", "1", "on", "yes"):
        return True
    if text in ("false", "0", "off", "no"):
        return False
    raise SubstitutionFailure(f"'{text}' is not a boolean (true, false, 1, 0, on, off)")


class NotSubstitution(Substitution):
    def __init__(self, value):
        self.value = normalize_to_list_of_substitutions(value)

    def perform(self, context):
        return str(not _bool(context, self.value)).lower()


class AndSubstitution(Substitution):
    def __init__(self, left, right):
        self.left = normalize_to_list_of_substitutions(left)
        self.right = normalize_to_list_of_substitutions(right)

    def perform(self, context):
        # Both sides are read (and must be booleans) whatever the first one says.
        left, right = _bool(context, self.left), _bool(context, self.right)
        return str(left and right).lower()


class OrSubstitution(AndSubstitution):
    def perform(self, context):
        left, right = _bool(context, self.left), _bool(context, self.right)
        return str(left or right).lower()


class AnySubstitution(Substitution):
    """'true' when any argument is true ('true', '1', 'on', 'yes'; case aside)."""

    def __init__(self, *args):
        self.args = [normalize_to_list_of_substitutions(arg) for arg in args]

    def describe(self):
        return f"AnySubstitution({' '.join(str(arg) for arg in self.args)})"

    def perform(self, context):
        return str(any([_bool(context, arg) for arg in self.args])).lower()


class AllSubstitution(AnySubstitution):
    """'true' when every argument is true."""

    def describe(self):
        return f"AllSubstitution({' '.join(str(arg) for arg in self.args)})"

    def perform(self, context):
        return str(all([_bool(context, arg) for arg in self.args])).lower()


class IfElseSubstitution(Substitution):
    """``if_value`` when ``condition`` is true, else ``else_value``."""

    def __init__(self, condition, if_value="", else_value=""):
        if if_value == else_value == "":
            raise RuntimeError("One of if_value and else_value must be specified")
        self.condition = normalize_to_list_of_substitutions(condition)
        self.if_value = normalize_to_list_of_substitutions(if_value)
        self.else_value = normalize_to_list_of_substitutions(else_value)

    def perform(self, context):
        chosen = self.if_value if _bool(context, self.condition) else self.else_value
        return perform_substitutions(context, chosen)


def _comparable(value):
    if value is None:
        return ""
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, (str, Substitution, list, tuple)):
        return value
    return str(value)


def _is_bool_text(text):
    return text.lower() in ("true", "false", "1", "0")


def _is_float_text(text):
    try:
        float(text)
    except ValueError:
        return False
    return True


class EqualsSubstitution(Substitution):
    """'true' when the two sides are equal, as ROS 2 compares them: as booleans when
    both read as one (``true``/``false``/``1``/``0``, any case), as numbers when both
    read as one (close enough is equal; NaN equals nothing), else as text. ``None`` is
    empty text; a non-text value is its ``str()``."""

    def __init__(self, left, right):
        self.left = normalize_to_list_of_substitutions(_comparable(left))
        self.right = normalize_to_list_of_substitutions(_comparable(right))

    def _equal(self, context):
        left = perform_substitutions(context, self.left)
        right = perform_substitutions(context, self.right)
        if _is_bool_text(left) and _is_bool_text(right):
            return (left.lower() in ("true", "1")) == (right.lower() in ("true", "1"))
        if _is_float_text(left) and _is_float_text(right):
            return math.isclose(float(left), float(right))
        return left == right

    def perform(self, context):
        return str(self._equal(context)).lower()


class NotEqualsSubstitution(EqualsSubstitution):
    def perform(self, context):
        return str(not self._equal(context)).lower()


class FileContent(Substitution):
    """The text of the file a path names."""

    def __init__(self, path):
        self.path = normalize_to_list_of_substitutions(path)

    def perform(self, context):
        path = perform_substitutions(context, self.path)
        try:
            with open(path, encoding="utf-8") as f:
                return f.read()
        except OSError as e:
            raise SubstitutionFailure(f"File not found: {path} ({e.strerror})") from e



def _expose_to_frontends():
    """``$(name args...)`` of XML and YAML launch files: which substitution each name
    makes and from how many arguments (each argument a list of substitutions)."""
    from kairos.launch.frontend.expose import expose_substitution
    from kairos.launch.frontend.expose import expose_substitution_of as one

    def modules(data):
        """``"math, sys"`` as module names."""
        text = "".join(sub.perform(None) for sub in data)
        return [m.strip() for m in text.split(",") if m.strip()]

    one("var", lambda name, default=None: (LaunchConfiguration, dict(
        variable_name=name, **({} if default is None else {"default": default}))), 1, 2)
    one("env", lambda name, default=None: (EnvironmentVariable, dict(
        name=name, **({} if default is None else {"default_value": default}))), 1, 2)
    # Not ROS 2's (ROS 1's, which kairos's XML and YAML reader also reads): empty when unset.
    one("optenv", lambda name, default="": (EnvironmentVariable, dict(
        name=name, default_value=default)), 1, 2)
    one("eval", lambda expression, mods=None: (PythonExpression, dict(
        expression=expression,
        **({} if mods is None else {"python_modules": modules(mods)}))), 1, 2)
    one("command", lambda command, on_stderr=None: (Command, dict(
        command=command, **({} if on_stderr is None else {"on_stderr": on_stderr}))), 1, 2)
    one("find-exec", lambda name: (FindExecutable, {"name": name}), 1)
    one("anon", lambda name: (AnonName, {"name": name}), 1)
    one("dirname", lambda: (ThisLaunchFileDir, {}), 0)
    one("filename", lambda: (ThisLaunchFile, {}), 0)
    one("launch_log_dir", lambda: (LaunchLogDir, {}), 0)
    one("log_dir", lambda: (LaunchLogDir, {}), 0)
    one("file-content", lambda path: (FileContent, {"path": path}), 1)
    one("not", lambda value: (NotSubstitution, {"value": value}), 1)
    one("and", lambda left, right: (AndSubstitution, {"left": left, "right": right}), 2)
    one("or", lambda left, right: (OrSubstitution, {"left": left, "right": right}), 2)
    one("equals", lambda left, right: (EqualsSubstitution, {"left": left, "right": right}), 2)
    one("not-equals",
        lambda left, right: (NotEqualsSubstitution, {"left": left, "right": right}), 2)
    one("if", lambda condition, if_value, else_value="": (IfElseSubstitution, dict(
        condition=condition, if_value=if_value, else_value=else_value)), 2, 3)
    expose_substitution("any")(lambda data: (lambda: AnySubstitution(*data), {}))
    expose_substitution("all")(lambda data: (lambda: AllSubstitution(*data), {}))


_expose_to_frontends()
