"""The standard benchmark: versioned deal sets, ``mauscheln bench``, the leaderboard and the replays.

* :mod:`agents.bench.decks`: the deal sets of a suite (``v1``), their files and hashes;
* :mod:`agents.bench.run`: ``bench run``: an agent against the reference field on a suite, the result record;
* :mod:`agents.bench.leaderboard`: the leaderboard (``bench submit``, ``bench leaderboard``): the shipped records
  (``records/``, package data) beside the user's SQLite database;
* :mod:`agents.bench.replay`: replays of suite deals (``mauscheln replay``) as data and as text;
* :mod:`agents.bench.report`: the static HTML report (``bench report``);
* :mod:`agents.bench.cli`: the ``mauscheln bench`` command.
"""
