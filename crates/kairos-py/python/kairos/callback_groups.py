"""rclpy's callback groups, on kairos's groups.

A group decides which ready callbacks may start: one at a time in a mutually exclusive
group (a node's default), any number at once in a reentrant one. An ``async def``
callback holds its group until its coroutine returns. A kairos group belongs to one node:
a Python group used by several nodes is one kairos group per node.
"""

import itertools
import weakref

_numbers = itertools.count(1)


class CallbackGroup:
    _reentrant = False

    def __init__(self):
        self._name = f"{type(self).__name__}#{next(_numbers)}"
        self._handles = {}
        self.entities = weakref.WeakSet()

    def add_entity(self, entity):
        """Records that ``entity`` (a timer, subscription, service, client, guard
        condition) runs its callbacks in this group (the node does it on creation)."""
        self.entities.add(entity)

    def has_entity(self, entity):
        return entity in self.entities

    def _handle(self, node):
        handle = self._handles.get(id(node._core))
        if handle is None:
            handle = node._core.create_group(self._name, self._reentrant)
            self._handles[id(node._core)] = handle
        return handle

    def __repr__(self):
        return f"<{self._name}>"


class MutuallyExclusiveCallbackGroup(CallbackGroup):
    """One callback of the group runs at a time (the node's default group is one)."""


class ReentrantCallbackGroup(CallbackGroup):
    """Callbacks of the group run at once, on as many workers as the executor has."""

    _reentrant = True


def _default_group(node):
    group = MutuallyExclusiveCallbackGroup()
    group._name = f"default group of {node.get_fully_qualified_name()}"
    group._handles[id(node._core)] = node._core.default_group()
    return group
