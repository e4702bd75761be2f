"""Settings shared by every test suite of the repository.

Hypothesis: its timing checks (``deadline``, the ``too_slow`` health check) fail a test when
the machine is slow, not when the code is wrong: CI runs the suite on two shared cores, and a
garbage-collection pause of a second made a property test fail there. Speed is measured in
``benchmarks/``, never asserted by a test (docs/performance.md), so the profile turns them off
and keeps every other health check.
"""

from __future__ import annotations

from hypothesis import HealthCheck, settings

settings.register_profile("aalis", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("aalis")
