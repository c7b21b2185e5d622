"""The batched engine against the reference engine and observer, step by step, for every ruleset.

The differential test (:func:`tests.lockstep.run_lockstep`) deals the same
first cards to both engines and gives them the same random actions; every later
deal, redeal and reshuffle is the batched engine's, replayed into the reference
through a scripted ``rng``. At every step masks, observations (of the seat to
act, of a random other seat, and the omniscient state), rewards, deal kinds,
session ends, final observations and chips must agree exactly.

It runs over every preset in ``configs/rules/``, every ruleset at its smallest
and largest table, and per ruleset a set of option variants that reach its
rare rules (rigged deals for the quartets, the turned-up Pamphile and the
mouche). Each run has coverage floors, so that it cannot pass by never reaching
what it is meant to check. The default suite runs every case eagerly and a few
compiled; ``-m slow`` runs every case at both tables, eagerly and compiled, on
larger batches.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import torch

from mauscheln_env import make_config
from mauscheln_env.config import RULESETS
from tests.lockstep import one_torch_thread, run_lockstep  # noqa: F401 - the fixture

PRESET_DIR = Path(__file__).resolve().parent.parent / "configs" / "rules"
PRESETS = sorted(p.stem for p in PRESET_DIR.glob("*.yaml"))

DEAL_KINDS_OF = {
    "mauscheln": ("settled", "no_play"),
    "mauscheln_classic": ("settled", "no_play"),
    "mousel": ("settled", "no_play"),
    "mouche": ("settled",),
    "muschka": ("settled",),
}
"""The deal kinds random play reaches at every table with a ruleset's default options; the rarer ones (throw-ins,
a lone seat, a mouche) have their variants in VARIANTS."""


@dataclass(frozen=True)
class Variant:
    """Options of one ruleset and how the harness plays them, with the counts a run must reach."""

    options: dict[str, Any] = field(default_factory=dict)
    weights: dict[str, float] = field(default_factory=dict)
    deal_input: str = "spec"
    start_chips: bool = False
    copy: bool = False
    rigged: tuple[str, ...] = ()
    floors: dict[str, int] = field(default_factory=dict)
    tables: tuple[int, ...] = ()
    """Player counts (default: the ruleset's smallest and largest)."""


VARIANTS: dict[str, dict[str, Variant]] = {
    "mauscheln": {
        "knock_sessions": Variant({"knock": True, "knock_min_rank": "8", "max_deals": 3}, {"pass": 1.5, "done": 1.2},
                                  deal_input="orders", copy=True, floors={"phase_knock": 1, "knocker_exchanges": 1}),
        "elimination": Variant({"knock": True, "bankroll": 6, "stake": 8, "max_deals": None}, {"done": 1.5},
                               start_chips=True, floors={"eliminations": 1}),
        "throw_ins": Variant({"max_deals": 4, "bankroll": 13, "max_throw_ins": 2}, {"mauscheln": 0.15, "pass": 1.5},
                             deal_input="orders", start_chips=True, floors={"truncated": 1, "throw_in": 1}),
        "vierling_belli": Variant({"knock": True, "vierling": True, "belli": "7D", "max_deals": 3},
                                  rigged=("quartet", "quartets"), floors={"quartets_shown": 1, "redeals": 1}),
        "vierling_belli_trump7_ace": Variant({"vierling": True, "belli": "trump7", "belli_penalty": "ace",
                                              "max_deals": 2}, rigged=("quartet",), floors={"quartets_shown": 1}),
        "weli": Variant({"weli": True, "knock": True, "knock_min_rank": "T", "max_deals": 2}, tables=(3, 5)),
    },
    "mauscheln_classic": {
        "strict": Variant({"mauschelzwang": True, "mitgehzwang": True, "forced_knock_new_pot": True, "cap": 8,
                           "schieben": True, "max_deals": 8}, {"done": 1.5}, floors={"phase_offer": 1,
                                                                                      "knocker_exchanges": 1}),
        # "9" is the lowest knock rank of both the 24-card deck (3 players) and the 32-card one.
        "reshuffles": Variant({"max_deals": 3, "knock_min_rank": "9"}, {"done": 0.3, "pass": 0.5},
                              floors={"reshuffles": 1}),
        "elimination": Variant({"bankroll": 10, "max_deals": None, "classic_always_32": True}, start_chips=True,
                               floors={"eliminations": 1}),
        "no_knock": Variant({"knock": False, "max_deals": 2}, {"pass": 3.0}, deal_input="orders", floors={"throw_in": 1}),
    },
    "mousel": {
        "volunteer_knock": Variant({"volunteer_leader": True, "knock": True, "knock_min_rank": "8", "exchange_limit": 2,
                                    "deck_size": 52, "max_deals": 3}, floors={"knocker_exchanges": 1}),
        "elimination": Variant({"bankroll": 8, "max_deals": None, "exchange_limit": 3}, {"in": 2.0}, start_chips=True,
                               floors={"eliminations": 1}),
    },
    "mouche": {
        "pamphile": Variant({"pamphile": True, "pamphile_wild": True, "pamphile_bonus": True, "max_deals": 3},
                            {"stay": 1.5}, rigged=("jack_of_clubs_up", "flush"),
                            floors={"phase_name_trump": 1, "phase_announce": 1, "mouche": 1}),
        "pamphile_named": Variant({"pamphile": True, "pamphile_bonus": False, "max_deals": 2}, {"pass": 3.0},
                                  rigged=("jack_of_clubs_up",), floors={"phase_name_trump": 1, "no_play": 1}),
        "queue_largest": Variant({"queue": True, "queue_order": "largest", "collect_1730": False, "mery_cap": 10,
                                  "max_deals": 6}, {"pass": 0.5}, rigged=("flush",),
                                 floors={"queue_items": 1, "mouche": 1}),
        "queue_1730_beatrix": Variant({"queue": True, "collect_1730": True, "beatrix": True, "deal_2_3": True,
                                       "rounds": 1, "max_deals": None}, {"swap": 3.0}, rigged=("flush",),
                                      floors={"queue_items": 1, "phase_swap": 1, "mouche": 1, "reshuffles": 1}),
        "elimination": Variant({"bankroll": 8, "max_deals": None}, {"pass": 0.3}, start_chips=True,
                               floors={"eliminations": 1}),
    },
    "muschka": {
        "to_zero": Variant({"start_score": 3, "max_deals": None}, {"pass": 0.3}, floors={"terminated": 1}),
        # At 3 players the 32-card deck leaves 16 cards behind the trump for at most 15 exchanged: no reshuffle
        # there, so the reshuffle floor holds at the largest table only.
        "sessions": Variant({"max_deals": 4}, {"pass": 3.0}, deal_input="orders", copy=True,
                            floors={"no_play": 1}, tables=(3,)),
        "sessions_reshuffles": Variant({"max_deals": 4}, {"pass": 3.0}, deal_input="orders", copy=True,
                                       floors={"reshuffles": 1, "no_play": 1}, tables=(7,)),
    },
}
"""Per ruleset, option sets that reach each of its rules (every option a preset in configs/rules/ uses)."""


def run_case(config: Any, variant: Variant, ruleset: str, *, num_envs: int, steps: int, seed: int,
             compile: bool = False) -> Counter:
    """One lockstep run and its coverage floors."""
    with torch._dynamo.config.patch(fail_on_recompile_limit_hit=True):  # never fall back to eager in silence
        stats = run_lockstep(config, num_envs, steps, seed=seed, weights=variant.weights, deal_input=variant.deal_input,
                             start_chips=variant.start_chips, copy=variant.copy, compile=compile,
                             rigged=variant.rigged)
    deals = sum(stats[k] for k in ("settled", "no_play", "throw_in", "mouche"))
    missing = {k: stats[k] for k, floor in {"settled": 1, **variant.floors}.items() if stats[k] < floor}
    assert deals >= num_envs and not missing, f"coverage floors not reached: {missing}; {dict(stats)}"
    if compile:  # every draw that reshuffled was drawn before the fused step, none stepped outside it afterwards
        assert stats["rows_redo"] == 0 and stats["rows_draw_first"] >= (stats["reshuffles"] > 0), dict(stats)
    return stats


def variant_cases(slow: bool) -> list[Any]:
    """(ruleset, variant name, players): the variant's tables in the slow run, one of them by default."""
    cases = []
    for ruleset, variants in VARIANTS.items():
        spec = RULESETS[ruleset]
        for i, (name, v) in enumerate(variants.items()):
            tables = v.tables or (spec.min_players, spec.max_players)
            for n in tables if slow else tables[i % 2:i % 2 + 1] or tables[:1]:
                cases.append(pytest.param(ruleset, name, n, id=f"{ruleset}-{name}-{n}"))
    return cases


def table_cases() -> list[Any]:
    return [pytest.param(r, n, id=f"{r}-{n}") for r, spec in RULESETS.items()
            for n in sorted({spec.min_players, spec.max_players})]


def preset_config(name: str) -> Any:
    return make_config(str(PRESET_DIR / f"{name}.yaml"))


def ruleset_of(config: Any) -> str:
    return config.spec.name


# ---------------------------------------------------------------------- the default suite (eager; a few compiled)


@pytest.mark.parametrize("name", PRESETS)
def test_every_preset_matches_the_reference(name):
    config = preset_config(name)
    run_case(config, Variant(weights={"pass": 1.3, "done": 1.3}), ruleset_of(config), num_envs=48, steps=100,
             seed=len(name))


@pytest.mark.parametrize(("ruleset", "num_players"), table_cases())
def test_every_ruleset_at_its_smallest_and_largest_table(ruleset, num_players):
    config = make_config(ruleset, num_players, max_deals=1)
    floors = {"terminated": 12, **dict.fromkeys(DEAL_KINDS_OF[ruleset], 1)}
    run_case(config, Variant(weights={"pass": 1.3}, floors=floors), ruleset, num_envs=48, steps=100, seed=num_players)


@pytest.mark.parametrize(("ruleset", "variant", "num_players"), variant_cases(slow=False))
def test_every_option_matches_the_reference(ruleset, variant, num_players):
    v = VARIANTS[ruleset][variant]
    config = make_config(ruleset, num_players, **v.options)
    run_case(config, v, ruleset, num_envs=48, steps=120, seed=100 * num_players + len(variant))


COMPILED_DEFAULT = ("mauscheln_classic_strict", "mouche_queue_1730", "mousel_52_volunteer")
"""Presets whose compiled engine the default suite checks (compiling takes tens of seconds each)."""


@pytest.mark.parametrize("name", COMPILED_DEFAULT)
def test_compiled_engine_matches_the_reference(name):
    """``compile=True`` (the fused step and observation through torch.compile) is exact as well."""
    config = preset_config(name)
    run_case(config, Variant(weights={"pass": 1.3, "done": 1.3}), ruleset_of(config), num_envs=48, steps=100,
             seed=7, compile=True)


# ---------------------------------------------------------------------- the exhaustive run (-m slow)


@pytest.mark.slow
@pytest.mark.parametrize("compile", [False, True], ids=["eager", "compiled"])
@pytest.mark.parametrize("name", PRESETS)
def test_every_preset_long(name, compile):
    config = preset_config(name)
    run_case(config, Variant(weights={"pass": 1.3, "done": 1.3}), ruleset_of(config), num_envs=256, steps=400,
             seed=1 + len(name), compile=compile)


@pytest.mark.slow
@pytest.mark.parametrize("compile", [False, True], ids=["eager", "compiled"])
@pytest.mark.parametrize(("ruleset", "variant", "num_players"), variant_cases(slow=True))
def test_every_option_long(ruleset, variant, num_players, compile):
    v = VARIANTS[ruleset][variant]
    config = make_config(ruleset, num_players, **v.options)
    run_case(config, v, ruleset, num_envs=256, steps=300, seed=7 * num_players + len(variant), compile=compile)


@pytest.mark.slow
@pytest.mark.parametrize("compile", [False, True], ids=["eager", "compiled"])
@pytest.mark.parametrize(("ruleset", "num_players"), table_cases())
def test_every_table_long_sessions(ruleset, num_players, compile):
    config = make_config(ruleset, num_players, max_deals=None)
    # These sessions end only by ruin (in muschka, a score reaching exactly 0): 500 steps of 256 sessions see 6 to 26
    # of them end at the tables that end least (classic at 3 and 6, mousel at 7, mouche at 3, muschka at 7;
    # 2026-12-01, the seeds below), so the floor asks for a few ends: the check cannot pass without any.
    floors = {"terminated": 4, **dict.fromkeys(DEAL_KINDS_OF[ruleset], 1)}
    run_case(config, Variant(weights={"pass": 1.3}, floors=floors), ruleset, num_envs=256, steps=500,
             seed=3 + num_players, compile=compile)
