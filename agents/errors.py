"""The agents' error: a ``ValueError`` (through :class:`mauscheln_env.errors.MauschelnError`) whose message says
what was wrong and what is allowed. Re-exported as :class:`agents.base.AgentError`."""

from mauscheln_env.errors import MauschelnError


class AgentError(MauschelnError):
    """An unknown agent, parameter or spec, or a parameter value that is not allowed."""
