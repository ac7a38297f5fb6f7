"""``launch_testing.actions``: the action that says the launch is ready to be tested."""

from kairos._layout import stands_for_package

stands_for_package(__name__, ("ready",))

from kairos.launch._core import Action, eprint  # noqa: E402


class ReadyToTest(Action):
    """Reached, it lets the tests that run during the launch start."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self._callbacks = []

    def _add_callback(self, callback):
        self._callbacks.append(callback)

    def execute(self, context):
        for callback in self._callbacks:
            try:
                callback()
            except Exception as e:  # noqa: BLE001 - one callback must not stop the others
                eprint(f"ReadyToTest: a callback failed: {type(e).__name__}: {e}")
        return None
