"""``mauscheln bench report --out DIR``: the leaderboard, its charts and a replay viewer in one static page.

The leaderboard is that of :func:`agents.bench.leaderboard.open_view`: the shipped
records and the user's, the user's agents marked.

``DIR/index.html`` is one self-contained file (inline CSS, inline JavaScript,
the charts as inline PNG images, the data as an inline JSON block; nothing is
fetched when it is opened, no server is needed); ``DIR/report.json`` is the
same data for tools (the leaderboard of every table and the replays, see
:mod:`agents.bench.replay` for a replay's fields) and ``DIR/charts/*.png`` the
charts. Both hold strict JSON: an undefined interval is ``null`` (shown as
``—``), never ``NaN``/``Infinity``, which ``JSON.parse`` refuses.

The viewer replays any stored game: a table, two agents that met there, a deal,
the format and the lone seat; it steps decision by decision and shows the
table (purse, role, tricks of every seat), the hands as the chosen seat saw
them (others' cards hidden, their discards unnamed, their legal actions not
shown) or all hands, each decision with its legal alternatives, the tricks,
and the settlement line by line. The games of the first ``--replay-deals``
deals of every pairing that a record kept are included, and any ``--deal K``
(played again with the agents where no record kept it).

:func:`render_viewer_html` puts the same viewer alone on a page, for the
replays ``mauscheln serve`` shows: a record's games, or whole sessions chosen
by their title.
"""

from __future__ import annotations

import base64
import datetime
import html
import math
import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from agents.bench.decks import load_deal_set
from agents.bench.leaderboard import board_markdown, boards, interval_text, open_view, view_records
from agents.bench.replay import ReplayError, game_replay, replay_deal, table_legend
from agents.bench.run import AgentId
from agents.evaluation.charts import board_chart
from agents.evaluation.match import FORMATS, game_order
from mauscheln_env.files import atomic_write, atomic_write_text, finite_or_none, strict_json

PAGE_TITLE = "Mauscheln benchmark"


def collect_replays(records: Sequence[dict[str, Any]], deals: Sequence[int], extra: Sequence[int] = (),
                    log: Callable[[str], None] | None = None) -> dict[str, Any]:
    """The replays of ``deals`` (those a record kept) and ``extra`` (played again when not kept) of every
    pair of agents in ``records``, once per pair (with common random numbers A vs B and B vs A are the
    same games): ``{"A|B": {"candidate": A, "baseline": B, "deals": {"k": [replay per game]}}}``."""
    out: dict[str, Any] = {}
    for record in records:
        me = AgentId.from_dict(record["agent"]).key
        for i, p in enumerate(record["pairs"]):
            o = p.get("opponent") or {}
            other = AgentId.from_dict({"spec": p["baseline"], **o}).key
            key = f"{other}|{me}" if f"{other}|{me}" in out else f"{me}|{other}"
            entry = out.setdefault(key, {"candidate": me, "baseline": other, "deals": {}})
            flip = entry["candidate"] != me
            first, kept = int(p.get("first_deal", 0)), len(p.get("replays") or [])
            wanted = [d for d in deals if first <= d < first + kept] + [
                d for d in extra if first <= d < first + int(p["deals"])]
            for d in wanted:
                if str(d) in entry["deals"]:
                    continue
                try:
                    games = replay_deal(record, i, d)
                except ReplayError as exc:
                    if log:
                        log(f"no replay of deal {d} of {me} vs {other}: {exc}")
                    continue
                n = record["suite"]["players"]
                order = game_order(n)
                replays = []
                for fmt, lone in order:
                    rep = game_replay(record, i, d, fmt, lone, games)
                    if flip:  # stored from the other side: the same game is the other format
                        rep.update(candidate=entry["candidate"], baseline=entry["baseline"],
                                   format=FORMATS[1 - FORMATS.index(fmt)])
                    else:
                        rep.update(candidate=me, baseline=other)
                    replays.append(rep)
                if flip:
                    replays = replays[len(replays) // 2:] + replays[:len(replays) // 2]
                entry["deals"][str(d)] = replays
    return {k: v for k, v in out.items() if v["deals"]}


def build_report(db: str | Path | None = None, suite: str = "v1", tables: Sequence[str] | None = None,
                 replay_deals: int = 3, extra_deals: Sequence[int] = (),
                 log: Callable[[str], None] | None = None, *, shipped: bool = True,
                 yours: bool = True) -> tuple[dict[str, Any], dict[str, bytes]]:
    """The report's data (``report.json``; an undefined number is None) and its charts (PNG bytes by table),
    from the shipped records and the user's database ``db`` (:func:`agents.bench.leaderboard.open_view`)."""
    data: dict[str, Any] = {"suite": suite, "made": datetime.datetime.now(datetime.timezone.utc).isoformat(
        timespec="seconds"), "tables": []}
    charts = {}
    with open_view(db, suite, shipped=shipped, yours=yours) as view:
        for note in view.notes:
            if log:
                log(f"note: {note}")
        for board in boards(view, tables):
            deal_set = load_deal_set(suite, board.table)
            games = collect_replays(view_records(view, board.table), list(range(replay_deals)), extra_deals, log)
            png = board_chart(board)
            if png is not None:
                charts[board.table] = png
            data["tables"].append({
                "table": board.table, "ruleset": deal_set.ruleset, "players": deal_set.players,
                "deal_hash": board.deal_hash, "deals": len(deal_set), "legend": table_legend(deal_set.game),
                "board": board.to_dict(), "markdown": board_markdown(board), "games": games,
            })
    yours = sum(t["board"]["yours"] for t in data["tables"])
    data["records"] = {"shipped": sum(t["board"]["records"] for t in data["tables"]) - yours, "yours": yours}
    return finite_or_none(data), charts


def write_report(out: str | Path, **kwargs: Any) -> list[Path]:
    """Write ``index.html``, ``report.json`` and ``charts/<table>.png`` into ``out``."""
    out = Path(out)
    if out.exists() and not out.is_dir():
        from agents.bench.leaderboard import LeaderboardError

        raise LeaderboardError(f"--out {out} is a file; allowed: a folder")
    data, charts = build_report(**kwargs)
    out.mkdir(parents=True, exist_ok=True)
    written = []
    if charts:
        (out / "charts").mkdir(exist_ok=True)
        for table, png in charts.items():
            written.append(atomic_write(out / "charts" / f"{table}.png", lambda tmp, png=png: tmp.write_bytes(png)))
    written.append(atomic_write_text(out / "report.json", strict_json(data, separators=(",", ":")) + "\n"))
    written.append(atomic_write_text(out / "index.html", render_html(data, charts)))
    return written


# ---------------------------------------------------------------------- the page
def _esc(x: Any) -> str:
    return html.escape(str(x), quote=True)


def _board_html(t: dict[str, Any], chart: bytes | None) -> str:
    b = t["board"]
    mixed = b.get("yours", 0) > 0
    of_yours = f", {b['yours']} of them yours" if mixed else ""
    rows = []
    for rank, e in enumerate(b["entries"], 1):
        mark = f'<td class="origin">{_esc(e["origin"])}</td>' if mixed else ""
        rows.append(f'<tr class="{"yours" if "yours" in e["origin"] else "shipped"}"><td>{rank}</td>'
                    f"<td>{_esc(e['agent'])}</td><td>{e['elo']:+.0f}</td><td>{interval_text(e['low'], e['high'])}</td>"
                    f"<td>{e['deals']}</td><td>{e['opponents']}</td>{mark}</tr>")
    cells = {}
    for p in b["pairs"]:
        a = p["advantage"]
        half = (a["high"] - a["low"]) / 2 if _finite(a["low"]) and _finite(a["high"]) else None
        cells[(p["candidate"], p["baseline"])] = (a["mean"], half, p["deals"])
        cells[(p["baseline"], p["candidate"])] = (-a["mean"], half, p["deals"])
    order = [e["agent"] for e in b["entries"]]
    head = "".join(f"<th>vs {_esc(x)}</th>" for x in order)
    cross = []
    for a in order:
        tds = []
        for x in order:
            if a == x:
                tds.append("<td>—</td>")
            elif (a, x) in cells:
                m, h, n = cells[(a, x)]
                tds.append(f'<td class="{"pos" if m > 0 else "neg" if m < 0 else ""}" title="{n} deals">'
                           f"{m:+.3f} ± {'—' if h is None else f'{h:.3f}'}</td>")
            else:
                tds.append("<td></td>")
        cross.append(f"<tr><th>{_esc(a)}</th>{''.join(tds)}</tr>")
    img = ""
    if chart is not None:
        img = (f'<img class="chart" alt="ratings and cross-table of {_esc(t["table"])}" '
               f'src="data:image/png;base64,{base64.b64encode(chart).decode()}">')
    return (f'<section class="board" id="board-{_esc(t["table"])}"><h2>{_esc(t["ruleset"])}, {t["players"]} players'
            f' <small>({_esc(t["table"])}, {t["deals"]} deals, deal set <code>{_esc(t["deal_hash"][:19])}…</code>, '
            f'{b["records"]} record(s){of_yours})</small></h2>'
            '<table class="ratings"><tr><th>rank</th><th>agent</th><th>Elo (BT)</th><th>95 % interval</th>'
            f'<th>deals</th><th>opponents</th>{"<th>from</th>" if mixed else ""}</tr>{"".join(rows)}</table>'
            f'<h3>Cross-table</h3><p class="note">Each cell: the row agent\'s mean advantage over the column agent in '
            'chips per deal (both duplicate formats), ± the half-width of its 95 % interval over deals.</p>'
            f'<table class="cross"><tr><th></th>{head}</tr>{"".join(cross)}</table>{img}</section>')


def _finite(x: Any) -> bool:
    return isinstance(x, (int, float)) and math.isfinite(x)


def _from_text(data: dict[str, Any]) -> str:
    counts = data.get("records") or {}
    text = f"{counts.get('shipped', 0)} shipped record(s)"
    return text + (f" and {counts['yours']} of yours (marked)" if counts.get("yours") else "")


def render_html(data: dict[str, Any], charts: dict[str, bytes]) -> str:
    """The page; its data block is strict JSON (``JSON.parse`` takes no NaN or Infinity), with ``</`` escaped."""
    html_boards = "".join(_board_html(t, charts.get(t["table"])) for t in data["tables"]) or \
        "<p>No results yet: submit some with <code>mauscheln bench submit RESULT</code>.</p>"
    payload = strict_json(data, separators=(",", ":")).replace("</", "<\\/")
    return (_PAGE.replace("%STYLE%", _STYLE).replace("%VIEWER%", _VIEWER)
            .replace("%TITLE%", _esc(PAGE_TITLE)).replace("%SUITE%", _esc(data["suite"]))
            .replace("%MADE%", _esc(data["made"])).replace("%FROM%", _esc(_from_text(data)))
            .replace("%BOARDS%", html_boards)
            .replace("%DATA%", payload).replace("%SCRIPT%", _SCRIPT))


def render_viewer_html(data: dict[str, Any], *, title: str, intro_html: str = "") -> str:
    """A page with the replay viewer alone (the report's viewer, script and data layout, no leaderboard).

    ``data["tables"]``: each with ``table``, ``players``, ``legend`` (:func:`agents.bench.replay.table_legend`)
    and either ``games`` as in the report (pairs of agents, deals, formats, lone seats) or ``sessions``, a list
    of replays (:func:`agents.bench.replay.replay_actions`) each with a ``title`` line, chosen by that title
    only. ``data["view"]``: the view shown first, a seat or ``"all"`` (every hand; default seat 0).
    ``intro_html`` is put under the title as it is: the caller escapes what it puts there.
    """
    payload = strict_json(data, separators=(",", ":")).replace("</", "<\\/")
    parts = {"STYLE": _STYLE, "VIEWER": _VIEWER, "SCRIPT": _SCRIPT, "TITLE": _esc(title), "INTRO": intro_html,
             "DATA": payload}
    return re.sub(r"%(STYLE|VIEWER|SCRIPT|TITLE|INTRO|DATA)%", lambda m: parts[m.group(1)], _VIEWER_PAGE)


_STYLE = """
body{font-family:system-ui,sans-serif;margin:1.5em;color:#222;max-width:1200px}
table{border-collapse:collapse;margin:.5em 0}td,th{border:1px solid #ccc;padding:.2em .5em;font-size:.9em}
.cross td{text-align:right}.pos{background:#e4f1e4}.neg{background:#f6e2e2}.note{font-size:.85em;color:#555}
.chart{max-width:100%;display:block;margin:.5em 0}section.board{margin-bottom:2em}.ratings tr.yours{background:#eef3fb}
#viewer{border-top:2px solid #444;padding-top:1em}#controls label{margin-right:.8em;white-space:nowrap}
#controls select,#controls button{margin-left:.2em}
.card{display:inline-block;border:1px solid #999;border-radius:3px;padding:0 .25em;margin:0 .1em;background:#fff}
.card.red{color:#c00}.back{display:inline-block;color:#777;font-style:italic}
#seats td.hand{min-width:12em}#seats tr.acting{background:#fff6d8}
#log li.current{background:#fff6d8}.legal{color:#666;font-size:.85em}.chosen{font-weight:bold;text-decoration:underline}
#settlement{background:#f4f4f4;padding:.5em;white-space:pre-wrap}
@media (max-width:600px){body{margin:.6em}#seats{display:block;overflow-x:auto;max-width:100%}
#seats td.hand{min-width:9em}#seats td,#seats th{padding:.15em .3em}}
"""

_PAGE = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>%TITLE%</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>%STYLE%</style></head><body>
<h1>%TITLE% <small>(suite %SUITE%)</small></h1>
<p class="note">Made %MADE% by <code>mauscheln bench report</code> from %FROM%. Ratings: Bradley&ndash;Terry strengths fitted to
the per-deal wins over the shared deal sets (ties count half), on the Elo scale, centred; 95 % intervals from the
fit's Fisher information.</p>
%BOARDS%
%VIEWER%
<script type="application/json" id="report-data">%DATA%</script>
<script>%SCRIPT%</script>
</body></html>
"""

_VIEWER_PAGE = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>%TITLE%</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>%STYLE%</style></head><body>
<h1>%TITLE%</h1>
%INTRO%
%VIEWER%
<script type="application/json" id="report-data">%DATA%</script>
<script>%SCRIPT%</script>
</body></html>
"""

_VIEWER = """<section id="viewer"><h2>Replays</h2>
<div id="controls">
<label>table <select id="sel-table"></select></label>
<label>agent A <select id="sel-a"></select></label>
<label>agent B <select id="sel-b"></select></label>
<label>deal <select id="sel-deal"></select></label>
<label>format <select id="sel-format"><option value="alone">A alone against B</option>
<option value="field">B alone against A</option></select></label>
<label>lone seat <select id="sel-lone"></select></label>
<label>view <select id="sel-view"></select></label>
<br><button id="first">&laquo; start</button><button id="prev">&lsaquo; back</button>
<button id="next">next &rsaquo;</button><button id="last">end &raquo;</button>
<span id="pos"></span></div>
<p id="empty" class="note" hidden>No stored games to replay for this choice.</p>
<div id="game">
<p id="info"></p>
<table id="seats"><thead><tr><th>seat</th><th>agent</th><th id="purse-head">chips</th><th>role</th><th>tricks</th>
<th>hand</th></tr></thead><tbody></tbody></table>
<p>trick on the table: <span id="trick"></span></p>
<p>stock: <span id="stock"></span></p>
<div>tricks played: <ol id="tricks"></ol></div>
<div>decisions: <ol id="log"></ol></div>
<pre id="settlement"></pre>
</div></section>"""

_SCRIPT = r"""
"use strict";
const DATA = JSON.parse(document.getElementById("report-data").textContent);
const $ = (id) => document.getElementById(id);
const V = {table: 0, a: null, b: null, deal: null, format: "alone", lone: 0, view: "0", pos: 0};
function el(tag, attrs, text) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
  if (text !== undefined) e.textContent = text;
  return e;
}
function fill(sel, values, labels, keep) {
  sel.innerHTML = "";
  values.forEach((v, i) => sel.appendChild(el("option", {value: String(v)}, labels ? labels[i] : String(v))));
  if (keep !== null && keep !== undefined && values.map(String).includes(String(keep))) sel.value = String(keep);
  return sel.value;
}
function table() { return DATA.tables[V.table]; }
function agentsWithGames(t) {
  const s = new Set();
  for (const g of Object.values(t.games)) { s.add(g.candidate); s.add(g.baseline); }
  return [...s].sort();
}
function entryFor(t, a, b) {
  if (t.games[a + "|" + b]) return {entry: t.games[a + "|" + b], flip: false};
  if (t.games[b + "|" + a]) return {entry: t.games[b + "|" + a], flip: true};
  return null;
}
function currentGame() {
  const t = table();
  if (t.sessions) return t.sessions[Number(V.deal)] || null;  // a page of whole sessions, chosen by title
  const found = entryFor(t, V.a, V.b);
  if (!found || !found.entry.deals[V.deal]) return null;
  let fmt = V.format;
  if (found.flip) fmt = fmt === "alone" ? "field" : "alone";
  const n = t.players;
  const idx = (fmt === "alone" ? 0 : n) + Number(V.lone);
  return found.entry.deals[V.deal][idx];
}
function cardSpan(t, c) {
  const code = t.legend.cards[c];
  const red = code[1] === "H" || code[1] === "D";
  return el("span", {"class": "card" + (red ? " red" : ""), "data-card": code}, t.legend.pretty[c]);
}
function actionText(t, a) { return a < t.legend.cards.length ? null : t.legend.actions[a]; }
function events(g) {
  const out = [];
  g.deals.forEach((d, k) => { d.steps.forEach((s, i) => out.push({deal: k, step: i})); });
  return out;
}
function applyStep(st, s, numCards) {
  // the same defaults as agents.bench.replay.apply_step
  if (s.action < numCards) st.hands[s.seat] = st.hands[s.seat].filter(c => c !== s.action);
  if (s.action < numCards && s.phase === "play") st.trick = st.trick.concat([[s.seat, s.action]]);
  if (s.won) {
    st.won = st.won.concat([s.won]); st.trick = [];
    st.tricks_won = st.tricks_won.map((t, i) => t + (i === s.won.by ? 1 : 0));
  }
  for (const key of ["hands", "unseen", "roles"]) if (s[key]) for (const [seat, v] of Object.entries(s[key])) st[key][seat] = v;
  for (const key of ["trick", "pot", "purse", "trump", "shown"]) if (s[key] !== undefined) st[key] = s[key];
  if (s.stock !== undefined) st.stock = typeof s.stock === "number" ? st.stock.slice(s.stock) : s.stock;
}
function stateAt(g, pos) {
  // the deal shown and its table after the first `pos` steps of the session
  const ev = events(g);
  let k = 0, upto = 0;
  if (pos > 0) { const e = ev[pos - 1]; k = e.deal; upto = e.step + 1; }
  const d = g.deals[k];
  const copy = (x) => JSON.parse(JSON.stringify(x));
  const st = {deal: k, hands: copy(d.hands), unseen: d.unseen ? copy(d.unseen) : d.hands.map(() => []), trick: [],
    won: [], roles: copy(d.roles), tricks_won: copy(d.tricks_won), pot: d.pot, purse: copy(d.purse),
    trump: copy(d.trump), stock: copy(d.stock), shown: copy(d.shown), steps: upto, done: upto === d.steps.length};
  for (let i = 0; i < upto; i++) applyStep(st, d.steps[i], table().legend.cards.length);
  st.seen = st.hands.map((h, s) => h.filter(c => !st.unseen[s].includes(c)));
  return st;
}
function render() {
  const t = table();
  const g = currentGame();
  $("empty").hidden = !!g;
  $("game").hidden = !g;
  if (!g) { $("pos").textContent = ""; return; }
  const total = events(g).length;
  V.pos = Math.max(0, Math.min(V.pos, total));
  const st = stateAt(g, V.pos);
  const d = g.deals[st.deal];
  const view = V.view === "all" ? null : Number(V.view);
  $("pos").textContent = `step ${V.pos} of ${total}`;
  const tr = st.trump.card === null ? "not dealt" : t.legend.pretty[st.trump.card];
  const head = g.title !== undefined ? `${g.title}.` : `${t.table}, suite deal ${g.deal}: ${g.candidate} vs ` +
    `${g.baseline}, format ${g.format} (lone seat ${g.lone_seat}).`;
  $("info").textContent = head + ` Deal ${st.deal + 1} of the session: dealer seat ${d.dealer}, trump card ${tr}` +
    (st.trump.holder !== null ? ` (taken by seat ${st.trump.holder})` : "") + `, pot ${st.pot}. ` +
    (view === null ? "Showing every hand." : `Showing what seat ${view} saw.`);
  $("purse-head").textContent = t.legend.purse;
  const next = st.steps < d.steps.length ? d.steps[st.steps].seat : null;
  const body = document.querySelector("#seats tbody");
  body.innerHTML = "";
  for (let s = 0; s < t.players; s++) {
    const row = el("tr", {"data-seat": String(s), "class": s === next ? "acting" : ""});
    row.appendChild(el("td", {}, String(s) + (s === d.dealer ? " (dealer)" : "")));
    row.appendChild(el("td", {}, g.seats[s]));
    row.appendChild(el("td", {}, String(st.purse[s])));
    row.appendChild(el("td", {}, st.roles[s]));
    row.appendChild(el("td", {}, String(st.tricks_won[s])));
    const hand = el("td", {"class": "hand", "data-seat": String(s)});
    if (view === null || view === s) {
      const ids = view === null ? st.hands[s] : st.seen[s];
      ids.forEach(c => hand.appendChild(cardSpan(t, c)));
      if (!ids.length) hand.appendChild(el("span", {"class": "back"}, "(no cards)"));
      if (view === null && st.seen[s].length !== st.hands[s].length)
        hand.appendChild(el("span", {"class": "back"}, ` (${st.hands[s].length - st.seen[s].length} unseen by the seat)`));
    } else {
      hand.appendChild(el("span", {"class": "back"}, `${st.hands[s].length} card(s), hidden`));
    }
    row.appendChild(hand);
    body.appendChild(row);
  }
  const trick = $("trick"); trick.innerHTML = "";
  st.trick.forEach(([s, c]) => { trick.appendChild(document.createTextNode(` ${s}:`)); trick.appendChild(cardSpan(t, c)); });
  if (!st.trick.length) trick.textContent = "-";
  const stock = $("stock"); stock.innerHTML = "";
  stock.appendChild(document.createTextNode(`${st.stock.length} card(s) `));
  if (view === null) st.stock.forEach(c => stock.appendChild(cardSpan(t, c)));
  const tricks = $("tricks"); tricks.innerHTML = "";
  st.won.forEach(w => {
    const li = el("li", {});
    w.cards.forEach(([s, c]) => { li.appendChild(document.createTextNode(` ${s}:`)); li.appendChild(cardSpan(t, c)); });
    li.appendChild(document.createTextNode(`  won by seat ${w.by}`));
    tricks.appendChild(li);
  });
  const log = $("log"); log.innerHTML = "";
  for (let i = 0; i < st.steps; i++) {
    const s = d.steps[i];
    const mine = view === null || view === s.seat;
    const li = el("li", {"data-seat": String(s.seat), "data-index": String(i), "class": i === st.steps - 1 ? "current" : ""});
    li.appendChild(document.createTextNode(`seat ${s.seat} (${g.seats[s.seat]}), ${s.phase}: `));
    const shown = mine || !s.private;
    const act = el("span", {"class": "action"});
    if (!shown) act.textContent = "a card (not shown to this seat)";
    else if (actionText(t, s.action) === null) act.appendChild(cardSpan(t, s.action));
    else act.textContent = actionText(t, s.action);
    li.appendChild(act);
    if (mine && s.legal) {
      const legal = el("span", {"class": "legal"}, "  legal: ");
      s.legal.forEach(a => {
        const item = actionText(t, a) === null ? cardSpan(t, a) : el("span", {}, actionText(t, a));
        if (a === s.action) item.classList.add("chosen");
        legal.appendChild(item); legal.appendChild(document.createTextNode(" "));
      });
      li.appendChild(legal);
    }
    log.appendChild(li);
  }
  $("settlement").textContent = st.done ? d.results.map(r => r.lines.join("\n")).join("\n") +
    (st.deal === g.deals.length - 1 ? `\nsession: ${g.deltas.map((x, s) => `seat ${s} ${x >= 0 ? "+" : ""}${x}`).join(", ")}` : "") : "";
}
function choose() {
  const t = table();
  const sessions = Array.isArray(t.sessions);
  for (const id of ["sel-a", "sel-b", "sel-format", "sel-lone"]) $(id).parentElement.hidden = sessions;
  $("sel-deal").parentElement.hidden = sessions && t.sessions.length < 2;
  if (sessions) {
    V.deal = fill($("sel-deal"), t.sessions.map((_, i) => i), t.sessions.map(g => g.title), V.deal);
    V.view = fill($("sel-view"), [...[...Array(t.players).keys()].map(String), "all"],
      [...[...Array(t.players).keys()].map(s => `seat ${s}`), "all hands"], V.view);
    render();
    return;
  }
  const agents = agentsWithGames(t);
  V.a = fill($("sel-a"), agents, null, V.a);
  const partners = agents.filter(x => x !== V.a && entryFor(t, V.a, x));
  V.b = fill($("sel-b"), partners, null, V.b);
  const found = entryFor(t, V.a, V.b);
  const deals = found ? Object.keys(found.entry.deals).map(Number).sort((x, y) => x - y) : [];
  V.deal = fill($("sel-deal"), deals, null, V.deal);
  V.lone = fill($("sel-lone"), [...Array(t.players).keys()], null, V.lone);
  V.view = fill($("sel-view"), [...[...Array(t.players).keys()].map(String), "all"],
    [...[...Array(t.players).keys()].map(s => `seat ${s}`), "all hands"], V.view);
  render();
}
function setup() {
  fill($("sel-table"), DATA.tables.map((_, i) => i), DATA.tables.map(t => t.table), 0);
  $("sel-table").onchange = (e) => { V.table = Number(e.target.value); V.pos = 0; choose(); };
  $("sel-a").onchange = (e) => { V.a = e.target.value; V.pos = 0; choose(); };
  $("sel-b").onchange = (e) => { V.b = e.target.value; V.pos = 0; choose(); };
  $("sel-deal").onchange = (e) => { V.deal = e.target.value; V.pos = 0; choose(); };
  $("sel-format").onchange = (e) => { V.format = e.target.value; V.pos = 0; render(); };
  $("sel-lone").onchange = (e) => { V.lone = e.target.value; V.pos = 0; render(); };
  $("sel-view").onchange = (e) => { V.view = e.target.value; render(); };
  $("first").onclick = () => { V.pos = 0; render(); };
  $("prev").onclick = () => { V.pos -= 1; render(); };
  $("next").onclick = () => { V.pos += 1; render(); };
  $("last").onclick = () => { V.pos = 1e9; render(); };
  if (!DATA.tables.length) { $("viewer").hidden = true; return; }
  $("sel-table").parentElement.hidden = DATA.tables.length < 2 && Array.isArray(DATA.tables[0].sessions);
  if (DATA.view !== undefined) V.view = String(DATA.view);
  choose();
}
window.replayViewer = {state: V, render, choose, currentGame, stateAt};
setup();
"""
