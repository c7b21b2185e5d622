"""People at the table: ``mauscheln play`` (:mod:`agents.play.terminal`, a human against the bots) and
``mauscheln demo`` (:mod:`agents.play.demo`, a rendered session between any agents)."""
