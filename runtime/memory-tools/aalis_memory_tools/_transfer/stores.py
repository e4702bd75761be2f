"""Which stores a transfer reads and writes, and what they must implement.

A transfer needs optional extensions of the memory contract (``list_sessions``,
``export_session``, ``import_messages``, ``list_namespaces``: see
docs/reference/memory-contract.md); ``require`` names the missing one instead of letting
the copy degrade to a partial one. On a host, a transfer must also cover every store some
consumer keeps its memory in (``left_out``), and must not write into a store that keeps
nothing past the process (``refuse_volatile``). ``export_source``, ``import_target`` and
``migration_stores`` apply those rules for the three commands and return the stores to use.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, cast

from aalis_api_memory import FullMemoryService, MemoryService, memory

from aalis_memory_tools._export_format import TransferError

if TYPE_CHECKING:
    from aalis_core import Host


def require(
    service: object, provider: str | None, names: Sequence[str], command: str
) -> FullMemoryService:
    """Refuse early, naming the method, when a backend lacks an optional extension.

    Returns ``service`` typed with every optional method, so the transfer calls the ones it
    checked with their signatures (``supports``, docs/reference/memory-contract.md); only
    the methods in ``names`` are known to be there, and a transfer calls no other.
    """
    missing = [name for name in names if not callable(getattr(service, name, None))]
    if missing:
        listed = ", ".join(f"{name}()" for name in missing)
        raise TransferError(
            f"{'the store' if provider is None else f'memory provider {provider!r}'} does not "
            f"implement {listed}, which "
            f"`aalis {command}` needs (optional extensions: see docs/reference/memory-contract.md)"
        )
    return cast(FullMemoryService, service)


def refuse_volatile(host: Host, provider: str | None, action: str) -> None:
    """Refuse to write into a provider that keeps nothing past this process.

    The copy would vanish when the command exits, while the summary line said it was
    written (docs/host/providers.md, "No silent loss of durability").
    """
    plugin = host.plugin(provider) if provider is not None else None
    if plugin is not None and getattr(plugin, "volatile", False) is True:
        raise TransferError(
            f"{provider} is volatile (it keeps nothing past this process), so whatever "
            f"`aalis {action}` wrote there would be gone when the command exits; "
            "choose a durable memory provider"
        )


def memory_holders(host: Host) -> dict[str, list[str]]:
    """Provider -> the consumers whose memory it holds (plugins, ``host`` and ``cli``).

    What ``export --all`` and ``migrate`` must cover: a consumer pinned to another store
    keeps its data there, and copying only the CLI's store would silently leave it out.
    """
    from aalis_core import CLI_CONSUMER

    def durable(provider: str | None) -> bool:
        # A volatile store starts empty in every command: there is nothing in it to leave out.
        plugin = host.plugin(provider) if provider is not None else None
        return plugin is not None and getattr(plugin, "volatile", False) is not True

    holders: dict[str, list[str]] = {}
    for info in host.plugins():
        provider = info.bindings.get(memory.name)
        if provider is not None and durable(provider):
            holders.setdefault(provider, []).append(info.name)
    for consumer in ("host", CLI_CONSUMER):
        provider = host.capability(memory, consumer).provider
        if provider is not None and durable(provider):
            holders.setdefault(provider, []).append(consumer)
    return holders


def left_out(host: Host, covered: Iterable[str | None]) -> dict[str, list[str]]:
    """Providers holding some consumer's memory that are not in ``covered``."""
    skip = set(covered)
    return {p: c for p, c in memory_holders(host).items() if p not in skip}


def left_out_text(missing: dict[str, list[str]]) -> str:
    """``memory-mongodb (memory of 'notes')``, for the refusals that name what is left out."""
    return "; ".join(
        f"{provider} (memory of {', '.join(repr(c) for c in consumers)})"
        for provider, consumers in missing.items()
    )


def export_source(
    host: Host, session_id: str | None, from_: str | None
) -> tuple[MemoryService, str | None]:
    """The store ``aalis export`` reads (``from_``, else the CLI's) and its provider name.

    Exporting everything from the CLI's store is refused when another store holds some
    consumer's memory: the export would silently leave it out.
    """
    handle = host.capability(memory) if from_ is None else host.capability(memory, provider=from_)
    service = handle.use  # absent: CapabilityAbsent says which provider failed and why
    if session_id is None and from_ is None:
        missing = left_out(host, [handle.provider])
        if missing:
            how = " and ".join(
                f"`aalis export --all --from {p} -o FILE`" for p in [handle.provider, *missing]
            )
            raise TransferError(
                f"`aalis export --all` reads {handle.provider} and would leave out "
                f"{left_out_text(missing)}; export each store by name: {how} "
                "(nothing was written)"
            )
    return service, handle.provider


def import_target(host: Host) -> tuple[MemoryService, str | None]:
    """The store ``aalis import`` writes (the CLI's) and its provider name; never volatile."""
    handle = host.capability(memory)
    target = handle.use  # absent: CapabilityAbsent says which provider failed and why
    refuse_volatile(host, handle.provider, "import into")
    return target, handle.provider


def migration_stores(
    host: Host, to: str, from_: str | None
) -> tuple[MemoryService, str | None, MemoryService, str | None]:
    """``(source, source provider, target, target provider)`` of ``aalis migrate``.

    Both must be active and different, the target durable; migrating the CLI's store is
    refused when another store holds some consumer's memory (that store would be left out),
    and the source must have the extensions a migration reads.
    """
    source_handle = (
        host.capability(memory) if from_ is None else host.capability(memory, provider=from_)
    )
    target_handle = host.capability(memory, provider=to)
    active = ", ".join(host.providers(memory)) or "none"
    if from_ is None:
        _ = source_handle.use  # absent: CapabilityAbsent names the failed provider
    if not source_handle.present:
        raise TransferError(
            f"source memory provider {from_!r} is not active (active providers: {active})"
        )
    if not target_handle.present:
        raise TransferError(
            f"target memory provider {to!r} is not active (active providers: {active}); "
            f"configure it in [plugins.{to}]"
        )
    if source_handle.provider == target_handle.provider:
        hint = ""
        if from_ is None:
            # The usual way here: the target was pinned in [capabilities.memory] before the
            # migration, so the CLI's store (the default source) is already the target.
            others = [p for p in host.providers(memory) if p != to]
            named = others[0] if len(others) == 1 else "PROVIDER"
            hint = (
                f"; without --from the source is the CLI's memory provider, which is {to!r}: "
                f"name the store to copy from (`aalis migrate --from {named} --to {to}`), or "
                "keep [capabilities.memory] provider on it until the migration is done"
            )
        raise TransferError(f"source and target are the same provider {to!r}{hint}")
    refuse_volatile(host, target_handle.provider, "migrate")
    if from_ is None:
        missing = left_out(host, [source_handle.provider, target_handle.provider])
        if missing:
            how = " and ".join(
                f"`aalis migrate --from {p} --to {to}`" for p in [source_handle.provider, *missing]
            )
            raise TransferError(
                f"`aalis migrate` copies {source_handle.provider} and would leave out "
                f"{left_out_text(missing)}; migrate each store by name: {how} "
                "(nothing was written)"
            )
    source, target = source_handle.use, target_handle.use
    require(
        source,
        source_handle.provider,
        ["list_sessions", "export_session", "list_namespaces"],
        "migrate",
    )
    return source, source_handle.provider, target, target_handle.provider


__all__ = [
    "export_source",
    "import_target",
    "left_out",
    "left_out_text",
    "memory_holders",
    "migration_stores",
    "refuse_volatile",
    "require",
]
