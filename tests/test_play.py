"""``mauscheln play``: a full deal through a pseudo-terminal, including a mistyped move."""

from __future__ import annotations

import io
import re
import sys

import pexpect
import pytest

from agents import make_agent
from agents.play import TerminalTable, main
from mauscheln_env import Game, make_config


def test_play_a_full_deal_in_a_pseudo_terminal():
    child = pexpect.spawn(sys.executable, ["-m", "agents.play", "--seed", "4", "--deals", "1", "--agents", "random"],
                          encoding="utf-8", timeout=30, dimensions=(50, 160))
    log = io.StringIO()
    child.logfile_read = log
    child.expect(r"your move \((\w+)\): (.*)\r\n> ")
    assert "1) " in child.match.group(2)
    child.sendline("zz")
    child.expect("not a legal move here. Choose one of: 1\\) ")
    moves = 0
    while True:
        i = child.expect([r"\n> ", "session over"])
        if i == 1:
            break
        child.sendline("1")
        moves += 1
        assert moves < 60
    child.expect(pexpect.EOF)
    transcript = log.getvalue()
    assert "'zz' is not a legal move" in transcript
    # the settlement, one line per seat
    assert all(re.search(rf"  seat {s}: [+-]\d+", transcript) for s in range(4))
    assert "chips won or lost" in transcript


def test_play_through_the_mauscheln_command():
    child = pexpect.spawn(sys.executable, ["-m", "mauscheln_env.cli", "play", "--seed", "2", "--deals", "1",
                                           "--players", "3", "--agents", "expert", "--ascii", "--knock"],
                          encoding="utf-8", timeout=30)
    log = io.StringIO()
    child.logfile_read = log
    while True:
        i = child.expect([r"your move \(\w+\): 1\) (\S+)", "session over"])
        if i == 1:
            break
        child.expect("\n> ")
        child.sendline("?")  # ask for the moves ...
        child.expect("legal moves:")
        child.expect("\n> ")
        child.sendline("1")  # ... then take the first
    child.expect(pexpect.EOF)
    transcript = log.getvalue()
    assert "deal settled" in transcript or "nobody went with" in transcript
    assert "legal moves:" in transcript


@pytest.mark.parametrize("text,expected", [("qh", "QH"), ("Q♥", "QH"), ("10h", "TH"), ("2", None), ("xx", None)])
def test_parse_inputs(text, expected):
    game = Game(make_config("mauscheln", 4))
    table = TerminalTable(game, 0, {s: make_agent("random") for s in (1, 2, 3)}, out=io.StringIO())
    legal = [game.deck.index["QH"], game.deck.index["TH"]]
    got = table.parse(text, legal)
    if text == "2":
        assert got == legal[1]
    else:
        assert (game.action_to_str(got) if got is not None else None) == expected


def test_end_of_input_leaves_politely(monkeypatch, capsys):
    monkeypatch.setattr(sys, "stdin", io.StringIO(""))
    assert main(["--seed", "1", "--deals", "1", "--agents", "random"]) == 0
    assert "bye" in capsys.readouterr().out


def test_bad_arguments(capsys):
    assert main(["--seat", "9"]) == 2
    assert main(["--agents", "expert", "random"]) == 2
    assert "error" in capsys.readouterr().err
