"""``python -m aalis_core``: the ``aalis`` command."""

from aalis_core._cli import main

main()
