"""``aalis vector status|check|reindex|search|mode``: look into and repair the recall index."""

from __future__ import annotations

from typing import Any

import click
from aalis_api_embedding import embedder_kind

from aalis_core import open_host, run_async
from aalis_plugin_memory_vector._indexer import BACKFILL_AT_START
from aalis_plugin_memory_vector._overrides import override_lines
from aalis_plugin_memory_vector._scope import MODES, OVERRIDES_NAMESPACE, as_mode


def _plugin(host: Any) -> Any:
    plugin = host.plugin("memory-vector")
    states = {info.name: info for info in host.plugins()}
    info = states.get("memory-vector")
    if plugin is None or info is None or info.state != "active":
        reason = info.error if info is not None and info.error else "not loaded"
        raise LookupError(f"the memory-vector plugin is not active ({reason})")
    return plugin


async def _status() -> list[str]:
    BACKFILL_AT_START.set(False)  # report the gaps as found, not half backfilled
    async with open_host() as host:
        plugin = _plugin(host)
        caps = plugin.caps
        lines: list[str] = []
        current: str | None = None
        if caps.embedding.present:
            embedder = caps.embedding.use
            current = str(embedder.model_id)
            kind = embedder_kind(embedder) or "unlabelled"
            lines.append(
                f"embedder: {current} ({kind}, {embedder.dim} dimensions) "
                f"from {caps.embedding.provider}"
            )
        else:
            lines.append("embedder: none active (recall is unavailable)")
        if not caps.vectorstore.present:
            lines.append("vector store: none active (recall is unavailable)")
        else:
            lines.append(f"vector store: {caps.vectorstore.provider}")
            stats = await caps.vectorstore.use.stats()
            if not stats.models:
                lines.append("  no vectors")
            for model in stats.models:
                note = "searched" if model.model_id == current else "not searched; reindex"
                lines.append(
                    f"  {model.model_id}: {model.count} vectors, {model.dim} dimensions ({note})"
                )
        config = plugin.config
        default = config.cross_session_mode
        shown = default if as_mode(default) else f"{default!r} (invalid: isolated)"
        lines.append(f"cross_session_mode default: {shown}")
        for name, profile in sorted(config.platforms.items()):
            if profile.cross_session_mode is not None:
                value = profile.cross_session_mode
                shown = value if as_mode(value) else f"{value!r} (invalid: isolated)"
                lines.append(f"  platform {name}: {shown}")
        if caps.memory.present:
            lines += await override_lines(caps.memory.use)
        gaps = plugin.indexer.gaps.items()
        lines.append(f"index gaps waiting for backfill: {len(gaps)}")
        for session_id, gap in gaps[:10]:
            span = "whole session" if gap.whole else f"{gap.from_ts}..{gap.to_ts}"
            lines.append(f"  {session_id}: {span} ({gap.reason})")
        lines.append(
            "missing, orphaned and stale vectors per session: aalis vector check "
            "(reads every session)"
        )
        return lines


@click.group("vector")
def vector_group() -> None:
    """Semantic recall: the index of embedded messages."""


@vector_group.command("status")
def status_command() -> None:
    """Show the embedder, the vectors per model, the scope settings and pending gaps."""
    for line in run_async(_status()):
        click.echo(line)


async def _check(session_id: str | None, repair: bool) -> tuple[list[str], bool]:
    if not repair:
        BACKFILL_AT_START.set(False)  # compare what is there, not a backfill in progress
    async with open_host() as host:
        plugin = _plugin(host)
        results = await plugin.check(session_id, repair=repair)
        if repair:
            after = await plugin.check(session_id)
            differs = any(r.differs for r in after)
        else:
            differs = any(r.differs for r in results)
    header = ("session", "messages", "indexed", "missing", "in gap", "orphaned", "stale", "lexical")
    rows = [
        (r.session_id, r.messages, r.indexed, r.missing, r.in_gap, r.orphaned, r.stale, r.lexical)
        for r in results
    ]
    totals = ("TOTAL", *(sum(int(row[i]) for row in rows) for i in range(1, 8)))
    table = [header, *rows, totals]
    widths = [max(len(str(row[i])) for row in table) for i in range(8)]
    lines = [
        "  ".join(
            str(value).ljust(widths[i]) if i == 0 else str(value).rjust(widths[i])
            for i, value in enumerate(row)
        )
        for row in table
    ]
    holes = sum(r.holes for r in results)
    lines.append(f"missing and not in a recorded gap: {holes}")
    for r in results:
        if r.repaired:
            lines.append(f"repaired {r.session_id}: {r.repaired}")
    if repair:
        lines.append("after repair: " + ("still differs" if differs else "index matches the store"))
    return lines, differs


@vector_group.command("check")
@click.option("--session", "session_id", metavar="S", help="Check this session only.")
@click.option("--repair", is_flag=True, help="Index the missing, delete orphans, re-embed stale.")
def check_command(session_id: str | None, repair: bool) -> None:
    """Compare the index with the message store per session; exit 1 when they differ."""
    lines, differs = run_async(_check(session_id, repair))
    for line in lines:
        click.echo(line)
    if differs:
        raise SystemExit(1)


async def _reindex(session_id: str | None) -> list[str]:
    async with open_host() as host:
        plugin = _plugin(host)
        outcomes = await plugin.reindex(session_id)
        lines = []
        failed = False
        for sid, outcome in outcomes.items():
            if outcome.error is None:
                lines.append(f"{sid}: {outcome.indexed} messages indexed")
            else:
                failed = True
                lines.append(f"{sid}: FAILED after {outcome.indexed}: {outcome.error}")
        if not outcomes:
            lines.append("no sessions to index")
        if failed:
            raise click.ClickException("\n".join(lines))
        return lines


@vector_group.command("reindex")
@click.option("--session", "session_id", metavar="S", help="Re-embed this session only.")
@click.option("--all", "all_", is_flag=True, help="Replace every vector (every model's).")
def reindex_command(session_id: str | None, all_: bool) -> None:
    """Re-embed messages from the message store with the current embedder."""
    if (session_id is None) == (not all_):
        raise click.UsageError("give exactly one of --session S or --all")
    for line in run_async(_reindex(session_id)):
        click.echo(line)


async def _search(query: str, session_id: str | None, k: int) -> list[Any]:
    async with open_host() as host:
        plugin = _plugin(host)
        hits: list[Any] = await plugin.recall.search(session_id, query, k=k)
        return hits


@vector_group.command("search")
@click.argument("query")
@click.option(
    "--session", "session_id", metavar="S", help="Search as recall from S does (its scope)."
)
@click.option("-k", "k", type=click.IntRange(min=0), default=5, show_default=True)
def search_command(query: str, session_id: str | None, k: int) -> None:
    """Show the messages most similar to QUERY (every session unless --session)."""
    hits = run_async(_search(query, session_id, k))
    if not hits:
        click.echo("no hits", err=True)
    for hit in hits:
        text = " ".join((hit.message.content or "").split())
        click.echo(
            f"{hit.score:.3f}  {hit.source or '?':<7}  [{hit.session_id}] {hit.message.role}: {text}"
        )
        for message in hit.neighbours:
            other = " ".join((message.content or "").split())
            click.echo(f"        {message.role}: {other}")


async def _mode(session_id: str, value: str | None, unset: bool) -> str:
    async with open_host() as host:
        plugin = _plugin(host)
        mem = plugin.caps.memory.use
        if unset:
            await mem.delete_metadata(OVERRIDES_NAMESPACE, session_id)
        elif value is not None:
            await mem.save_metadata(OVERRIDES_NAMESPACE, session_id, {"cross_session_mode": value})
        resolved = await plugin.recall.mode_of(session_id)
        return f"{session_id}: {resolved.mode} (from the {resolved.layer} layer)"


@vector_group.command("mode")
@click.argument("session_id", metavar="SESSION")
@click.argument("mode", required=False, type=click.Choice(MODES))
@click.option("--unset", is_flag=True, help="Remove the session's own setting.")
def mode_command(session_id: str, mode: str | None, unset: bool) -> None:
    """Show or set which sessions recall from SESSION may read (cross_session_mode)."""
    if unset and mode is not None:
        raise click.UsageError("give a MODE or --unset, not both")
    click.echo(run_async(_mode(session_id, mode, unset)))


__all__ = ["vector_group"]
