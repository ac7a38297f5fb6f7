"""``launch_testing.asserts``: exit codes, output seen, output seen in order."""

from kairos._layout import stands_for_package

stands_for_package(__name__, ("assert_exit_codes", "assert_output",
                              "assert_sequential_output"))

import contextlib  # noqa: E402
import re  # noqa: E402

from kairos.launch_testing.util import NO_CMD_ARGS, resolveProcesses  # noqa: E402

EXIT_OK = 0
EXIT_SIGINT = 130
EXIT_SIGQUIT = 131
EXIT_SIGKILL = 137
EXIT_SIGSEGV = 139
EXIT_FORCED = 1

_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")


def _find(expected, text, start=0):
    """Where ``expected`` (text, a compiled regex, or a list of them, in order) first
    shows in ``text`` from ``start``: ``(begin, end)``, or ``None``."""
    if isinstance(expected, str):
        at = text.find(expected, start)
        return None if at < 0 else (at, at + len(expected))
    if hasattr(expected, "search"):
        match = expected.search(text, start)
        return None if match is None else (match.start(), match.end())
    try:
        parts = list(expected)
    except TypeError:
        raise ValueError(f"Unknown format for expected text: {expected!r}") from None
    if not parts:
        raise ValueError("expected text is an empty list")
    first = _find(parts[0], text, start)
    if first is None:
        return None
    end = first[1]
    for part in parts[1:]:
        found = _find(part, text, end)
        if found is None:
            return None
        end = found[1]
    return first[0], end


def assertExitCodes(proc_info, allowable_exit_codes=(EXIT_OK,), process=None,  # noqa: N802
                    cmd_args=None, *, strict_proc_matching=True):
    """Every process ``process`` names (all by default) exited with one of
    ``allowable_exit_codes``."""
    for code in allowable_exit_codes:
        assert isinstance(code, int), f"Provided exit code {code} is not an int"
    for action in resolveProcesses(proc_info, process=process, cmd_args=cmd_args,
                                   strict_proc_matching=strict_proc_matching):
        info = proc_info[action]
        returncode = getattr(info, "returncode", None)
        assert returncode in allowable_exit_codes, \
            f"Proc {info.process_name} exited with code {returncode}"


def assertInStream(proc_output, expected_output, process, cmd_args=None, *,  # noqa: N802
                   output_filter=None, strict_proc_matching=True,
                   strip_ansi_escape_sequences=True, stream="stderr"):
    """``expected_output`` shows in ``stream`` ('stdout' or 'stderr') of one of the
    processes ``process`` names."""
    if stream not in ("stdout", "stderr"):
        raise ValueError("Invalid value for stream; must be 'stdout' or 'stderr'")
    if output_filter is not None and not callable(output_filter):
        raise ValueError("output_filter is not callable")
    processes = resolveProcesses(proc_output, process=process, cmd_args=cmd_args,
                                 strict_proc_matching=strict_proc_matching)
    for action in processes:
        text = "".join(event.text.decode(errors="replace") for event in proc_output[action]
                       if (event.from_stdout if stream == "stdout" else event.from_stderr))
        text = text.replace("\r\n", "\n")
        if strip_ansi_escape_sequences:
            text = _ANSI.sub("", text)
        if output_filter is not None:
            text = output_filter(text)
        if _find(expected_output, text) is not None:
            return
    names = ", ".join(sorted(p.process_details["name"] for p in processes))
    raise AssertionError(
        f"Did not find '{expected_output}' in output for any of the matching processes: "
        f"{names}")


def assertInStdout(proc_output, expected_output, process, cmd_args=None, *,  # noqa: N802
                   output_filter=None, strict_proc_matching=True,
                   strip_ansi_escape_sequences=True):
    assertInStream(proc_output, expected_output, process, cmd_args,
                   output_filter=output_filter, strict_proc_matching=strict_proc_matching,
                   strip_ansi_escape_sequences=strip_ansi_escape_sequences, stream="stdout")


def assertInStderr(proc_output, expected_output, process, cmd_args=None, *,  # noqa: N802
                   output_filter=None, strict_proc_matching=True,
                   strip_ansi_escape_sequences=True):
    assertInStream(proc_output, expected_output, process, cmd_args,
                   output_filter=output_filter, strict_proc_matching=strict_proc_matching,
                   strip_ansi_escape_sequences=strip_ansi_escape_sequences, stream="stderr")


def assertDefaultStream():  # noqa: N802
    """The stream ``assertInStream`` reads when none is named."""
    return "stderr"


class SequentialTextChecker:
    """Checks that texts show in the output in the order they are asked for."""

    def __init__(self, output):
        self._output = output
        self._array_index = 0
        self._substring_index = 0

    def assertInText(self, msg):  # noqa: N802
        return self.assertInStdout(msg)

    def assertInStdout(self, msg):  # noqa: N802
        substring_index = self._substring_index
        for array_index in range(self._array_index, len(self._output)):
            found = self._output[array_index].find(msg, substring_index)
            if found != -1:
                self._array_index = array_index
                self._substring_index = found + len(msg)
                return
            substring_index = 0
        raise AssertionError(
            f"'{msg}' not found in sequence after previous match.  The output near the last "
            f"matched line:\n{self.get_nearby_lines()}")

    def get_nearby_lines(self):
        start = max(0, self._array_index - 2)
        return "".join(self._output[start:self._array_index + 4])


@contextlib.contextmanager
def assertSequentialStdout(proc_output, process, cmd_args=None):  # noqa: N802
    """A checker of one process's output (exactly one must match) for texts in order."""
    action = resolveProcesses(proc_output, process=process, cmd_args=cmd_args,
                              strict_proc_matching=True)[0]
    yield SequentialTextChecker([event.text.decode(errors="replace")
                                 for event in proc_output[action]])


__all__ = ["EXIT_FORCED", "EXIT_OK", "EXIT_SIGINT", "EXIT_SIGKILL", "EXIT_SIGQUIT",
           "EXIT_SIGSEGV", "NO_CMD_ARGS", "SequentialTextChecker", "assertDefaultStream",
           "assertExitCodes", "assertInStderr", "assertInStdout", "assertInStream",
           "assertSequentialStdout"]
