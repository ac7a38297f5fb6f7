"""ROS 2's packages keep one class per module (``launch.actions.execute_process`` holds
``ExecuteProcess``, which ``launch.actions`` re-exports); kairos keeps a package's names
in one module. Under ``kairos.run``, a module that :func:`stands_for_package` imports as
each submodule ROS 2 has (and no other: a misspelt one is an ``ImportError``), so code
and tests that import from ROS 2's module paths find the names.

Python binds an imported submodule to its parent (``import a.b.c`` sets ``a.b.c``); here
that would bind the module to itself under, say, ``normalize_remap_rule``, over the
function of that name. Such a module refuses that one binding.
"""

import sys
import types


class _StandsForPackage(types.ModuleType):
    def __setattr__(self, name, value):
        if value is self:
            return
        super().__setattr__(name, value)


def stands_for_package(module_name, submodules):
    """Makes the module ``module_name`` import as each of ROS 2's ``submodules`` of it."""
    if isinstance(submodules, str):
        raise TypeError("submodules is a tuple of names, not one string")
    module = sys.modules[module_name]
    module.__class__ = _StandsForPackage
    module.__path__ = []
    module.__kairos_submodules__ = frozenset(submodules)


def stands_for(module, submodule):
    """Whether ``module`` imports as its ROS 2 ``submodule``."""
    return submodule in getattr(module, "__kairos_submodules__", ())
