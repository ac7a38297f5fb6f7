"""``Parser``: reads a frontend file (XML or YAML, by extension, else whichever reads
it) into entities, and entities into a ``LaunchDescription`` of actions."""

import importlib.metadata as importlib_metadata
import io
import os
import traceback
import warnings

from kairos.launch._core import InvalidLaunchFileError
from kairos.launch.frontend.expose import instantiate_action
from kairos.launch.frontend.parse_substitution import (
    parse_if_substitutions, parse_substitution, replace_escaped_characters)


class InvalidFrontendLaunchFileError(InvalidLaunchFileError):
    """A file that no frontend could read; says what each tried."""

    def __init__(self, extension="", *, likely_errors=None):
        self.extension = extension
        self.likely_errors = list(likely_errors or [])
        what = f"a '.{extension}' launch file" if extension else "a launch file"
        tried = "; ".join(f"{type(e).__name__}: {e}" for e in self.likely_errors)
        super().__init__(f"cannot read {what} with the XML or YAML frontend"
                         + (f" ({tried})" if tried else ""))


class Parser:
    """Reads frontend entities into actions and substitutions. ``Parser.load(file)``
    picks the frontend (``launch_xml``, ``launch_yaml``) and returns the root entity
    with that frontend's parser."""

    extensions_loaded = False
    frontend_parsers = None

    @classmethod
    def load_launch_extensions(cls):
        """Makes the actions and substitutions of ``launch`` and ``launch_ros`` known,
        and those of installed extensions (the ``launch.frontend.launch_extension``
        entry points, as ROS 2 finds them; one that fails to load is a warning)."""
        if not cls.extensions_loaded:
            import kairos.launch.actions  # noqa: F401
            import kairos.launch.substitutions  # noqa: F401
            import kairos.launch_ros.actions  # noqa: F401
            import kairos.launch_ros.substitutions  # noqa: F401
            for entry_point in _entry_points("launch.frontend.launch_extension"):
                try:
                    entry_point.load()
                except Exception:
                    warnings.warn(f"Failed to load the launch extension: {entry_point.name}"
                                  f"\n{traceback.format_exc()}")
            cls.extensions_loaded = True

    @classmethod
    def load_parser_implementations(cls):
        """kairos's XML and YAML frontends, and installed ones (the
        ``launch.frontend.parser`` entry points; one that fails to load is a warning)."""
        if cls.frontend_parsers is None:
            from kairos.launch_xml import Parser as XmlParser
            from kairos.launch_yaml import Parser as YamlParser
            parsers = {"xml": XmlParser, "yaml": YamlParser}
            for entry_point in _entry_points("launch.frontend.parser"):
                if entry_point.name in parsers:
                    continue
                try:
                    parsers[entry_point.name] = entry_point.load()
                except Exception:
                    warnings.warn(f"Failed to load the parser extension: {entry_point.name}"
                                  f"\n{traceback.format_exc()}")
            cls.frontend_parsers = dict(sorted(parsers.items()))

    def parse_action(self, entity):
        """The action ``entity`` names, by its exposed parse method."""
        self.load_launch_extensions()
        return instantiate_action(entity, self)

    def parse_substitution(self, value):
        self.load_launch_extensions()
        return parse_substitution(value)

    def parse_if_substitutions(self, value):
        self.load_launch_extensions()
        return parse_if_substitutions(value)

    def escape_characters(self, value):
        return replace_escaped_characters(value)

    def parse_description(self, entity):
        """The ``<launch>`` entity as a ``LaunchDescription``."""
        from kairos.launch.launch_description import LaunchDescription
        if entity.type_name != "launch":
            raise RuntimeError("Expected 'launch' as root tag")
        deprecated = entity.get_attr("deprecated", optional=True)
        actions = [self.parse_action(child) for child in entity.children]
        return LaunchDescription(actions, deprecated_reason=deprecated)

    @classmethod
    def get_available_extensions(cls):
        cls.load_parser_implementations()
        return cls.frontend_parsers.keys()

    @classmethod
    def may_parse(cls, filename):
        return any(filename.endswith("." + ext) for ext in cls.get_file_extensions())

    @classmethod
    def is_filename_valid(cls, filename):
        cls.load_parser_implementations()
        return any(p.may_parse(filename) for p in cls.frontend_parsers.values())

    @classmethod
    def get_parsers_from_filename(cls, filename):
        cls.load_parser_implementations()
        return [p for p in cls.frontend_parsers.values() if p.may_parse(filename)]

    @classmethod
    def get_file_extensions_from_parsers(cls):
        cls.load_parser_implementations()
        return {e for p in cls.frontend_parsers.values() for e in p.get_file_extensions()}

    @classmethod
    def get_file_extensions(cls):
        return set()

    @classmethod
    def load(cls, file):
        """``(root entity, parser)`` of a path or an open text file: the frontend of its
        extension first, then the others; ``InvalidFrontendLaunchFileError`` if none
        reads it."""
        cls.load_parser_implementations()
        if isinstance(file, (str, bytes, os.PathLike)):
            with open(file, "r", encoding="utf-8") as f:
                return cls._load_from(f, os.fsdecode(file))
        return cls._load_from(file, getattr(file, "name", ""))

    @classmethod
    def _load_from(cls, fileobj, filename):
        text = fileobj.read()
        first = cls.get_parsers_from_filename(filename) if isinstance(filename, str) else []
        implementations = first + [p for p in cls.frontend_parsers.values() if p not in first]
        errors = []
        for implementation in implementations:
            try:
                return implementation.load(_Named(text, filename))
            except Exception as e:  # each frontend's own error, kept for the report
                errors.append(e)
        extension = os.path.splitext(filename)[1][1:] if isinstance(filename, str) else ""
        raise InvalidFrontendLaunchFileError(
            extension if cls.is_filename_valid(filename or "") else "", likely_errors=errors)


def _entry_points(group):
    found = importlib_metadata.entry_points()
    if hasattr(found, "select"):
        return list(found.select(group=group))
    return list(found.get(group, []))


class _Named(io.StringIO):
    """The file's text again for each frontend that tries it, with the file's name."""

    def __init__(self, text, name):
        super().__init__(text)
        self.name = name
