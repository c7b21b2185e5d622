"""Language-model agents: a seat's view in plain words (:mod:`agents.llm.text`)."""

from agents.llm.text import TextView, legal_moves, table_text

__all__ = ["TextView", "legal_moves", "table_text"]
