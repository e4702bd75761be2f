"""The pytest plugin entry of the kit (``pytest11``): it registers nothing by itself.

Being a pytest plugin is what makes pytest rewrite the assertions of every module of this
distribution, so a failing conformance case prints the values it compared. The cases are
classes a provider's own test module subclasses (docs/reference/conformance.md).
"""

__all__: list[str] = []
