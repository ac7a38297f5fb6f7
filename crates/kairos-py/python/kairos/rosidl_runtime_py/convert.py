"""``rosidl_runtime_py.convert``: a message as an ordered dict, YAML or CSV, as ROS 2's
tools print them (``ros2 topic echo``'s forms); what bag-reading scripts use to export
messages."""

from collections import OrderedDict
import sys

import yaml


def _is_message(value):
    return hasattr(value, "get_fields_and_field_types")


def _convert_value(value, truncate_length=None, no_arr=False, no_str=False):
    if isinstance(value, (bytes, bytearray)):
        if truncate_length is not None and len(value) > truncate_length:
            value = bytes(value[:truncate_length]) + b"..."
        return value
    if isinstance(value, str):
        if no_str:
            return "<string length: <{0}>>".format(len(value))
        if truncate_length is not None and len(value) > truncate_length:
            return value[:truncate_length] + "..."
        return value
    if hasattr(value, "tolist") and not _is_message(value):  # numpy arrays and scalars
        value = value.tolist()
        if not isinstance(value, list):
            return value
    if isinstance(value, (list, tuple)):
        if no_arr:
            return "<sequence type: {0}, length: {1}>".format(
                type(value[0]).__name__ if value else "", len(value))
        cut = truncate_length is not None and len(value) > truncate_length
        items = [_convert_value(v, truncate_length, no_arr, no_str)
                 for v in (value[:truncate_length] if cut else value)]
        return items + ["..."] if cut else items
    if isinstance(value, dict):
        return OrderedDict((k, _convert_value(v, truncate_length, no_arr, no_str))
                           for k, v in value.items())
    if _is_message(value):
        return message_to_ordereddict(value, truncate_length=truncate_length, no_arr=no_arr,
                                      no_str=no_str)
    return value


def message_to_ordereddict(msg, *, truncate_length=None, no_arr=False, no_str=False):
    """The message's fields, in ``.msg`` order, nested messages as ordered dicts and
    arrays as lists."""
    return OrderedDict(
        (name, _convert_value(getattr(msg, name), truncate_length, no_arr, no_str))
        for name in msg.get_fields_and_field_types())


class _Dumper(yaml.SafeDumper):
    pass


def _represent_ordereddict(dumper, data):
    return dumper.represent_mapping("tag:yaml.org,2002:map", data.items())


_Dumper.add_representer(OrderedDict, _represent_ordereddict)


def message_to_yaml(msg, *, truncate_length=None, no_arr=False, no_str=False,
                    flow_style=False):
    """The message as YAML text (``ros2 topic echo``'s form)."""
    return yaml.dump(
        message_to_ordereddict(msg, truncate_length=truncate_length, no_arr=no_arr,
                               no_str=no_str),
        Dumper=_Dumper, allow_unicode=True, width=sys.maxsize, default_flow_style=flow_style)


def message_to_csv(msg, *, truncate_length=None, no_arr=False, no_str=False):
    """The message's values, depth first, joined with commas."""
    def flatten(value):
        if isinstance(value, OrderedDict):
            for v in value.values():
                yield from flatten(v)
        elif isinstance(value, list):
            for v in value:
                yield from flatten(v)
        else:
            yield str(value)
    return ",".join(flatten(message_to_ordereddict(
        msg, truncate_length=truncate_length, no_arr=no_arr, no_str=no_str)))
