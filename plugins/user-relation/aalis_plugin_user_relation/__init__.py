"""The ``user-relation`` plugin: what it knows about a person (docs/host/facts.md)."""
