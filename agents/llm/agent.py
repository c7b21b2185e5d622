"""The ``llm`` agent: a language model behind an OpenAI-compatible chat-completions endpoint plays a seat.

At every decision with more than one legal move the agent sends one chat request to
``<base_url>/chat/completions``: a system message (the instructions, or the ``system`` parameter, then
:func:`agents.llm.text.table_text`, the table's rules) and a user message (:class:`agents.llm.text.TextView`,
what the seat knows and its legal moves, numbered). It reads the reply with :func:`parse_reply`; a reply
that names no legal move is answered once more per ``reasks`` with a correction, and after that the agent
plays its ``fallback`` (``random``: a uniformly random legal move drawn from :attr:`rng`, the floor the
``random`` agent sets; ``first``: the first legal move in action-id order). A decision with one legal
move is played without a request.

Transport failures (no connection, no answer within ``timeout`` seconds, HTTP 429 or 5xx) are retried
``retries`` times, waiting ``backoff`` seconds before the first retry and twice as long before each next
one (at most :data:`MAX_WAIT`). When the tries are spent, or the endpoint refuses the request (another
4xx) or answers with something that is not a chat completion, the agent raises :class:`LLMError`: one line
that names the endpoint, what went wrong and what to check.

The key is read from the environment variable named by ``api_key_env`` when the first request is made and
sent as ``Authorization: Bearer``; without it no such header is sent (local servers need none). Neither
the key nor its value ever enters the agent's parameters, its spec, a record or a message. Every request
carries a ``seed`` drawn from :attr:`rng`, so a server that honours it answers a replayed game alike.

:meth:`LLMAgent.counts` counts decisions asked, requests answered, retries, replies that named no legal move
(``unparsed``, of which ``illegal`` named a move that is not legal now), correction requests, fallbacks
and the tokens the server reported; the evaluation runners record them per pairing (``agent_counts``).

HTTP goes through ``httpx`` (the optional extra ``llm``): a well-kept client with explicit timeouts and
no retry policy of its own, so the retries and their count stay this module's. The ``openai`` package
would add its own retries and response models for one POST.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import time
from collections.abc import Sequence
from typing import Any, ClassVar
from urllib.parse import urlsplit

import numpy as np

from agents.base import Agent, AgentError, Info, legal_ids
from agents.llm.text import TextView, table_text
from mauscheln_env.engine import Game

INSTRUCTIONS = (
    "You play one seat of a card game, one decision at a time. Each message tells you what your seat knows "
    "and lists its legal moves, numbered. Answer with exactly one legal move, written as in the list (for "
    "example QH or pass), or its number, and nothing else."
)
"""The default instructions of the system message (the ``system`` parameter replaces them; the table's
rules always follow)."""
FALLBACKS = ("random", "first")
MAX_WAIT = 30.0
"""The longest wait between two tries, in seconds."""
COUNTS = ("decisions", "requests", "retries", "unparsed", "illegal", "reasks", "fallbacks", "prompt_tokens",
             "completion_tokens")
"""The counters of :meth:`LLMAgent.counts`, in the order they are reported."""
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


class LLMError(AgentError):
    """The endpoint cannot be used: unreachable or silent after the retries, a refused request, or an answer
    that is not a chat completion."""


class LLMAgent(Agent):
    """Asks a chat model behind an OpenAI-compatible endpoint for each move (see the module docstring)."""

    name = "llm"
    remote = True
    plays_forced_blind = True
    param_help: ClassVar[dict[str, str]] = {
        "base_url": "the API root of an OpenAI-compatible server, e.g. http://127.0.0.1:8000/v1 (the agent adds "
                    "/chat/completions)",
        "model": "the model name the server serves, e.g. gpt-4o-mini",
        "api_key_env": "the name of the environment variable holding the API key, e.g. OPENAI_API_KEY",
        "timeout": "seconds to wait for an answer, a number > 0",
        "retries": "a whole number >= 0 of retries after a failed request",
        "backoff": "seconds >= 0 before the first retry (doubling for each next one)",
        "temperature": "a number 0..2",
        "max_tokens": "None or a whole number >= 1",
        "system": "None or text that replaces the default instructions",
        "reasks": "a whole number >= 0 of corrections after a reply that names no legal move",
        "fallback": f"one of {', '.join(FALLBACKS)}",
    }

    def __init__(self, seed: int | None = None, base_url: str | None = None, model: str | None = None,
                 api_key_env: str = "OPENAI_API_KEY", timeout: float = 60.0, retries: int = 3, backoff: float = 1.0,
                 temperature: float = 0.0, max_tokens: int | None = None, system: str | None = None,
                 reasks: int = 1, fallback: str = "random") -> None:
        super().__init__(seed)
        self.endpoint = _endpoint(base_url)
        if model is None or not model.strip():
            raise AgentError(f"llm: model={model!r} is not allowed; allowed: {self.param_help['model']}")
        if not _ENV_NAME.fullmatch(api_key_env):
            raise AgentError(f"llm: api_key_env={api_key_env!r} is not allowed; allowed: "
                             f"{self.param_help['api_key_env']} (the name, never the key)")
        for key, value, ok in (("timeout", timeout, timeout > 0), ("retries", retries, retries >= 0),
                               ("backoff", backoff, backoff >= 0), ("temperature", temperature, 0 <= temperature <= 2),
                               ("max_tokens", max_tokens, max_tokens is None or max_tokens >= 1),
                               ("reasks", reasks, reasks >= 0), ("fallback", fallback, fallback in FALLBACKS)):
            if not ok:
                raise AgentError(f"llm: {key}={value!r} is not allowed; allowed: {self.param_help[key]}")
        if importlib.util.find_spec("httpx") is None:
            raise AgentError("agent 'llm' needs httpx, which is not installed here; allowed: pip install "
                             "'mauscheln[llm]' (or pip install httpx)")
        self.params = {"base_url": base_url, "model": model, "api_key_env": api_key_env, "timeout": timeout,
                       "retries": retries, "backoff": backoff, "temperature": temperature, "max_tokens": max_tokens,
                       "system": system, "reasks": reasks, "fallback": fallback}
        self.model, self.api_key_env, self.timeout, self.retries = model, api_key_env, timeout, retries
        self.backoff, self.temperature, self.max_tokens = backoff, temperature, max_tokens
        self.instructions = INSTRUCTIONS if system is None else system
        self.reasks, self.fallback = reasks, fallback
        self._counts = dict.fromkeys(COUNTS, 0)
        self._view: TextView | None = None
        self._system: str | None = None
        self._every: list[str] = []
        self._client: Any = None
        self._client_pid: int | None = None

    # ------------------------------------------------------------------ lifecycle
    def setup(self, game: Game, seat: int) -> None:
        same = self.game is game
        super().setup(game, seat)
        if not same or self._view is None or self._view.seat != seat:
            self._view = TextView(game, seat)
        if not same or self._system is None:
            self._system = f"{self.instructions}\n\n{table_text(game)}"
            self._every = [game.action_to_str(a) for a in range(game.num_actions)]

    def counts(self) -> dict[str, int]:
        return dict(self._counts)

    # ------------------------------------------------------------------ a decision
    def act(self, observation: np.ndarray, action_mask: np.ndarray, info: Info) -> int:
        legal = legal_ids(action_mask)
        if legal.size == 1:
            return int(legal[0])
        if self._view is None or self.game is None:
            raise AgentError("llm: act() before setup(); the runner calls setup(game, seat) first")
        moves = [self.game.action_to_str(int(a)) for a in legal]
        messages = [{"role": "system", "content": self._system},
                    {"role": "user", "content": self._view.render(observation, action_mask, info)}]
        self._counts["decisions"] += 1
        for attempt in range(self.reasks + 1):
            reply = self._complete(messages)
            choice = parse_reply(reply, moves)
            if choice is not None:
                return int(legal[choice])
            self._counts["unparsed"] += 1
            self._counts["illegal"] += parse_reply(reply, self._every, numbers=False) is not None
            if attempt < self.reasks:
                self._counts["reasks"] += 1
                said = " ".join(reply.split())[:200] or "an empty reply"
                messages += [{"role": "assistant", "content": reply},
                             {"role": "user", "content": f"{said!r} is not one of the legal moves. Answer with "
                                                         f"exactly one of: {', '.join(moves)} (or its number "
                                                         f"1-{len(moves)}), and nothing else."}]
        self._counts["fallbacks"] += 1
        return int(legal[0]) if self.fallback == "first" else int(self.rng.choice(legal))

    # ------------------------------------------------------------------ the endpoint
    def _http(self) -> Any:
        """This process's client: a worker forked from a process that had one builds its own (a shared
        connection would mix the two processes' answers)."""
        if self._client is None or self._client_pid != os.getpid():
            import httpx

            key = os.environ.get(self.api_key_env, "")
            headers = {"Authorization": f"Bearer {key}"} if key else {}
            self._client = httpx.Client(timeout=self.timeout, headers=headers)
            self._client_pid = os.getpid()
        return self._client

    def _complete(self, messages: Sequence[dict[str, str]]) -> str:
        """The text of the model's reply to ``messages``, after up to ``retries`` retries of the request."""
        import httpx

        body: dict[str, Any] = {"model": self.model, "messages": list(messages), "temperature": self.temperature,
                                "seed": int(self.rng.integers(2**31 - 1))}
        if self.max_tokens is not None:
            body["max_tokens"] = self.max_tokens
        client = self._http()
        problem = ""
        for attempt in range(self.retries + 1):
            if attempt:
                self._counts["retries"] += 1
                time.sleep(min(MAX_WAIT, self.backoff * 2 ** (attempt - 1)))
            try:
                response = client.post(self.endpoint, json=body)
            except httpx.TimeoutException:
                problem = f"no answer within {self.timeout:g} s"
                continue
            except httpx.ConnectError as exc:
                problem = f"cannot connect ({_one_line(exc) or type(exc).__name__})"
                continue
            except httpx.TransportError as exc:
                problem = f"the request failed ({_one_line(exc) or type(exc).__name__})"
                continue
            code = response.status_code
            if code == 429 or code >= 500:
                problem = f"answered HTTP {code} {response.reason_phrase}{_detail(response)}"
                continue
            if code >= 400:
                raise LLMError(f"llm: {self.endpoint} answered HTTP {code} {response.reason_phrase}"
                               f"{_detail(response)}; {self._hint(code)}")
            return self._content(response)
        tries = "1 try" if self.retries == 0 else f"{self.retries + 1} tries"
        raise LLMError(f"llm: {self.endpoint}: {problem} ({tries}); allowed: a running OpenAI-compatible server at "
                       f"base_url (check the address, or raise timeout={self.timeout:g} or retries={self.retries})")

    def _content(self, response: Any) -> str:
        """The reply text of a chat completion (its tokens counted); raises :class:`LLMError` for anything else."""
        try:
            data = response.json()
            message = data["choices"][0]["message"]
            content = message.get("content")
            if content is not None and not isinstance(content, str):
                raise TypeError("content is not text")
        except (ValueError, KeyError, IndexError, TypeError, AttributeError):
            raise LLMError(f"llm: {self.endpoint} answered HTTP {response.status_code} with something that is not a "
                           f"chat completion ({_one_line(response.text)[:120]!r}); allowed: an OpenAI-compatible "
                           "server at base_url") from None
        self._counts["requests"] += 1
        usage = data.get("usage") if isinstance(data, dict) else None
        if isinstance(usage, dict):
            for key in ("prompt_tokens", "completion_tokens"):
                value = usage.get(key)
                if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
                    self._counts[key] += value
        return content or ""

    def _hint(self, code: int) -> str:
        if code in (401, 403):
            if not os.environ.get(self.api_key_env):
                return f"the variable {self.api_key_env} (api_key_env) is not set; set it to the server's key"
            return f"check the key in {self.api_key_env} (api_key_env)"
        if code == 404:
            return f"check base_url (the API root, e.g. .../v1) and model={self.model!r}"
        return "check model and the other parameters against the server's documentation"


# ---------------------------------------------------------------------- reading a reply
_THINK = re.compile(r"<think>.*?</think>", re.S | re.I)
_ANSWER = re.compile(r"^[\s>*#_-]*(?:final\s+)?(?:answer|move|action|choice)\s*\**\s*[:=]\s*(.+?)\s*$", re.I | re.M)
_MARKED = re.compile(r"`([^`\n]+)`|\*\*([^*\n]+)\*\*|\"([^\"\n]+)\"")
_LISTED = re.compile(r"^(?:(\d+)\s*[.):]\s*)?(\S+)(?:\s+-\s+.*)?$")
_TRIM = " \t\r\n`*'\".,;!"


def parse_reply(reply: str, moves: Sequence[str], numbers: bool = True) -> int | None:
    """The index in ``moves`` (action strings) of the move a model's reply names, or None.

    Accepted, in this order: the whole reply (one move, case aside, or its number 1..len(moves), or a line of
    the list such as ``3. QH`` whose number and move agree); else, when the reply has answer lines
    (``Answer: X``, ``Move: X``, ``Final answer: X``), the last of them read the same way or naming exactly
    one move; else exactly one move marked in the text (in backticks, bold or double quotes); else exactly
    one card code written in the text as the list writes it. Anything else (two moves named, a number
    inside a sentence, a word such as ``pass`` in free text) is no answer. ``<think>`` sections are skipped.
    ``numbers=False`` reads moves only, not their numbers.
    """
    text = _THINK.sub(" ", reply or "").strip()
    lines = _ANSWER.findall(text)
    if lines:
        return _pick(lines[-1], moves, True, numbers)
    return _pick(text, moves, False, numbers)


def _pick(text: str, moves: Sequence[str], words: bool, numbers: bool) -> int | None:
    found = _whole(text, moves, numbers)
    listed = _LISTED.fullmatch(text.strip(_TRIM))
    if found is not None or (listed is not None and listed.group(1) is not None):
        return found  # a line of the list, "N. MOVE", whose number and move disagree is no answer
    marked = {_whole(next(g for g in m if g), moves, numbers) for m in _MARKED.findall(text)} - {None}
    if marked:
        return marked.pop() if len(marked) == 1 else None
    named = set()
    for i, move in enumerate(moves):
        card = len(move) == 2 and move.isupper()
        if not (words or card):
            continue
        if re.search(rf"(?<![\w:]){re.escape(move)}(?![\w:])", text, 0 if card else re.I):
            named.add(i)
    return named.pop() if len(named) == 1 else None


def _whole(text: str, moves: Sequence[str], numbers: bool = True) -> int | None:
    """The move that ``text`` is in full: a move, its number, or ``N. MOVE`` with both agreeing."""
    m = _LISTED.fullmatch(text.strip(_TRIM))
    if m is None:
        return None
    number, word = m.group(1), m.group(2).strip(_TRIM)
    index = None
    if number is not None and not numbers:
        return None
    if word.isdigit() and number is None:
        if not numbers:
            return None
        k = int(word)
        return k - 1 if 1 <= k <= len(moves) else None
    for i, move in enumerate(moves):
        if move.lower() == word.lower():
            index = i
            break
    if index is None or (number is not None and int(number) != index + 1):
        return None
    return index


# ---------------------------------------------------------------------- helpers
def _endpoint(base_url: str | None) -> str:
    allowed = LLMAgent.param_help["base_url"]
    if base_url is None or not base_url.strip():
        raise AgentError(f"llm needs base_url; allowed: {allowed}. Nothing is asked of any server unless you name one")
    try:
        parts = urlsplit(base_url.strip())
        parts.port  # noqa: B018 - raises ValueError for a port that is not a number 0..65535
    except ValueError as exc:
        raise AgentError(f"llm: base_url={base_url!r} is not a URL ({exc}); allowed: {allowed}") from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise AgentError(f"llm: base_url={base_url!r} is not an http(s) URL with a host; allowed: {allowed}")
    if parts.username is not None or parts.password is not None:
        raise AgentError(f"llm: base_url={base_url!r} holds credentials, which would be recorded with the spec; "
                         f"allowed: a URL without them, the key in the variable named by api_key_env")
    if parts.query or parts.fragment:
        raise AgentError(f"llm: base_url={base_url!r} has a query or fragment; allowed: {allowed}")
    if parts.path.rstrip("/").endswith("/chat/completions"):
        raise AgentError(f"llm: base_url={base_url!r} names the endpoint itself; allowed: {allowed}")
    return base_url.strip().rstrip("/") + "/chat/completions"


def _one_line(x: Any) -> str:
    return " ".join(str(x).split())


def _detail(response: Any) -> str:
    """``: <the server's error message>`` (an OpenAI-style ``error.message`` or the start of the body)."""
    try:
        data = response.json()
        text = data["error"]["message"] if isinstance(data.get("error"), dict) else data.get("error") or data
    except (ValueError, AttributeError, KeyError, TypeError):
        text = response.text
    text = _one_line(text if isinstance(text, str) else json.dumps(text))[:200]
    return f": {text}" if text else ""


__all__ = ["FALLBACKS", "INSTRUCTIONS", "LLMAgent", "LLMError", "COUNTS", "parse_reply"]
