"""``launch.some_entities_type``: what an action may return, an entity or a list of them."""

import collections.abc
from typing import Iterable, Union

from kairos.launch._core import LaunchDescriptionEntity

SomeEntitiesType = Union[LaunchDescriptionEntity, Iterable[LaunchDescriptionEntity]]

SomeEntitiesType_types_tuple = (LaunchDescriptionEntity, collections.abc.Iterable)
