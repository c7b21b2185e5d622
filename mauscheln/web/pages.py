"""The server's HTML pages besides the table: replays in the benchmark report's viewer, and errors.

A finished session and a benchmark record's kept games are shown with
:func:`agents.bench.report.render_viewer_html`, the viewer of ``mauscheln bench
report`` (the same script and data). The records are those the leaderboard reads
(:func:`agents.bench.leaderboard.records_of`: the shipped ones and the database's);
a record is named ``TABLE/AGENT`` (the agent's key, as the leaderboard shows it), and
only the deals whose games the record kept are shown (the first three, or the one
asked for), so a page never plays a deal again.
"""

from __future__ import annotations

import html
from typing import Any
from urllib.parse import quote, urlencode

from agents.bench.decks import load_deal_set, tables_of
from agents.bench.leaderboard import records_of
from agents.bench.replay import table_legend
from agents.bench.report import collect_replays, render_viewer_html
from agents.bench.run import AgentId
from mauscheln.web.tables import WebError
from mauscheln_env.engine import Game
from mauscheln_env.errors import MauschelnError

SUITE = "v1"
FIRST_DEALS = 3
"""A record's page shows the games of its first kept deals (``&deal=K`` any other kept one), as the report does."""
_STYLE = ("body{font-family:system-ui,sans-serif;margin:1.5em;color:#222;max-width:900px}"
          "li{margin:.2em 0}code{background:#f3f3f3;padding:0 .2em}.note{color:#555;font-size:.9em}")


def _esc(x: Any) -> str:
    return html.escape(str(x), quote=True)


def _page(title: str, body: str) -> str:
    return (f'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>{_esc(title)}</title>'
            '<meta name="viewport" content="width=device-width, initial-scale=1">'
            f"<style>{_STYLE}</style></head><body>{body}</body></html>")


def error_page(status: int, message: str) -> str:
    """A refusal as a small page: the status and the message, escaped; never a traceback."""
    return _page(f"{status} - Mauscheln",
                 f"<h1>{status}</h1><p>{_esc(message)}</p><p><a href=\"/\">Play</a> · <a href=\"/replay\">Replays</a></p>")


def session_page(game: Game, replay: dict[str, Any], table_id: str) -> str:
    """A finished session in the viewer, every hand shown from the start."""
    data = {"tables": [{"table": replay.get("table", game.config.ruleset), "players": game.n,
                        "legend": table_legend(game), "sessions": [replay]}], "view": "all"}
    intro = (f'<p class="note">Table {_esc(table_id)}, replayed from its seed and every decision. Every hand is '
             'shown; choose a seat under "view" to see only what that seat knew. <a href="/">Play again</a></p>')
    return render_viewer_html(data, title="Mauscheln: your session", intro_html=intro)


def _agent_key(record: dict[str, Any]) -> str:
    agent = record.get("agent") or {}
    return AgentId(str(agent.get("spec")), agent.get("checkpoint")).key


def _records(db: str | None, table: str) -> list[dict[str, Any]]:
    try:
        return records_of(db, SUITE, table)
    except MauschelnError as exc:
        raise WebError(503, f"the leaderboard cannot be read: {exc}") from exc


def records_index(db: str | None) -> str:
    """Every record of the suite by table, each linked to its replays."""
    items = []
    for table in tables_of(SUITE):
        keys = sorted({_agent_key(r) for r in _records(db, table)})
        if keys:
            links = ", ".join(f'<a href="/replay?{_esc(urlencode({"record": f"{table}/{k}"}, quote_via=quote))}">'
                              f"{_esc(k)}</a>" for k in keys)
            items.append(f"<li><b>{_esc(table)}</b>: {links}</li>")
    body = ("<h1>Replays of benchmark games</h1><p class=\"note\">Each record of the benchmark (suite "
            f"{SUITE}) keeps the games of its first deals against every opponent; open one to step through them "
            "in the report's viewer. <a href=\"/\">Play a game</a></p>")
    body += f"<ul>{''.join(items)}</ul>" if items else "<p>No benchmark records here.</p>"
    return _page("Mauscheln replays", body)


def record_page(db: str | None, record: str, deal: str | None) -> str:
    """The kept games of one record (``TABLE/AGENT``), or of its deal ``deal``, in the viewer."""
    table, sep, agent = record.partition("/")
    tables = tables_of(SUITE)
    if not sep or table not in tables:
        raise WebError(404, f"record={record[:80]!r} names no table; allowed: TABLE/AGENT with TABLE one of "
                            f"{', '.join(tables)} (see /replay)")
    found = [r for r in _records(db, table) if _agent_key(r) == agent]
    if not found:
        known = sorted({_agent_key(r) for r in _records(db, table)})
        raise WebError(404, f"no record of {agent[:80]!r} on {table}; allowed: "
                            f"{', '.join(f'{table}/{k}' for k in known) or 'none (no records of this table)'}")
    rec = found[-1]  # the latest submission of that agent
    kept = max((len(p.get("replays") or []) + int(p.get("first_deal", 0)) for p in rec.get("pairs") or []),
               default=0)
    deals = list(range(min(kept, FIRST_DEALS)))
    if deal is not None:
        if not (deal.isascii() and deal.isdigit() and len(deal) <= 9) or not any(
                int(p.get("first_deal", 0)) <= int(deal) < int(p.get("first_deal", 0)) + len(p.get("replays") or [])
                for p in rec.get("pairs") or []):
            raise WebError(404, f"deal={deal[:20]!r}: the record keeps the games of deals 0..{kept - 1} only; "
                                f"allowed: one of those")
        deals = [int(deal)]
    try:
        games = collect_replays([rec], deals)
        deal_set = load_deal_set(SUITE, table)
    except MauschelnError as exc:
        raise WebError(503, f"the games of {record} cannot be replayed here: {exc}") from exc
    data = {"tables": [{"table": table, "ruleset": deal_set.ruleset, "players": deal_set.players,
                        "legend": table_legend(deal_set.game), "games": games}]}
    links = " ".join(f'<a href="/replay?{_esc(urlencode({"record": record, "deal": k}, quote_via=quote))}">{k}</a>'
                     for k in range(kept))
    intro = (f'<p class="note">The games {_esc(agent)} played on {_esc(table)} that its record kept (deals '
             f'{_esc(", ".join(map(str, deals)))} here): choose the opponent, the deal, the format and the lone seat, '
             f'and the seat whose view to show. One deal of those kept: {links}. '
             '<a href="/replay">All records</a> · <a href="/">Play</a></p>')
    return render_viewer_html(data, title=f"Replays: {agent} on {table}", intro_html=intro)
