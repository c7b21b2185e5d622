"""Language-model agents: a seat's view in plain words (:mod:`agents.llm.text`) and the ``llm`` agent that asks an
OpenAI-compatible chat-completions endpoint for each move (:mod:`agents.llm.agent`; its requests need httpx)."""

from agents.llm.agent import LLMAgent, LLMError, parse_reply
from agents.llm.text import TextView, legal_moves, table_text

__all__ = ["LLMAgent", "LLMError", "TextView", "legal_moves", "parse_reply", "table_text"]
