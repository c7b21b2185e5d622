"""Exceptions raised for bad input. Every one is a ``ValueError``."""

from __future__ import annotations


def shown(value: object) -> str:
    """``repr(value)`` for an error message, cut short when it is long (a number with hundreds of digits)."""
    r = repr(value)
    return r if len(r) <= 60 else f"{r[:30]}... ({len(r)} characters)"


class MauschelnError(ValueError):
    """Base class: something the caller passed is not allowed."""


class ConfigError(MauschelnError):
    """An unknown ruleset or option, a wrong type, or an impossible combination."""


class CardError(MauschelnError):
    """An unknown card code, or a card that is not in this deck."""


class DealError(MauschelnError):
    """A fixed deal that cannot be dealt (duplicate card, wrong hand size, ...)."""


class IllegalActionError(MauschelnError):
    """An action outside the legal set; the state is left unchanged."""


class SessionOverError(MauschelnError):
    """A step after the session (the episode) has ended."""
