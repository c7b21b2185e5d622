"""Playing agents against each other and measuring the difference.

* :mod:`agents.evaluation.match` — the match runner: agents on the engine directly, fixed (duplicate) deals.
* :mod:`agents.evaluation.duplicate` — one pairing over duplicate deals, on worker processes; the statistics.
* :mod:`agents.evaluation.batched` — the same pairing on the batched engine, for agents with a tensor form.
* :mod:`agents.evaluation.tournament` — every pairing of a set of agents, Bradley–Terry ratings, results files.
* :mod:`agents.evaluation.crosstables` — the per-ruleset cross-table pages (``mauscheln eval --suite``).
* :mod:`agents.evaluation.charts` — the charts of evaluation results.
* :mod:`agents.evaluation.cli` — ``mauscheln eval``.
"""
