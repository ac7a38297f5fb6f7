"""ROS 2's ``launch.descriptions`` on kairos: ``Executable``, what a process is (its
command, name, folder and environment, each possibly substitutions) apart from how the
launch runs it (``launch.actions.ExecuteLocal``)."""

from kairos._layout import stands_for_package

# ROS 2's launch.descriptions.executable is this module (see kairos._layout).
stands_for_package(__name__, ("executable",))

import os  # noqa: E402
import re  # noqa: E402
import shlex  # noqa: E402

from kairos.launch._core import (  # noqa: E402
    normalize_to_list_of_substitutions, perform_substitutions)


def _pairs(env):
    """An environment (a mapping, or pairs) as ``(name, value)`` pairs of substitution
    lists; ``None`` stays ``None``."""
    if env is None:
        return None
    items = env.items() if isinstance(env, dict) else env
    return [(normalize_to_list_of_substitutions(k), normalize_to_list_of_substitutions(v))
            for k, v in items]


class Executable:
    """A process to run: ``cmd`` (each item text or substitutions), ``prefix`` (a
    debugger, ``valgrind``; by default the ``launch-prefix`` launch configuration, applied
    to the executables ``launch-prefix-filter`` matches), ``name``, ``cwd``, ``env`` (the
    whole environment) or ``additional_env`` (added to it), ``arguments`` (after ``cmd``).

    ``prepare(context, action)`` performs the substitutions: ``final_cmd``,
    ``final_name``, ``final_cwd`` and ``final_env`` (the environment the process gets,
    before what the launcher adds of its own)."""

    def __init__(self, *, cmd, prefix=None, name=None, cwd=None, env=None,
                 additional_env=None, arguments=None):
        from kairos.launch.substitutions import LaunchConfiguration
        self.cmd = [normalize_to_list_of_substitutions(x) for x in cmd]
        self.cmd += [normalize_to_list_of_substitutions(x) for x in arguments or []]
        self.prefix = normalize_to_list_of_substitutions(
            LaunchConfiguration("launch-prefix", default="") if prefix is None else prefix)
        self.prefix_filter = None if prefix is not None else normalize_to_list_of_substitutions(
            LaunchConfiguration("launch-prefix-filter", default=""))
        self.name = None if name is None else normalize_to_list_of_substitutions(name)
        self.cwd = None if cwd is None else normalize_to_list_of_substitutions(cwd)
        self.env = _pairs(env)
        self.additional_env = _pairs(additional_env)
        self.arguments = arguments
        self.final_cmd = None
        self.final_name = None
        self.final_cwd = None
        self.final_env = None
        self.launch_env = None
        self.env_only = None

    def command(self, context):
        """The command line, the prefix first where it applies."""
        cmd = [perform_substitutions(context, x) for x in self.cmd]
        apply_prefix = True
        if self.prefix_filter is not None and cmd:
            pattern = perform_substitutions(context, self.prefix_filter)
            apply_prefix = re.match(pattern, os.path.basename(cmd[0])) is not None
        if apply_prefix:
            cmd = shlex.split(perform_substitutions(context, self.prefix)) + cmd
        return cmd

    def _launch_environment(self, context):
        """``(what the launch file sets, whether it is the whole environment)``."""
        whole = self.env is not None
        env = {perform_substitutions(context, k): perform_substitutions(context, v)
               for k, v in self.env} if whole else dict(context._extra_env)
        for k, v in self.additional_env or []:
            env[perform_substitutions(context, k)] = perform_substitutions(context, v)
        return env, whole

    def prepare(self, context, action, cmd=None):
        """Performs the substitutions (``cmd``: a command line the action made itself).
        Besides the ``final_*`` values: ``launch_env``, what the launch file sets, and
        ``env_only``, whether that is the whole environment (``env=``) or added to the
        launch's (the launcher adds its own)."""
        self.final_cmd = self.command(context) if cmd is None else cmd
        self.final_name = perform_substitutions(context, self.name) if self.name is not None \
            else os.path.basename(self.final_cmd[0]) if self.final_cmd else "process"
        self.final_cwd = None if self.cwd is None else perform_substitutions(context, self.cwd)
        self.launch_env, self.env_only = self._launch_environment(context)
        self.final_env = self.launch_env if self.env_only else \
            dict(context.environment, **self.launch_env)

    def __str__(self):
        return " ".join(self.final_cmd) if self.final_cmd is not None else \
            " ".join("".join(getattr(s, "text", "<substitution>") for s in x)
                     for x in self.cmd)
