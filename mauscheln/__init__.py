"""The ``mauscheln`` command line (:mod:`mauscheln.cli`): one entry point over the environment
(:mod:`mauscheln_env`), the agents and evaluation (:mod:`agents`) and training (:mod:`train`).

This package sits on top of the others and nothing imports it; ``python -m mauscheln`` runs the command.
"""
