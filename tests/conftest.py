"""Checks that hold around every test, and fixtures that several test files share."""

from __future__ import annotations

import signal
import threading

import pytest


def _ctrl_c_state() -> tuple[object, bool]:
    """SIGINT's handler and whether this thread blocks it."""
    return signal.getsignal(signal.SIGINT), signal.SIGINT in signal.pthread_sigmask(signal.SIG_BLOCK, [])


@pytest.fixture(autouse=True)
def _ctrl_c_left_as_found():
    """No test (and no project code it calls) may leave Ctrl-C ignored, blocked or rerouted in the process: a
    user's process would lose Ctrl-C, and the child processes of later tests inherit an ignored or blocked SIGINT
    (the eval Ctrl-C tests then hang)."""
    if threading.current_thread() is not threading.main_thread() or not hasattr(signal, "pthread_sigmask"):
        yield
        return
    before = _ctrl_c_state()
    yield
    after = _ctrl_c_state()
    if after != before:
        signal.signal(signal.SIGINT, before[0])  # put it back for the tests that follow
        signal.pthread_sigmask(signal.SIG_BLOCK if before[1] else signal.SIG_UNBLOCK, {signal.SIGINT})
        pytest.fail(f"the test left Ctrl-C changed: handler and blocked were {before}, are {after}")


@pytest.fixture
def policy_withheld(monkeypatch, tmp_path_factory):
    """The shipped policies without the one of ``tests.tables.UNSHIPPED_RULESET`` at ``UNSHIPPED_PLAYERS``
    (links in a temporary folder, outside the test's ``tmp_path``)."""
    from tests.tables import withhold_policy

    withhold_policy(monkeypatch, tmp_path_factory.mktemp("policies"))
