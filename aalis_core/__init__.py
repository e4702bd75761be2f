"""Aalis plugin host (placeholder, filled by the foundation work)."""
