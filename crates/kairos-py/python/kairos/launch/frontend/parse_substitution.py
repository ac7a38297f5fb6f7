"""Substitutions in frontend text: ``why_$(env WHERE here)_$(var name)``.

The grammar is ROS 2's (``launch/frontend/grammar.lark``), read here by hand instead of
with a parser generator:

- text outside substitutions is kept as it is (quotes included), but for ``\\x``, which
  is ``x``; a ``$`` not followed by ``(``, or after ``\\``, is text;
- ``$(NAME ARG ARG ...)``: ``NAME`` is a letter then letters, digits, ``_`` or ``-``;
  arguments are separated by one space; an argument is a run of text and substitutions
  without spaces, quotes or unescaped parentheses, or a ``'...'`` or ``"..."`` string
  whose substitutions take arguments in the same quotes' rules;
- each argument reaches the substitution's ``parse`` as a list of substitutions.

A malformed text is a ``ValueError`` that shows where reading stopped.
"""

import re

from kairos.launch.frontend.expose import instantiate_substitution

_ESCAPED = re.compile(r"\\(.)")


def replace_escaped_characters(data):
    """``\\x`` as ``x``."""
    return _ESCAPED.sub(r"\1", data)


def _text(raw):
    from kairos.launch.substitutions import TextSubstitution
    return TextSubstitution(text=replace_escaped_characters(raw))


class _Reader:
    def __init__(self, text):
        self.text = text
        self.at = 0

    def fail(self, what):
        raise ValueError(
            f"cannot read substitutions in {self.text!r}: {what} at character {self.at} "
            f"({self.text[:self.at]!r} read)")

    def peek(self, n=1):
        return self.text[self.at:self.at + n]

    def opens_substitution(self):
        """``$(`` here, not escaped."""
        return self.peek(2) == "$(" and not self.escaped(self.at)

    def escaped(self, index):
        return index > 0 and self.text[index - 1] == "\\"

    def template(self):
        """The whole text: text and substitutions."""
        parts = []
        while self.at < len(self.text):
            if self.opens_substitution():
                parts.append(self.substitution(quote=None))
            else:
                start = self.at
                while self.at < len(self.text) and not self.opens_substitution():
                    self.at += 1
                parts.append(_text(self.text[start:self.at]))
        return parts

    def substitution(self, quote):
        self.at += 2
        match = re.compile(r"[A-Za-z][A-Za-z0-9_-]*").match(self.text, self.at)
        if match is None:
            self.fail("a substitution's name (a letter first)")
        name = match.group(0)
        self.at = match.end()
        args = []
        while self.peek() == " ":
            self.at += 1
            args.append(self.value(quote))
        if self.peek() != ")":
            self.fail(f"')' closing $({name} ...)")
        self.at += 1
        return instantiate_substitution(name, args or None)

    def value(self, quote):
        """One argument: a quoted string (outside quotes only) or a run of parts."""
        if quote is None and self.peek() in ("'", '"'):
            return self.quoted(self.peek())
        parts = []
        while self.at < len(self.text):
            if self.opens_substitution():
                parts.append(self.substitution(quote))
                continue
            start = self.at
            while self.at < len(self.text) and self.in_argument(quote):
                self.at += 1
            if self.at == start:
                break
            parts.append(_text(self.text[start:self.at]))
        if not parts:
            self.fail("an argument")
        return parts

    def in_argument(self, quote):
        """Whether the character here is part of an unquoted argument's text."""
        c = self.text[self.at]
        if c == "$":
            return not self.opens_substitution()
        if c in "()":
            return self.escaped(self.at)
        if c == " ":
            return False
        if c in "'\"":
            # Inside a quoted string the other quote is text; an escaped one is text.
            return (quote is not None and c != quote) or self.escaped(self.at)
        return True

    def quoted(self, quote):
        """``'...'`` or ``"..."``: text and substitutions until the closing quote."""
        self.at += 1
        parts = []
        while True:
            if self.at >= len(self.text):
                self.fail(f"the closing {quote}")
            if self.opens_substitution():
                parts.append(self.substitution(quote))
                continue
            if self.text[self.at] == quote and not self.escaped(self.at):
                self.at += 1
                return parts
            start = self.at
            while self.at < len(self.text) and not self.opens_substitution() and not (
                    self.text[self.at] == quote and not self.escaped(self.at)):
                self.at += 1
            parts.append(_text(self.text[start:self.at]))


def _load_substitutions():
    """Makes ``launch``'s and ``launch_ros``' substitutions known (they register
    themselves when imported)."""
    import kairos.launch.substitutions  # noqa: F401
    import kairos.launch_ros.substitutions  # noqa: F401


def parse_substitution(string_value):
    """The substitutions of ``string_value``: text and ``$(...)`` in order."""
    _load_substitutions()
    if not string_value:
        return [_text(string_value)]
    return _Reader(string_value).template()


def parse_if_substitutions(value):
    """Text with substitutions as their list, text without as itself; other scalars as
    they are; a list item by item, which must all be of one type (``ValueError``)."""
    from kairos.launch.substitutions import TextSubstitution
    kinds = set()

    def one(item):
        if isinstance(item, str):
            parsed = parse_substitution(item)
            if len(parsed) == 1 and isinstance(parsed[0], TextSubstitution):
                kinds.add(str)
                return parsed[0].text
            return parsed
        kinds.add(type(item))
        return item

    result = [one(x) for x in value] if isinstance(value, list) else one(value)
    if len(kinds) > 1:
        raise ValueError("The result is a non-uniform list")
    return result
