"""``launch_testing.tools``: a process launched from a test, and a proxy to watch it."""

from kairos._layout import stands_for_package

stands_for_package(__name__, ("output", "process", "text"))

import contextlib  # noqa: E402
import os  # noqa: E402
import re  # noqa: E402

from kairos.launch.events.process import ProcessExited, ProcessStarted  # noqa: E402


class ProcessProxy:
    """A view of one ``ExecuteProcess`` of the launch: its state, its output, waits."""

    def __init__(self, process_action, proc_info, proc_output, *, output_filter=None):
        from kairos.launch.actions import ExecuteLocal
        from kairos.launch_testing.io_handler import ActiveIoHandler
        from kairos.launch_testing.proc_info_handler import ActiveProcInfoHandler
        for value, kind, name in ((process_action, ExecuteLocal, "process_action"),
                                  (proc_info, ActiveProcInfoHandler, "proc_info"),
                                  (proc_output, ActiveIoHandler, "proc_output")):
            if not isinstance(value, kind):
                raise TypeError(f"'{name}' must be a {kind.__name__}, not "
                                f"{type(value).__name__}")
        if output_filter is not None and not callable(output_filter):
            raise TypeError(f"Expected 'output_filter' to be callable but got "
                            f"'{output_filter!r}'")
        self._process_action = process_action
        self._proc_info = proc_info
        self._proc_output = proc_output
        self._output_filter = output_filter

    @property
    def target_process_action(self):
        return self._process_action

    def _text(self, keep):
        try:
            events = self._proc_output._io_handler[self._process_action]
        except (KeyError, TypeError):
            return ""
        text = "".join(e.text.decode(errors="replace") for e in events if keep(e))
        return self._output_filter(text) if self._output_filter else text

    @property
    def stdout(self):
        return self._text(lambda e: e.from_stdout)

    @property
    def stderr(self):
        return self._text(lambda e: e.from_stderr)

    @property
    def output(self):
        return self._text(lambda e: True)

    def _state(self):
        handler = self._proc_info._proc_info_handler
        if self._process_action not in handler.processes():
            return None
        return handler[self._process_action]

    @property
    def running(self):
        return isinstance(self._state(), ProcessStarted)

    @property
    def terminated(self):
        return isinstance(self._state(), ProcessExited)

    @property
    def exit_code(self):
        return self._proc_info[self._process_action].returncode

    def wait_for_shutdown(self, timeout=None):
        """Whether the process ended within ``timeout`` seconds (``None``: until it does)."""
        with self._proc_info.proc_event:
            return self._proc_info.proc_event.wait_for(lambda: self.terminated,
                                                       timeout=timeout)

    def wait_for_output(self, condition=None, timeout=None):
        """Whether, within ``timeout`` seconds, the process runs and its output satisfies
        ``condition`` (``None``: any, even none yet); true or false, it carries the output."""
        condition = condition or (lambda output: True)
        if not callable(condition):
            raise TypeError(f"Expected 'condition' to be callable but got '{condition!r}'")
        seen = [None]

        def satisfied():
            seen[0] = self.output
            return self.running and condition(seen[0])
        with self._proc_output.io_event:
            result = self._proc_output.io_event.wait_for(satisfied, timeout=timeout)
        return _BoolWithText(bool(result), seen[0])


class _BoolWithText:
    def __init__(self, result, output):
        self._result = result
        self._output = output

    def __bool__(self):
        return self._result

    def __repr__(self):
        return f"<BoolWithText({self._result}): {self._output!r}>"


@contextlib.contextmanager
def launch_process(launch_service, process_action, proc_info, proc_output, **kwargs):
    """Starts ``process_action`` in the running launch and yields its
    :class:`ProcessProxy`; on leaving, stops the process if it still runs."""
    from kairos.launch.actions import ExecuteLocal
    from kairos.launch.events import IncludeLaunchDescription
    from kairos.launch.events.process import ShutdownProcess, matches_action
    from kairos.launch.launch_description import LaunchDescription
    if not isinstance(process_action, ExecuteLocal):
        raise TypeError(f"'process_action' must be an ExecuteProcess, not "
                        f"{type(process_action).__name__}")
    launch_service.emit_event(IncludeLaunchDescription(LaunchDescription([process_action])))
    proxy = ProcessProxy(process_action, proc_info, proc_output, **kwargs)
    try:
        yield proxy
    finally:
        if not proxy.terminated:
            launch_service.emit_event(ShutdownProcess(
                process_matcher=matches_action(process_action)))


def normalize_lineseps(text):
    return text.replace(os.linesep, "\n").replace("\r\n", "\n")


def build_text_match(expected_text, *, strict=False):
    """A callable ``match(text, start=0)`` giving where ``expected_text`` (text, a regex,
    or a list of them that must follow each other) is in ``text``, ``(begin, end)``, or
    ``None``; ``strict``: it is all the text from ``start``, each part right after the
    last."""
    if isinstance(expected_text, str):
        def match(text, start=0):
            text = normalize_lineseps(text)
            if strict:
                return (start, start + len(expected_text)) \
                    if text[start:] == expected_text else None
            at = text.find(expected_text, start)
            return None if at < 0 else (at, at + len(expected_text))
        return match
    if hasattr(expected_text, "search") and hasattr(expected_text, "match"):
        def match(text, start=0):
            text = normalize_lineseps(text)
            found = (expected_text.match if strict else expected_text.search)(text, start)
            return None if found is None else (found.start(), found.end())
        return match
    return _sequence([build_text_match(part) for part in _parts(expected_text)], strict,
                     normalize_lineseps)


def build_line_match(expected_lines, *, strict=False):
    """As :func:`build_text_match`, over a list of lines: a text is in a line (``strict``:
    every line from ``start`` is it), a regex matches a line's start, a list is lines in
    order (``strict``: one right after the other). Gives ``(first, past_last)`` lines."""
    if isinstance(expected_lines, str) or hasattr(expected_lines, "match"):
        if isinstance(expected_lines, str):
            def fits(line):
                return (line == expected_lines) if strict else (expected_lines in line)
        else:
            def fits(line):
                return expected_lines.match(line) is not None

        def match(lines, start=0):
            rest = lines[start:]
            if strict:
                return (start, len(lines)) if all(fits(line) for line in rest) else None
            return next(((i, i + 1) for i, line in enumerate(rest, start) if fits(line)),
                        None)
        return match
    return _sequence([build_line_match(part) for part in _parts(expected_lines)], strict,
                     lambda lines: lines)


def _parts(expected):
    try:
        parts = list(expected)
    except TypeError:
        raise ValueError(f"Unknown format for expected output: {expected!r}") from None
    if not parts:
        raise ValueError("an empty list of expected output")
    return parts


def _sequence(matches, strict, normalize):
    def match(actual, start=0):
        actual = normalize(actual)
        found = matches[0](actual, start)
        if found is None or (strict and found[0] != start):
            return None
        begin, end = found
        for part in matches[1:]:
            found = part(actual, end)
            if found is None or (strict and found[0] != end):
                return None
            end = found[1]
        return begin, end
    return match


def basic_output_filter(filtered_prefixes=None, filtered_patterns=None):
    """A filter of output text that drops the lines starting with one of
    ``filtered_prefixes`` (by default ``pid`` and ``rc``) or matching one of
    ``filtered_patterns``."""
    prefixes = ["pid", "rc"] if filtered_prefixes is None else list(filtered_prefixes)
    patterns = [re.compile(p) for p in (filtered_patterns or [])]

    def keep(line):
        return not any(line.startswith(p) for p in prefixes) and \
            not any(p.match(line) for p in patterns)
    return lambda output: "".join(line for line in output.splitlines(keepends=True)
                                  if keep(line))


def expected_output_from_file(path, encoding=None):
    """The lines of ``path.txt`` or, without it, the regexes of ``path.regex``."""
    for suffix, make in ((".txt", str), (".regex", re.compile)):
        if os.path.isfile(path + suffix):
            with open(path + suffix, encoding=encoding) as f:
                return [make(line) for line in f.read().splitlines()]
    raise RuntimeError(f"could not find output check file: {path}")


_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")


def expect_output(text=None, *, lines=None, expected_text=None, expected_lines=None,
                  strip_ansi_escape_sequences=True, strict=False):
    """Whether output (``text`` or ``lines``, one of them) is what is expected
    (``expected_text`` or ``expected_lines``, one of them)."""
    if (text is None) == (lines is None):
        raise ValueError("Either lines or text, but not both, must be specified")
    if (expected_text is None) == (expected_lines is None):
        raise ValueError("Either expected lines or text, but not both, must be specified")
    if expected_text is not None:
        text = "\n".join(lines) if text is None else text
        if strip_ansi_escape_sequences:
            text = _ANSI.sub("", text)
        return build_text_match(expected_text, strict=strict)(text) is not None
    lines = text.splitlines() if lines is None else lines
    if strip_ansi_escape_sequences:
        lines = [_ANSI.sub("", line) for line in lines]
    return build_line_match(expected_lines, strict=strict)(lines) is not None


__all__ = ["ProcessProxy", "basic_output_filter", "expect_output", "expected_output_from_file",
           "launch_process"]
