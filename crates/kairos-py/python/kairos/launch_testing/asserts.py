"""``launch_testing.asserts``: exit codes, output seen, output seen in order."""

from kairos._layout import stands_for_package

stands_for_package(__name__, ("assert_exit_codes", "assert_output",
                              "assert_sequential_output"))

import contextlib  # noqa: E402
import re  # noqa: E402

from kairos.launch_testing.tools import build_text_match  # noqa: E402
from kairos.launch_testing.util import NO_CMD_ARGS, resolveProcesses  # noqa: E402

EXIT_OK = 0
EXIT_SIGINT = 130
EXIT_SIGQUIT = 131
EXIT_SIGKILL = 137
EXIT_SIGSEGV = 139
EXIT_FORCED = 1

_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")


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
        if build_text_match(expected_output)(text) is not None:
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
        """Up to three lines either side of where the last match ended."""
        first = max(0, self._array_index - 2)
        text = "".join(self._output[first:self._array_index + 4])
        at = self._substring_index + sum(len(t) for t in self._output[first:self._array_index])
        begin = at
        for _ in range(3):
            begin = max(text.rfind("\n", 0, begin), 0)
        if begin:
            begin += 1
        end = at
        for _ in range(3):
            end = max(text.find("\n", end + 1), end)
        return text[begin:end]


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
