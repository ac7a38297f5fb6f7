"""rclpy.waitable: the names programs import. kairos's executors are event driven and
have no wait set to add a custom ``Waitable`` to; ``Node.add_waitable`` says so with a
``NotImplementedError`` (a guard condition, a timer or a task does what most waitables
are written for)."""


class NumberOfEntities:
    """How many wait-set entries of each kind a waitable needs (rclpy's counts)."""

    __slots__ = ("num_subscriptions", "num_guard_conditions", "num_timers", "num_clients",
                 "num_services", "num_events")

    def __init__(self, num_subs=0, num_gcs=0, num_timers=0, num_clients=0,
                 num_services=0, num_events=0):
        self.num_subscriptions = num_subs
        self.num_guard_conditions = num_gcs
        self.num_timers = num_timers
        self.num_clients = num_clients
        self.num_services = num_services
        self.num_events = num_events

    def __add__(self, other):
        return NumberOfEntities(*(getattr(self, s) + getattr(other, s) for s in self.__slots__))

    def __iadd__(self, other):
        for slot in self.__slots__:
            setattr(self, slot, getattr(self, slot) + getattr(other, slot))
        return self

    def __eq__(self, other):
        return isinstance(other, NumberOfEntities) and all(
            getattr(self, s) == getattr(other, s) for s in self.__slots__)

    def __repr__(self):
        return "NumberOfEntities(" + ", ".join(
            f"{s}={getattr(self, s)}" for s in self.__slots__) + ")"


class Waitable:
    """The base class of rclpy's custom wait-set entities. kairos cannot run one yet:
    ``Node.add_waitable`` raises ``NotImplementedError``."""

    def __init__(self, callback_group):
        self.callback_group = callback_group
        self._executor_event = False

    def is_ready(self, wait_set):
        raise NotImplementedError("a Waitable subclass implements is_ready")

    def take_data(self):
        raise NotImplementedError("a Waitable subclass implements take_data")

    async def execute(self, taken_data):
        raise NotImplementedError("a Waitable subclass implements execute")

    def get_num_entities(self):
        raise NotImplementedError("a Waitable subclass implements get_num_entities")

    def add_to_wait_set(self, wait_set):
        raise NotImplementedError("a Waitable subclass implements add_to_wait_set")

    def destroy(self):
        pass
