"""``mauscheln serve``: play and watch Mauscheln in the browser.

* :mod:`mauscheln.web.tables` — the tables (a person against bots), each seat's view, the bounds; no HTTP.
* :mod:`mauscheln.web.app` — the Starlette application: the page, the JSON API, the replays.
* :mod:`mauscheln.web.pages` — the replay pages (the benchmark report's viewer) and error pages.
* :mod:`mauscheln.web.serve` — the command: uvicorn on ``--host``/``--port``.
* ``static/`` — the page's HTML, script and style (package data; nothing is fetched from elsewhere).

Needs the ``web`` extra (``pip install -e '.[web]'``: Starlette and uvicorn); ``docs/web.md`` describes the API.
"""
