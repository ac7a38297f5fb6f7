"""rclpy's callback groups, on kairos's groups.

A group decides which ready callbacks may start: one at a time in a mutually exclusive
group (a node's default), any number at once in a reentrant one. An ``async def``
callback holds its group until its coroutine returns. A kairos group belongs to one node:
a Python group used by several nodes is one kairos group per node.

The two built-in groups are enforced by kairos's executor itself; their ``can_execute``,
``beginning_execution`` and ``ending_execution`` keep rclpy's bookkeeping for code that
calls them. A group class of the program's own (a ``CallbackGroup`` subclass that defines
them, as ros2/examples' throttled group does) is honoured by the executor: each of its
callbacks starts only once ``beginning_execution`` says yes (see ``kairos.executors``).
"""

import itertools
import threading
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

    def can_execute(self, entity):
        """Whether a callback of ``entity`` could start now."""
        raise NotImplementedError("a CallbackGroup subclass defines can_execute")

    def beginning_execution(self, entity):
        """Asks to start a callback of ``entity``; True: it starts now."""
        raise NotImplementedError("a CallbackGroup subclass defines beginning_execution")

    def ending_execution(self, entity):
        """A callback of ``entity`` that ``beginning_execution`` let start has ended."""
        raise NotImplementedError("a CallbackGroup subclass defines ending_execution")

    def _handle(self, node):
        handle = self._handles.get(id(node._core))
        if handle is None:
            # A group of the program's own decides alone: kairos adds no exclusion.
            reentrant = self._reentrant or is_custom(self)
            handle = node._core.create_group(self._name, reentrant)
            self._handles[id(node._core)] = handle
            _owned(handle, self, node)
        return handle

    def __repr__(self):
        return f"<{self._name}>"


class MutuallyExclusiveCallbackGroup(CallbackGroup):
    """One callback of the group runs at a time (the node's default group is one)."""

    def __init__(self):
        super().__init__()
        self._active = None
        self._lock = threading.Lock()

    def can_execute(self, entity):
        with self._lock:
            return self._active is None

    def beginning_execution(self, entity):
        with self._lock:
            if self._active is None:
                self._active = entity
                return True
            return False

    def ending_execution(self, entity):
        with self._lock:
            self._active = None


class ReentrantCallbackGroup(CallbackGroup):
    """Callbacks of the group run at once, on as many workers as the executor has."""

    _reentrant = True

    def can_execute(self, entity):
        return True

    def beginning_execution(self, entity):
        return True

    def ending_execution(self, entity):
        pass


_BUILT_IN = (CallbackGroup, MutuallyExclusiveCallbackGroup, ReentrantCallbackGroup)


def is_custom(group):
    """Whether ``group``'s class decides itself which callbacks start (it defines
    ``can_execute`` or ``beginning_execution`` of its own)."""
    cls = type(group)
    return any(getattr(cls, name) not in [getattr(base, name) for base in _BUILT_IN]
               for name in ("can_execute", "beginning_execution"))


def _default_group(node):
    group = MutuallyExclusiveCallbackGroup()
    group._name = f"default group of {node.get_fully_qualified_name()}"
    handle = node._core.default_group()
    group._handles[id(node._core)] = handle
    _owned(handle, group, node)
    return group


#: Which Python group and node each kairos group (by id) belongs to, for an executor
#: that hands ready callbacks out (``Executor.wait_for_ready_callbacks``).
_owners = {}


def _owned(handle, group, node):
    _owners[handle.id] = (weakref.ref(group), weakref.ref(node))


def owner_of(group_id):
    """The (group, node) whose kairos group has ``group_id``; None for either that is gone
    or unknown (an executor's own task node)."""
    group, node = _owners.get(group_id, (None, None))
    return (group and group()), (node and node())


def deciding_groups(nodes):
    """Whether a callback group of the program's own class (see ``is_custom``) belongs to
    one of ``nodes``."""
    for group, node in list(_owners.values()):
        group, node = group(), node()
        if group is not None and node is not None and node in nodes and is_custom(group):
            return True
    return False
