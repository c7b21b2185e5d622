"""Adapters to other libraries' game and training interfaces (each imports its library on its own)."""
