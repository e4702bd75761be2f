"""Summariser ids known without loading the summariser itself.

A summary record names the summariser that wrote it; code that only needs the name (the
plugin's start-up, forgetting) must not pay for the extractive summariser's tables and
patterns, which every ``aalis`` command would otherwise load.
"""

#: The offline extractive summariser's id, in summary records and the ``model`` field.
EXTRACTIVE_ID = "extractive"

__all__ = ["EXTRACTIVE_ID"]
