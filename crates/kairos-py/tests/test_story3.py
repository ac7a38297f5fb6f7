"""Story 3 in Python: each rclpy pattern of a service call from a callback ends in
kairos.WouldDeadlock at once (where rclpy hangs) or completes (where rclpy works)."""

import re

import pytest

from kairos import demo


@pytest.mark.parametrize("index", range(len(demo.CASES)), ids=[c[0] for c in demo.CASES])
def test_pattern_ends_as_expected_and_never_hangs(session, index):
    name, _what, make_executor, build, expected = demo.CASES[index]
    outcome, detail, took, report = demo.run_case(index, name, make_executor, build)
    assert outcome == expected, detail
    if expected == "would_deadlock":
        assert took < demo.FAST, f"WouldDeadlock took {took:.3f} s, not 'at once'"
        # Rust's message, word for word: what was called, in which callback, why, the fix.
        assert re.match(r"^(call\(\) to service|spin_until_future_complete\(\)).* inside "
                        r"callback '.*' would deadlock: .* Fix: ", detail), detail
    else:
        assert detail == "response 5"
    assert report, f"shutdown was not clean: {report}"


def test_demo_exits_zero_with_every_case_as_expected(capsys):
    assert demo.main(["deadlock"]) == 0
    out = capsys.readouterr().out
    assert "PASS deadlock" in out
    for name, *_ in demo.CASES:
        assert name in out
