"""``mauscheln play``: a full deal through a pseudo-terminal, a mistyped move, and no card leaked."""

from __future__ import annotations

import io
import re
import sys

import numpy as np
import pexpect
import pytest

from agents import make_agent
from agents.play.terminal import TerminalTable, main
from mauscheln_env import Game, MauschelnError, Phase, make_config

MENU = re.compile(r"(\d+)\) ")


def _first_number(menu: str) -> str:
    return MENU.search(menu).group(1)


def test_play_a_full_deal_in_a_pseudo_terminal():
    child = pexpect.spawn(sys.executable, ["-m", "agents.play.terminal", "--seed", "4", "--deals", "1", "--agents", "random"],
                          encoding="utf-8", timeout=30, dimensions=(50, 160))
    log = io.StringIO()
    child.logfile_read = log
    child.expect(r"your move \((\w+)\): (.*)\r\n> ")
    menu = child.match.group(2)
    assert MENU.search(menu)
    child.sendline("zz")
    child.expect(r"not a legal move here. Choose one of: (.*)\r\n")
    child.sendline(_first_number(child.match.group(1)))
    moves = 0
    while True:  # always the first move the menu offers
        i = child.expect([r"your move \(\w+\): (.*)\r\n> ", "session over"])
        if i == 1:
            break
        child.sendline(_first_number(child.match.group(1)))
        moves += 1
        assert moves < 60
    child.expect(pexpect.EOF)
    transcript = log.getvalue()
    assert "'zz' is not a legal move" in transcript
    # the settlement, one line per seat
    assert all(re.search(rf"  seat {s}: [+-]\d+", transcript) for s in range(4))
    assert "chips won or lost" in transcript


def test_play_through_the_mauscheln_command():
    child = pexpect.spawn(sys.executable, ["-m", "mauscheln.cli", "play", "--seed", "2", "--deals", "1",
                                           "--players", "3", "--agents", "expert", "--ascii", "--knock"],
                          encoding="utf-8", timeout=30)
    log = io.StringIO()
    child.logfile_read = log
    while True:
        i = child.expect([r"your move \(\w+\): (\d+)\) (\S+)", "session over"])
        if i == 1:
            break
        first = child.match.group(1)
        child.expect("\n> ")
        child.sendline("?")  # ask for the moves ...
        child.expect("legal moves:")
        child.expect("\n> ")
        child.sendline(first)  # ... then take the first
    child.expect(pexpect.EOF)
    transcript = log.getvalue()
    assert "deal settled" in transcript or "nobody went with" in transcript
    assert "legal moves:" in transcript


@pytest.mark.parametrize("text,expected", [("qh", "QH"), ("Q♥", "QH"), ("10h", "TH"), ("2", None), ("xx", None),
                                           ("²", None), ("٢", None), ("１", None)])
def test_parse_inputs(text, expected):
    game = Game(make_config("mauscheln", 4))
    table = TerminalTable(game, 0, {s: make_agent("random") for s in (1, 2, 3)}, out=io.StringIO())
    legal = [game.deck.index["QH"], game.deck.index["TH"]]
    got = table.parse(text, legal)
    if text == "2":
        assert got == legal[1]
    else:
        assert (game.action_to_str(got) if got is not None else None) == expected


@pytest.mark.parametrize("text", ["²", "٢", "１"])
def test_a_non_ascii_digit_is_answered_not_raised(text):
    """Unicode digits pass str.isdigit; the table says they are not a move instead of failing in int()."""
    game = Game(make_config("mauscheln", 4))
    table = TerminalTable(game, 0, {s: make_agent("random") for s in (1, 2, 3)}, out=io.StringIO())
    legal = [game.deck.index["QH"], game.deck.index["TH"]]
    assert table.read_action(text, dict(enumerate(legal, 1))) is None
    assert table.why_not(text, None, legal, None, {}) == f"{text!r} is not a legal move here"


def test_end_of_input_leaves_politely(monkeypatch, capsys):
    monkeypatch.setattr(sys, "stdin", io.StringIO(""))
    assert main(["--seed", "1", "--deals", "1", "--agents", "random"]) == 0
    assert "bye" in capsys.readouterr().out


def test_bad_arguments(capsys):
    assert main(["--seat", "9"]) == 2
    assert main(["--agents", "expert", "random"]) == 2
    assert "error" in capsys.readouterr().err


# ---------------------------------------------------------------------- no card the human may not know
CARD = re.compile(r"\b([AKQJT98765432][CSHD])\b")


def _known(table: TerminalTable) -> set[str]:
    """Every card the human's seat may know now, from the environment's own observation and info of that seat."""
    env, agent = table.view.env, table.view.agents[table.human]
    try:
        obs = env.observe(agent)["observation"]
    except MauschelnError:  # before the first deal: nothing known yet
        return set()
    n_cards = table.game.num_cards
    codes = table.game.deck.codes
    known = set()
    for piece in env.observation_layout:  # every card-indexed piece: hand, discards, draws, trump card, tricks, shown
        if piece.shape[-1] == n_cards:
            known |= {codes[c] for c in np.flatnonzero(env.observation_views(obs)[piece.name].reshape(-1, n_cards).sum(0))}
    info = env.seat_info(table.human)  # the view builds infos per seat on demand
    return known | set(info["hand"]) | {c for _, c in info["trick"]} | {info["trump"]}


class _Screen(io.StringIO):
    """The terminal: every text written is checked against what the human's seat knows at that moment."""

    def __init__(self) -> None:
        super().__init__()
        self.table: TerminalTable | None = None
        self.deal_known: set[str] = set()
        self.played: set[str] = set()  # cards played to a trick in the action being announced (public)
        self.leaks: list[str] = []

    def write(self, text: str) -> int:
        if self.table is not None:
            now = _known(self.table)
            self.deal_known |= now
            for code in CARD.findall(text):
                if code not in now | self.deal_known | self.played:
                    self.leaks.append(f"{code} in {text!r}")
            if "your result this deal" in text:  # the deal is over: what was known of it is no longer on the table
                self.deal_known = now
        return super().write(text)


class _Human:
    """Stdin of a human who plays random legal moves, and first tries an illegal card or a bad number now and then."""

    def __init__(self, table_ref: list, seed: int, exchanges: bool = False) -> None:
        self.ref, self.rng, self.tries, self.exchanges = table_ref, np.random.default_rng(seed), 0, exchanges

    def readline(self) -> str:
        table = self.ref[0]
        _, mask, info = table.view.seat_view(table.human)
        legal = np.flatnonzero(mask)
        self.tries += 1
        illegal = [c for c in info["hand"] if table.game.deck.index[c] not in legal]
        if self.tries % 3 == 1 and illegal:
            return illegal[0].lower() + "\n"
        if self.tries % 7 == 2:
            return "99\n"
        self.tries = 0 if self.tries % 3 == 1 else self.tries
        cards = [a for a in legal if a < table.game.num_cards]
        if self.exchanges and info["phase"] in ("decide", "exchange") and cards:  # exchange all one can
            return table.game.action_to_str(int(cards[-1])) + "\n"
        return table.game.action_to_str(int(self.rng.choice(legal))) + "\n"


def _play_watched(ruleset: str, players: int, seed: int, deals: int = 2, agents: str = "expert",
                  exchanges: bool = False) -> tuple:
    game = Game(make_config(ruleset, players, max_deals=deals))
    screen, ref = _Screen(), []
    bots = {s: make_agent(agents, seed=seed + s) for s in range(1, players)}
    table = TerminalTable(game, 0, bots, ascii_cards=True, stdin=_Human(ref, seed, exchanges), out=screen)
    ref.append(table)
    screen.table = table
    apply = table.game.apply

    def watched_apply(state, action):  # a card played to a trick is face up for everyone (RULES.md §1.8)
        screen.played = {game.deck.codes[action]} if state.phase is Phase.PLAY else set()
        return apply(state, action)

    table.game.apply = watched_apply
    table.play(seed=seed, dealer=seed % players)
    return screen, screen.getvalue()


@pytest.mark.parametrize("ruleset, players", [("mauscheln", 4), ("mauscheln", 6), ("mauscheln_classic", 4),
                                              ("mousel", 4), ("mouche", 5), ("muschka", 4)])
def test_play_never_prints_a_card_the_human_cannot_know(ruleset, players):
    for seed in range(3):
        screen, text = _play_watched(ruleset, players, seed)
        assert "session over" in text
        assert not screen.leaks, (ruleset, players, seed, screen.leaks[:5])


def test_the_mouche_decide_discard_of_a_bot_stays_hidden():
    """The issue's case: in Mouche a bot's first discard (a card action while deciding) was printed."""
    screen, text = _play_watched("mouche", 5, 3, deals=1)
    assert "starts an exchange by discarding a card" in text
    assert not screen.leaks, screen.leaks[:5]


def test_an_illegal_card_is_answered_with_the_reason():
    screen, text = _play_watched("mauscheln", 4, 1, deals=3)
    reasons = re.findall(r"is not allowed: (you must [^.(]+)", text)
    assert reasons, text[-2000:]
    assert all(r.startswith(("you must follow suit", "you must beat", "you have no")) or "trump" in r for r in reasons)
    assert "99 is not one of the numbers shown" in text


def test_menu_numbers_do_not_shift_while_marking_cards():
    screen, text = _play_watched("mouche", 5, 3, deals=1, agents="random", exchanges=True)
    menus = re.findall(r"your move \(exchange\): (.*)", text)
    numbers: dict[str, str] = {}
    for menu in menus:
        for number, card in re.findall(r"(\d+)\) (\S+)", menu):
            assert numbers.setdefault(card, number) == number, (card, menus)
    assert len(menus) >= 2


def test_a_pass_says_which_decision():
    _, text = _play_watched("mauscheln", 4, 2, deals=3)
    assert re.search(r": pass - passes: does not (declare|go with the declarer)", text)


def test_a_preset_keeps_its_player_count(monkeypatch, capsys):
    monkeypatch.setattr(sys, "stdin", io.StringIO(""))
    assert main(["--ruleset", "configs/rules/mouche_pamphile.yaml", "--seed", "1", "--deals", "1"]) == 0
    assert "(mouche, 5 players" in capsys.readouterr().out
