// The table page of `mauscheln serve`: choose a table, then play it through the JSON API.
// Everything shown comes from the seat's view (GET/POST /api/tables...); text is set with textContent only.
"use strict";

const $ = (id) => document.getElementById(id);
const SUITS = {C: "♣", S: "♠", H: "♥", D: "♦"};
const SUIT_NAMES = {C: "clubs", S: "spades", H: "hearts", D: "diamonds"};
const S = {options: null, table: null, token: null, view: null, busy: false, keys: []};

function el(tag, attrs, text) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === "class") e.className = v; else e.setAttribute(k, v);
  }
  if (text !== undefined && text !== null) e.textContent = text;
  return e;
}

function isCard(code) { return typeof code === "string" && code.length === 2 && code[1] in SUITS; }
function rankText(code) { return code[0] === "T" ? "10" : code[0]; }
function red(code) { return code[1] === "H" || code[1] === "D"; }
function cardName(code) { return rankText(code) + SUITS[code[1]]; }

// A card drawn as a card: the rank in the corner, the suit symbol large in the middle.
function cardFace(code, tag, small) {
  const e = el(tag || "div", {"class": "card" + (red(code) ? " red" : "") + (small ? " small" : ""),
    "data-card": code, "aria-label": `${rankText(code)} of ${SUIT_NAMES[code[1]]}`, "title": cardName(code)});
  const index = el("span", {"class": "index"});
  index.appendChild(el("span", {"class": "rank"}, rankText(code)));
  index.appendChild(el("span", {"class": "corner"}, SUITS[code[1]]));
  e.appendChild(index);
  e.appendChild(el("span", {"class": "pip"}, SUITS[code[1]]));
  return e;
}

// Text with card codes of the form "Q♥" shown in colour.
function richText(parent, text) {
  const parts = String(text).split(/([AKQJT2-9][♣♠♥♦])/u);
  for (const part of parts) {
    if (/^[AKQJT2-9][♣♠♥♦]$/u.test(part)) {
      const r = part[1] === "♥" || part[1] === "♦";
      parent.appendChild(el("span", {"class": "cardtext" + (r ? " red" : "")}, (part[0] === "T" ? "10" : part[0]) + part[1]));
    } else if (part) {
      parent.appendChild(document.createTextNode(part));
    }
  }
  return parent;
}

async function api(method, path, body) {
  const init = {method, headers: {"Accept": "application/json"}};
  if (body !== undefined) { init.headers["Content-Type"] = "application/json"; init.body = JSON.stringify(body); }
  let response;
  try {
    response = await fetch(path, init);
  } catch (err) {
    throw new Error("the server cannot be reached (is mauscheln serve still running?)");
  }
  let data = null;
  try { data = await response.json(); } catch (err) { data = null; }
  if (!response.ok) {
    const message = data && data.error ? data.error : `the server answered ${response.status}`;
    const error = new Error(message);
    error.status = response.status;
    throw error;
  }
  return data;
}

function showError(message) {
  const box = $("error");
  box.hidden = !message;
  box.textContent = message || "";
}

// ------------------------------------------------------------------ setup
function choice(name) {
  const o = S.options;
  if (o.rulesets[name]) return {ruleset: name, min: o.rulesets[name].min_players, max: o.rulesets[name].max_players,
    players: null, doc: o.rulesets[name].doc};
  const p = o.presets[name];
  return {ruleset: p.ruleset, min: p.min_players, max: p.max_players, players: p.players,
    doc: `a preset of ${p.ruleset}` + (p.players ? `, ${p.players} players` : "")};
}

function fillSeats() {
  const n = Number($("f-players").value) || 4;
  const seat = $("f-seat");
  const keep = Number(seat.value) || 0;
  seat.innerHTML = "";
  for (let s = 0; s < n; s++) seat.appendChild(el("option", {value: String(s)}, `seat ${s}`));
  seat.value = String(Math.min(keep, n - 1));
  fillAgents();
}

function fillAgents() {
  const n = Number($("f-players").value) || 4;
  const me = Number($("f-seat").value) || 0;
  const box = $("f-agents");
  const old = [...box.querySelectorAll("input")].map(i => i.value);
  box.querySelectorAll("label").forEach(l => l.remove());
  let k = 0;
  for (let s = 0; s < n; s++) {
    if (s === me) continue;
    const label = el("label", {}, `seat ${s}`);
    const input = el("input", {"list": "agent-names", "name": `agent-${s}`, "data-seat": String(s), "autocomplete": "off",
      "spellcheck": "false", "maxlength": String(S.options.limits.max_spec)});
    input.value = old[k] || S.options.defaults.agents[0];
    label.appendChild(input);
    box.appendChild(label);
    k++;
  }
}

function onRuleset() {
  const c = choice($("f-ruleset").value);
  const players = $("f-players");
  players.min = String(c.min); players.max = String(c.max);
  if (c.players) players.value = String(c.players);
  players.value = String(Math.min(Math.max(Number(players.value) || 4, c.min), c.max));
  $("f-doc").textContent = c.doc;
  fillSeats();
}

async function setup() {
  S.options = await api("GET", "/api/options");
  const sel = $("f-ruleset");
  const rules = el("optgroup", {label: "rulesets"});
  for (const name of Object.keys(S.options.rulesets)) rules.appendChild(el("option", {value: name}, name));
  const presets = el("optgroup", {label: "presets"});
  for (const name of Object.keys(S.options.presets)) presets.appendChild(el("option", {value: name}, name));
  sel.appendChild(rules); sel.appendChild(presets);
  const names = $("agent-names");
  for (const [name, info] of Object.entries(S.options.agents)) names.appendChild(el("option", {value: name}, info.doc));
  $("f-deals").max = String(S.options.limits.max_deals);
  sel.onchange = onRuleset;
  $("f-players").onchange = fillSeats;
  $("f-seat").onchange = fillAgents;
  $("setup-form").onsubmit = (e) => { e.preventDefault(); sitDown(); };
  onRuleset();
}

async function sitDown() {
  const c = choice($("f-ruleset").value);
  const body = {ruleset: $("f-ruleset").value, players: Number($("f-players").value), seat: Number($("f-seat").value),
    deals: Number($("f-deals").value),
    agents: [...$("f-agents").querySelectorAll("input")].map(i => i.value.trim())};
  if ($("f-seed").value !== "") body.seed = Number($("f-seed").value);
  if (!c) return;
  $("sit").disabled = true;
  showError("");
  try {
    const made = await api("POST", "/api/tables", body);
    S.table = made.table; S.token = made.token;
    history.replaceState(null, "", `#table=${encodeURIComponent(made.table)}&token=${encodeURIComponent(made.token)}`);
    startPlay(made.view);
  } catch (err) {
    $("setup").hidden = false;
    $("setup-form").appendChild($("error"));
    showError(err.message);
  } finally {
    $("sit").disabled = false;
  }
}

// ------------------------------------------------------------------ play
function startPlay(view) {
  $("setup").hidden = true;
  $("play").hidden = false;
  $("play").insertBefore($("error"), $("end"));
  showError("");
  $("log").innerHTML = "";
  render(view);
}

function who(view, s) { return s === view.seat ? `you (seat ${s})` : `seat ${s} (${view.seats[s]})`; }

function addEvents(view) {
  const log = $("log");
  for (const ev of view.events) {
    const li = el("li", {"class": ev.kind + (ev.seat === view.seat ? " mine" : ""), "data-kind": ev.kind});
    if (ev.kind === "settled") {
      li.appendChild(el("div", {}, `deal ${ev.deal} ended: your result ${ev.yours >= 0 ? "+" : ""}${ev.yours}`));
      li.appendChild(el("pre", {"class": "settlement"}, ev.lines.join("\n")));
    } else {
      richText(li, ev.text);
    }
    log.appendChild(li);
  }
  while (log.children.length > 400) log.removeChild(log.firstChild);
  log.scrollTop = log.scrollHeight;
}

function render(view) {
  S.view = view;
  addEvents(view);
  const purse = view.purse === "chips" ? view.chips : view.scores;
  $("status").textContent = `${view.ruleset}, ${view.players} players · deal ${view.deal} · ` +
    `${view.settled} of ${view.deals} settled · ${view.over ? "session over" : view.phase}`;
  // trump card
  const trump = $("trump"); trump.innerHTML = "";
  if (view.trump) trump.appendChild(cardFace(view.trump, "div"));
  else trump.textContent = "—";
  let note = view.trump_suit ? `${SUITS[view.trump_suit]} ${SUIT_NAMES[view.trump_suit]} are trump` : "";
  if (view.trump_taken_by !== null && view.trump_taken_by !== undefined) note += `; taken by ${who(view, view.trump_taken_by)}`;
  $("trump-note").textContent = note;
  // the trick, or the last one of the deal
  const trick = $("trick"); trick.innerHTML = "";
  let shown = view.trick, caption = "trick";
  trick.classList.remove("last");
  if (!shown.length && view.tricks.length) {
    const last = view.tricks[view.tricks.length - 1];
    shown = last.cards; caption = `last trick, won by ${who(view, last.by)}`;
    trick.classList.add("last");
  }
  $("trick-caption").textContent = caption;
  for (const [s, code] of shown) {
    const box = el("div", {"class": "played", "data-seat": String(s)});
    box.appendChild(cardFace(code, "div"));
    box.appendChild(el("span", {}, s === view.seat ? "you" : `seat ${s}`));
    trick.appendChild(box);
  }
  if (!shown.length) trick.appendChild(el("span", {"class": "note"}, "no cards on the table"));
  $("pot-caption").textContent = view.purse === "chips" ? "pot" : "scores count down to 0";
  $("pot").textContent = view.purse === "chips" ? String(view.pot) : "";
  // seats
  const seats = $("seats"); seats.innerHTML = "";
  for (let s = 0; s < view.players; s++) {
    const box = el("div", {"class": "seat" + (s === view.to_act ? " acting" : "") + (s === view.seat ? " you" : ""),
      "data-seat": String(s)});
    const name = el("div", {"class": "name"}, s === view.seat ? `you · seat ${s}` : `seat ${s} · ${view.seats[s]}`);
    if (s === view.dealer) name.appendChild(el("span", {"class": "badge"}, "dealer"));
    if (s === view.to_act) name.appendChild(el("span", {"class": "badge"}, "to act"));
    box.appendChild(name);
    const facts = el("div", {"class": "facts"});
    const add = (k, v) => { facts.appendChild(el("span", {}, k)); facts.appendChild(el("span", {}, String(v))); };
    add(view.purse, purse[s]);
    add("role", view.roles[s]);
    add("tricks", view.tricks_won[s]);
    if (view.exchanged[s] !== null) add("exchanged", view.exchanged[s]);
    add("session", (view.totals[s] >= 0 ? "+" : "") + view.totals[s]);
    box.appendChild(facts);
    seats.appendChild(box);
  }
  // legal moves: the own cards (in hand order), then the named moves; keys 1..9, 0 number them
  const legal = new Set(view.legal);
  const cardMove = view.legal.some(isCard);
  S.keys = [];
  const hand = $("hand"); hand.innerHTML = "";
  for (const code of view.hand) {
    const b = cardFace(code, legal.has(code) ? "button" : "div");
    if (legal.has(code)) { b.type = "button"; b.classList.add("legal"); b.onclick = () => act(code); S.keys.push(code); addKey(b); }
    else if (cardMove) b.classList.add("illegal");  // another card is to be played: this one may not
    hand.appendChild(b);
  }
  if (!view.hand.length) hand.appendChild(el("span", {"class": "note"}, view.over ? "—" : "no cards yet"));
  const marked = $("discards"); marked.innerHTML = "";
  $("discards-box").hidden = !view.discards.length;
  $("discards-caption").textContent = ["decide", "exchange"].includes(view.phase) ? "marked to discard" :
    "your discards this deal";
  for (const code of view.discards) {
    const b = cardFace(code, legal.has(code) ? "button" : "div", true);
    if (legal.has(code)) { b.classList.add("legal"); b.onclick = () => act(code); S.keys.push(code); addKey(b); }
    marked.appendChild(b);
  }
  const moves = $("moves"); moves.innerHTML = "";
  for (const a of view.legal) {
    if (isCard(a)) continue;
    const b = el("button", {"type": "button", "class": "move", "data-action": a, "title": (view.meanings || {})[a] || a}, a);
    b.onclick = () => act(a);
    S.keys.push(a); addKey(b);
    moves.appendChild(b);
  }
  const mine = view.to_act === view.seat && !view.over;
  $("turn").textContent = view.over ? "" : mine ? turnText(view) : `waiting for ${who(view, view.to_act)}`;
  setBusy(S.busy);
  // the end
  const end = $("end");
  end.hidden = !view.over;
  end.innerHTML = "";
  if (view.over) {
    end.appendChild(el("div", {}, "Session over. " + view.totals.map((t, s) => `${who(view, s)} ${t >= 0 ? "+" : ""}${t}`).join(", ")));
    const link = el("a", {"class": "replay", "id": "replay-link",
      "href": `/tables/${encodeURIComponent(S.table)}/replay?token=${encodeURIComponent(S.token)}`},
      "Replay this session with every hand shown");
    end.appendChild(link);
    end.appendChild(document.createTextNode(" · "));
    end.appendChild(el("a", {"href": "/"}, "play again"));
  }
}

function turnText(view) {
  const named = view.legal.filter(a => !isCard(a));
  const cards = view.legal.filter(isCard);
  const parts = [];
  if (cards.length) parts.push(view.phase === "play" ? "play a card" : ["decide", "exchange"].includes(view.phase) ?
    "mark a card to discard" : "choose a card");
  if (named.length) parts.push(named.map(a => (view.meanings || {})[a] ? `${a} (${view.meanings[a]})` : a).join(", "));
  return `Your move (${view.phase}): ${parts.join(" — or ")}`;
}

function addKey(button) {
  const k = S.keys.length;
  if (k <= 10) button.appendChild(el("span", {"class": "key"}, String(k % 10)));
}

function setBusy(busy) {
  S.busy = busy;
  const mine = S.view && S.view.to_act === S.view.seat && !S.view.over;
  document.querySelectorAll("#hand button.legal, #discards button.legal, #moves button").forEach(b => {
    b.disabled = busy || !mine;
  });
  if (busy) $("turn").textContent = "the bots are playing…";
}

async function act(action) {
  if (S.busy) return;
  setBusy(true);
  showError("");
  try {
    const view = await api("POST", `/api/tables/${encodeURIComponent(S.table)}/act`, {token: S.token, action});
    S.busy = false;
    render(view);
  } catch (err) {
    S.busy = false;
    showError(err.message);
    if (S.view) render({...S.view, events: []});
  }
}

document.addEventListener("keydown", (e) => {
  if ($("play").hidden || e.ctrlKey || e.metaKey || e.altKey) return;
  if (!/^[0-9]$/.test(e.key)) return;
  const k = e.key === "0" ? 10 : Number(e.key);
  if (k <= S.keys.length) { e.preventDefault(); act(S.keys[k - 1]); }
});

async function main() {
  const params = new URLSearchParams(location.hash.slice(1));
  if (params.get("table") && params.get("token")) {
    S.table = params.get("table"); S.token = params.get("token");
    try {
      const view = await api("GET", `/api/tables/${encodeURIComponent(S.table)}?token=${encodeURIComponent(S.token)}`);
      startPlay(view);
      return;
    } catch (err) {
      history.replaceState(null, "", location.pathname);
      $("setup").hidden = false;
      await setup();
      $("setup-form").appendChild($("error"));
      showError(`${err.message}`);
      return;
    }
  }
  $("setup").hidden = false;
  try { await setup(); } catch (err) { showError(err.message); }
}

window.mauschelnTable = S;  // for the browser test: the last view and the numbered moves
main();
