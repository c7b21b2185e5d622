"""Search agents: they look ahead over deals consistent with what their seat knows.

* :mod:`agents.search.pimc` — ``pimc``, determinized search (sampled deals, exact search of the tricks),
  optionally guided by a learned policy (``pimc:model=<policy>,phases=play``).
* :mod:`agents.search.openspiel` — ``openspiel``, OpenSpiel's IS-MCTS over pimc's determinization.
"""
