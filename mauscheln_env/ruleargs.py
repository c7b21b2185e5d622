"""The rule arguments every command shares, and the one-line error every command prints.

``mauscheln demo``, ``eval``, ``play``, ``train`` and ``python -m train.sb3_maskable``
take the rules of the table the same way:

``--ruleset NAME|PRESET``
    a ruleset (``mauscheln``, ``mauscheln_classic``, ``mousel``, ``mouche``,
    ``muschka``) or the path of a preset file such as
    ``configs/rules/mouche_pamphile.yaml``;
``--players N``
    seats at the table; by default the preset's player count, else 4 (a preset's
    count is never replaced by a default);
``--rule KEY=VALUE``
    any rule option of the ruleset (see ``docs/rulesets/``), repeatable and
    several after one flag: ``--rule knock=true --rule stake=8`` or
    ``--rule knock=true stake=8``. Values are read as ``true``/``false``,
    ``none``, whole numbers, decimals, or else text;
``--knock``
    deprecated: the same as ``--rule knock=true``.

The training script reads the same three from its YAML config (``ruleset``,
``num_players``, ``rules: {knock: true}``) and takes ``--rule`` the same way.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from mauscheln_env.config import RULESETS, RuleConfig, make_config
from mauscheln_env.errors import ConfigError, shown

RULE_SYNTAX = "KEY=VALUE, e.g. knock=true or stake=8"


def parse_value(text: str) -> Any:
    """``"true"``/``"false"`` -> bool, ``"none"`` -> None, then int, then float, else the text itself."""
    low = text.strip().lower()
    if low in ("true", "false"):
        return low == "true"
    if low == "none":
        return None
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text


def parse_rules(items: Iterable[str] | Mapping[str, Any] | None) -> dict[str, Any]:
    """``["knock=true", "stake=8"]`` -> ``{"knock": True, "stake": 8}``; a mapping is copied as it is.

    A malformed item or a key given twice raises :class:`ConfigError` naming it.
    """
    if items is None:
        return {}
    if isinstance(items, Mapping):
        bad = [k for k in items if not isinstance(k, str) or not k]
        if bad:
            raise ConfigError(f"rule option names must be words, got {bad!r}; allowed: {RULE_SYNTAX}")
        return dict(items)
    if isinstance(items, str):
        items = [items]
    out: dict[str, Any] = {}
    for item in items:
        if not isinstance(item, str):
            raise ConfigError(f"rule option {item!r} is not text; allowed: {RULE_SYNTAX}")
        key, eq, value = item.partition("=")
        key = key.strip()
        if not eq or not key or not key.isidentifier():
            raise ConfigError(f"--rule {item!r} is not KEY=VALUE; allowed: {RULE_SYNTAX}")
        if key in out:
            raise ConfigError(f"--rule {key} is given twice ({key}={out[key]!r} and {item!r}); give each option once")
        out[key] = parse_value(value.strip())
    return out


def add_rule_arguments(parser: argparse.ArgumentParser) -> None:
    """Add ``--ruleset``, ``--players``, ``--rule`` and the deprecated ``--knock`` to an argparse parser."""
    group = parser.add_argument_group("rules (shared by every mauscheln command)")
    group.add_argument("--ruleset", default="mauscheln", metavar="NAME|PRESET",
                       help=f"a ruleset ({', '.join(RULESETS)}) or a preset file such as "
                            "configs/rules/mouche_pamphile.yaml (default: mauscheln)")
    group.add_argument("--players", type=int, default=None, metavar="N",
                       help="seats at the table (default: the preset's, else 4)")
    group.add_argument("--rule", action="extend", nargs="+", default=[], metavar="KEY=VALUE",
                       help="a rule option of the ruleset, repeatable (e.g. --rule knock=true stake=8)")
    group.add_argument("--knock", action="store_true", help="deprecated: the same as --rule knock=true")


def rule_options(ns: argparse.Namespace) -> dict[str, Any]:
    """The rule options of a namespace built by :func:`add_rule_arguments` (``--knock`` folded in)."""
    options = parse_rules(ns.rule)
    if getattr(ns, "knock", False):
        if options.get("knock", True) is not True:
            raise ConfigError(f"--knock contradicts --rule knock={options['knock']!r}; give one of them")
        options["knock"] = True
    return options


def rule_config(ruleset: Any, players: Any, rules: Mapping[str, Any], **fixed: tuple[Any, str]) -> RuleConfig:
    """``make_config(ruleset, players, **rules, **fixed)``, refusing a rule that a command sets by its own flag.

    ``fixed`` maps an option to ``(value, flag)``, e.g. ``max_deals=(3, "--deals")``.
    """
    clash = sorted(set(rules) & set(fixed))
    if clash:
        key = clash[0]
        raise ConfigError(f"--rule {key}={rules[key]!r}: set {key} with {fixed[key][1]} instead")
    return make_config(ruleset, players, **dict(rules), **{k: v for k, (v, _) in fixed.items()})


def config_from_namespace(ns: argparse.Namespace, **fixed: tuple[Any, str]) -> RuleConfig:
    """The :class:`RuleConfig` of a namespace built by :func:`add_rule_arguments`."""
    return rule_config(ns.ruleset, ns.players, rule_options(ns), **fixed)


def path_arg(text: str) -> Path:
    """The argparse ``type`` of a path flag: an empty path (an unset shell variable) is refused instead of being read
    as the working directory."""
    if not text.strip():
        raise argparse.ArgumentTypeError("an empty path is not allowed; allowed: a file or folder path")
    return Path(text)


def options_of(config: RuleConfig, *, skip: Iterable[str] = ("max_deals",)) -> dict[str, Any]:
    """Every option of ``config`` but ``skip``: with its ruleset and player count, the same rules again."""
    skip = set(skip)
    return {k: v for k, v in config.options.items() if k not in skip}


class ArgumentParser(argparse.ArgumentParser):
    """An argparse parser whose usage errors are one line ``PROG: error: ...`` on stderr, exit code 2."""

    def error(self, message: str) -> None:  # type: ignore[override]
        fail(self.prog, f"{cut_long_values(message)} (see {self.prog} --help)")


def cut_long_values(message: str) -> str:
    """``message`` with every quoted value of 300 characters or more cut short (a number with thousands of digits
    typed as a flag's value), as :func:`mauscheln_env.errors.shown` cuts a value."""
    return re.sub(r"'([^']{300,})'", lambda m: shown(m.group(1)), message)


def fail(prog: str, message: Any) -> None:
    """Print ``PROG: error: MESSAGE`` as one line on stderr and exit with code 2."""
    raise SystemExit(report(prog, message))


def report(prog: str, message: Any) -> int:
    """Print ``PROG: error: MESSAGE`` as one line on stderr; returns 2 (the exit code for a user's mistake)."""
    text = " ".join(str(message).split())
    print(f"{prog}: error: {text}", file=sys.stderr, flush=True)
    return 2


def newline_after_ctrl_c() -> str:
    """A newline to end the ``^C`` a terminal echoes, when stderr is a terminal."""
    return "\n" if sys.stderr.isatty() else ""
