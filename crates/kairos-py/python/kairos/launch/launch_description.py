"""ROS 2's ``launch.LaunchDescription`` on kairos."""

from kairos.launch._core import LaunchDescriptionEntity


class LaunchDescription(LaunchDescriptionEntity):
    def __init__(self, initial_entities=None, *, deprecated_reason=None):
        self.entities = list(initial_entities or [])
        self.deprecated_reason = deprecated_reason

    @property
    def deprecated(self):
        """Whether the description was marked deprecated (``deprecated_reason``)."""
        return self.deprecated_reason is not None

    def describe(self):
        return "LaunchDescription"

    def visit(self, context):
        if self.deprecated:
            from kairos.launch.logging import get_logger
            location = getattr(context, "locals_", {}).get("current_launch_file_path")
            where = f" ({location})" if location else ""
            get_logger("launch").warning(
                f"launch description{where} is deprecated: {self.deprecated_reason}")
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
