"""Which action or substitution each frontend name makes: ``@expose_action('executable')``
on a class with a ``parse(entity, parser)`` class method (or on a function), and
``@expose_substitution('env')`` likewise; ``parse`` returns the type and its keyword
arguments."""

import functools
import inspect

action_parse_methods = {}
substitution_parse_methods = {}


def instantiate_action(entity, parser):
    """The action ``entity`` names, made by its exposed parse method."""
    method = action_parse_methods.get(entity.type_name)
    if method is None:
        raise RuntimeError(f"Unrecognized entity of the type: {entity.type_name}")
    action_type, kwargs = method(entity, parser)
    return action_type(**kwargs)


def instantiate_substitution(type_name, args=None):
    """The substitution ``$(type_name args...)``; each argument is a list of
    substitutions."""
    method = substitution_parse_methods.get(type_name)
    if method is None:
        raise RuntimeError(f"Unknown substitution: {type_name}")
    substitution_type, kwargs = method([] if args is None else args)
    return substitution_type(**kwargs)


def __expose_impl(name, methods, kind):
    def decorator(exposed):
        if inspect.isclass(exposed):
            if not inspect.ismethod(getattr(exposed, "parse", None)):
                raise RuntimeError(
                    "Did not find a class method called 'parse' in the class being decorated.")
            method = exposed.parse
        elif inspect.isfunction(exposed):
            method = exposed
        else:
            raise RuntimeError(
                f"Exposed {kind} parser for {name} is not a callable or a class "
                "containing a parse method")
        known = methods.get(name)
        if known is not None and getattr(known, "__wrapped__", known) != method:
            raise RuntimeError(
                f"Two {kind} parsing methods exposed with the same name: [{name}].")
        if kind == "action":
            @functools.wraps(method)
            def checked(entity, parser):
                made = method(entity, parser)
                entity.assert_entity_completely_parsed()
                return made
            methods[name] = checked
        else:
            methods[name] = method
        return exposed
    return decorator


def expose_action(name):
    """Makes the decorated class (its ``parse``) or function the action of ``<name>``."""
    return __expose_impl(name, action_parse_methods, "action")


def expose_substitution(name):
    """Makes the decorated class (its ``parse``) or function the substitution
    ``$(name ...)``."""
    return __expose_impl(name, substitution_parse_methods, "substitution")


def expose_substitution_of(name, make, least, most=None):
    """Exposes ``$(name ...)`` taking ``least`` to ``most`` arguments (``least`` when
    ``most`` is not given): ``make(*arguments)`` gives ``(type, kwargs)``; another count is
    a ``TypeError`` saying how many it takes."""
    most = least if most is None else most

    def parse(data):
        if not least <= len(data) <= most:
            count = str(least) if least == most else f"{least} to {most}"
            raise TypeError(f"{name} substitution expects {count} argument(s), got {len(data)}")
        return make(*data)
    expose_substitution(name)(parse)
