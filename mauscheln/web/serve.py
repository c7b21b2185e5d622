"""``mauscheln serve``: play against the bots and watch games in the browser.

Starts the web server (:mod:`mauscheln.web.app`, Starlette on uvicorn) on
``--host`` (default ``127.0.0.1``: this machine only) and ``--port`` (default 8000;
0 picks a free one) and prints its address. The page at ``/`` opens a table of any
ruleset or preset against any agents; ``/replay`` shows the benchmark records' games.

Agents that send requests over the network (``llm``) are refused unless
``--allow-remote-agents``: the server would spend its key for whoever sits down.
Agents whose spec names code or files on this machine (``file.py:Class``,
``module:Class``, a checkpoint path) are allowed on a loopback address and refused
on any other unless ``--allow-code-agents``: whoever reaches the server could make
it run them. Needs the ``web`` extra (``pip install -e '.[web]'``).
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib.util
import ipaddress
import socket
import sys
from collections.abc import Sequence

from mauscheln_env.errors import MauschelnError
from mauscheln_env.ruleargs import ArgumentParser, newline_after_ctrl_c, report

PROG = "mauscheln serve"
LOG_LEVELS = ("critical", "error", "warning", "info", "debug")


def build_parser() -> argparse.ArgumentParser:
    p = ArgumentParser(prog=PROG, description=__doc__.split("\n\n")[0])
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (default: 127.0.0.1, this machine only)")
    p.add_argument("--port", type=int, default=8000, help="port to listen on (default: 8000; 0: any free port)")
    p.add_argument("--max-tables", type=int, default=64, metavar="N", help="live tables at once (default: 64)")
    p.add_argument("--idle-minutes", type=float, default=30.0, metavar="M",
                   help="a table without a request for M minutes is removed (default: 30)")
    p.add_argument("--max-deals", type=int, default=20, metavar="N", help="the most deals a session may ask for "
                                                                          "(default: 20)")
    p.add_argument("--allow-remote-agents", action="store_true",
                   help="allow agents that send requests over the network, such as llm (refused by default)")
    p.add_argument("--allow-code-agents", action="store_true",
                   help="allow agents whose spec names code or files on this machine also when --host is not a "
                        "loopback address")
    p.add_argument("--db", default=None, help="the leaderboard database whose records /replay shows (default: yours)")
    p.add_argument("--log-level", default="warning", choices=LOG_LEVELS, help="uvicorn's log level (default: warning; "
                                                                               "info logs every request)")
    return p


def bind(host: str, port: int) -> socket.socket:
    """A listening socket on ``host:port``; :class:`MauschelnError` in one line when that is not possible."""
    if not 0 <= port <= 65535:
        raise MauschelnError(f"--port {port} is not allowed; allowed: 0..65535 (0: any free port)")
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except (socket.gaierror, UnicodeError) as exc:
        raise MauschelnError(f"--host {host!r} is not an address of this machine ({exc}); allowed: an address such "
                             "as 127.0.0.1, ::1 or 0.0.0.0, or a name that resolves to one") from exc
    family, _, _, _, address = infos[0]
    try:
        return socket.create_server(address, family=family)
    except OSError as exc:
        if exc.errno in (98, 48):  # EADDRINUSE on Linux, macOS
            raise MauschelnError(f"port {port} on {host} is in use; allowed: a free port (--port N, or --port 0 for "
                                 "any free one)") from exc
        raise MauschelnError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from exc


def is_loopback(sock: socket.socket) -> bool:
    return ipaddress.ip_address(sock.getsockname()[0]).is_loopback


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(list(sys.argv[1:] if argv is None else argv))
    missing = [m for m in ("starlette", "uvicorn") if importlib.util.find_spec(m) is None]
    if missing:
        return report(PROG, f"needs {' and '.join(missing)}, which are not installed; allowed: install the web "
                            "extra (pip install -e '.[web]')")
    import uvicorn

    from mauscheln.web.app import create_app
    from mauscheln.web.tables import Settings

    try:
        for flag, value in (("--max-tables", args.max_tables), ("--max-deals", args.max_deals)):
            if value < 1:
                raise MauschelnError(f"{flag} {value} is not allowed; allowed: a whole number >= 1")
        if not 0 < args.idle_minutes < float("inf"):
            raise MauschelnError(f"--idle-minutes {args.idle_minutes} is not allowed; allowed: a number > 0")
        settings = Settings(max_tables=args.max_tables, idle_seconds=args.idle_minutes * 60,
                            max_deals=args.max_deals, allow_remote=args.allow_remote_agents, db=args.db).check()
        sock = bind(args.host, args.port)
    except MauschelnError as exc:
        return report(PROG, exc)
    local = is_loopback(sock)
    settings = dataclasses.replace(settings, allow_code=local or args.allow_code_agents)
    host, port = sock.getsockname()[:2]
    shown = f"[{host}]" if ":" in host else host
    print(f"{PROG}: http://{shown}:{port}/ (Ctrl-C stops)", flush=True)
    if not local:
        print(f"{PROG}: listening beyond this machine: anyone who reaches it can open tables"
              + ("" if args.allow_code_agents else "; agents naming code or files here are refused"), flush=True)
    server = uvicorn.Server(uvicorn.Config(create_app(settings), log_level=args.log_level,
                                           access_log=args.log_level in ("info", "debug")))
    try:
        server.run(sockets=[sock])
    except KeyboardInterrupt:
        print(newline_after_ctrl_c() + f"{PROG}: stopped", file=sys.stderr)
    finally:
        sock.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
