"""ROS 2's ``launch.LaunchDescription`` on kairos."""

from kairos.launch._core import LaunchDescriptionEntity


class LaunchDescription(LaunchDescriptionEntity):
    def __init__(self, initial_entities=None, *, deprecated_reason=None):
        self.entities = list(initial_entities or [])
        self.deprecated_reason = deprecated_reason

    def visit(self, context):
        return list(self.entities)

    def describe_sub_entities(self):
        return list(self.entities)

    def add_entity(self, entity):
        self.entities.append(entity)

    def add_action(self, action):
        self.entities.append(action)

    def get_launch_arguments(self, conditional_inclusion=False):
        from kairos.launch.actions import DeclareLaunchArgument
        found = []

        def walk(entities):
            for e in entities:
                if isinstance(e, DeclareLaunchArgument):
                    found.append(e)
                elif isinstance(e, LaunchDescription):
                    walk(e.entities)
                elif hasattr(e, "get_sub_entities"):
                    walk(e.get_sub_entities())
        walk(self.entities)
        return found
