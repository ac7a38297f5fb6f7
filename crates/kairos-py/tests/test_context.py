"""rclpy's Context lifecycle: init once, shut down once, nodes only in a running context,
and shutdown destroys the context's nodes and calls its on_shutdown callbacks."""

import pytest

import kairos
from kairos.context import Context
from kairos.exceptions import NotInitializedException
from kairos.node import Node


def test_a_context_runs_between_init_and_shutdown_once():
    context = Context()
    assert not context.ok()
    with pytest.raises(RuntimeError, match="initialized before"):
        kairos.shutdown(context=context)
    kairos.init(context=context)
    assert context.ok()
    with pytest.raises(RuntimeError, match="only be called once"):
        kairos.init(context=context)
    kairos.shutdown(context=context)
    assert not context.ok()
    with pytest.raises(RuntimeError, match="already shut down"):
        kairos.shutdown(context=context)
    kairos.try_shutdown(context=context)  # quiet
    with pytest.raises(RuntimeError, match="only be called once"):
        context.init()


def test_the_default_context_starts_again_after_shutdown():
    assert not kairos.ok(), "ok() before init() is false"
    for _ in range(2):
        kairos.init()
        assert kairos.ok()
        kairos.shutdown()
        assert not kairos.ok()
    with pytest.raises(RuntimeError):
        kairos.shutdown()


def test_a_node_needs_a_running_context():
    with pytest.raises(NotInitializedException):
        Node("ctx_too_early")
    context = Context()
    with pytest.raises(NotInitializedException):
        kairos.create_node("ctx_too_early", context=context)


def test_shutdown_destroys_the_nodes_and_calls_the_callbacks():
    called = []

    class Owner:
        def done(self):
            called.append("method")

    owner = Owner()
    with kairos.init(domain_id=0) as init:
        context = init.context
        assert context.get_domain_id() == 0
        node = Node("ctx_owned", context=context)
        watcher = Node("ctx_watcher", context=context)
        assert "/ctx_owned" in watcher.get_fully_qualified_node_names()
        context.on_shutdown(lambda: called.append("function"))
        context.on_shutdown(owner.done)
        with pytest.raises(TypeError):
            context.on_shutdown(42)
    assert called == ["function", "method"]
    assert not context.ok()
    with pytest.raises(Exception):
        node.get_fully_qualified_node_names()
    context.on_shutdown(lambda: called.append("late"))
    assert called[-1] == "late", "a callback added after shutdown runs at once"


def test_a_negative_domain_id_is_refused():
    with pytest.raises(RuntimeError, match="lower than zero"):
        kairos.init(context=Context(), domain_id=-1)
