"""``rosidl_runtime_py.set_message``: fills a message from a dict of values (what ``ros2
topic pub`` does with its YAML argument)."""


def _is_message(value):
    return hasattr(value, "get_fields_and_field_types")


def set_message_fields(msg, values, expand_header_auto=False, expand_time_now=False):
    """Sets each field of ``msg`` named in ``values``; a nested message takes a dict, a
    sequence of messages a list of dicts, and a number is converted to the field's type
    (an int given for a float field, ...). A name the message does not have raises
    ``AttributeError`` naming it and the fields it has."""
    if not isinstance(values, dict):
        raise TypeError(f"values for {type(msg).__name__} must be a dict, got "
                        f"{type(values).__name__}")
    fields = msg.get_fields_and_field_types()
    for name, value in values.items():
        if name not in fields:
            raise AttributeError(f"{type(msg).__name__} has no field '{name}' (its fields: "
                                 f"{', '.join(fields)})")
        current = getattr(msg, name)
        nested = getattr(type(msg), "_field_types", {}).get(name)
        if _is_message(current) and isinstance(value, dict):
            set_message_fields(current, value)
            continue
        if nested is not None and isinstance(value, (list, tuple)):
            items = []
            for item in value:
                element = nested()
                if isinstance(item, dict):
                    set_message_fields(element, item)
                    items.append(element)
                else:
                    items.append(item)
            setattr(msg, name, items)
            continue
        if isinstance(current, bool) or current is None:
            setattr(msg, name, value)
        elif isinstance(current, (int, float)) and isinstance(value, (int, float)) \
                and not isinstance(value, bool):
            setattr(msg, name, type(current)(value))
        else:
            setattr(msg, name, value)
