"""``PgvectorStore``: the ``VectorStore`` contract on PostgreSQL with pgvector.

One table holds every model's vectors in an untyped ``vector`` column; each model gets its own
HNSW index on ``(embedding::vector(dim)) vector_cosine_ops`` restricted to that model (a
partial expression index, pgvector's documented way to keep several widths in one table). A
search names the model's width in the same cast, so the planner uses that model's index and
other models' vectors are never compared.

Filtered searches run with ``hnsw.iterative_scan = relaxed_order``: the index scan keeps
walking until ``k`` rows pass the scope filter (or ``max_scan_tuples`` is reached), and the
outer query restores the exact order of what it found. When a narrow scope still yields fewer
than ``k``, the same query runs again without the index (an exact scan of the rows in scope,
found through ``(model_id, session_id)``), so ``k`` hits come back whenever ``k`` exist.

``lexical_search`` is the lexical leg of recall: the terms each message is indexed under
(``_lexical.py``) live in a ``tsvector`` column of the same row under a GIN index, so upserts,
deletes and clears keep it in step, and the scope filter is the same ``WHERE`` as ``search``'s
(docs/backends/postgres.md, "Lexical search").

Text columns hold any string (``codec.py``); the tables, their migrations and the per-model
indexes are in ``schema.py``.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Iterable, Sequence
from typing import Any

import psycopg
from aalis_api_vectorstore import (
    DimensionMismatch,
    LexicalDrift,
    ModelStats,
    ScopeFilter,
    VectorEntry,
    VectorHit,
    VectorRecord,
    VectorStoreStats,
    VectorStoreUnavailable,
    batch_dims,
    check_delete,
    check_k,
    check_records,
    check_session_id,
    check_where,
    float_row,
)
from psycopg import AsyncConnection, sql
from psycopg_pool import AsyncConnectionPool

from aalis_core import get_logger, redact
from aalis_plugin_vectorstore_pgvector._codec import (
    check_text,
    escape,
    escape_optional,
    unescape,
    vector_literal,
)
from aalis_plugin_vectorstore_pgvector._config import PgvectorConfig
from aalis_plugin_vectorstore_pgvector._lexical import (
    COMMON_ROWS,
    WINDOW,
    document_counts_sql,
    document_terms,
    lexical_sql,
    query_terms,
    seed_terms,
    tsquery_literal,
)
from aalis_plugin_vectorstore_pgvector._lexical_check import (
    check as lexical_check,
    repair as lexical_repair,
)
from aalis_plugin_vectorstore_pgvector._schema import create_index, index_name, migrate

INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1


def _scope_sql(conn: AsyncConnection[Any], where: ScopeFilter, params: dict[str, Any]) -> str:
    """The scope filter as a ``WHERE`` condition (its values added to ``params``).

    The model id is a literal, not a parameter: the planner must see it to pick the model's
    partial HNSW index, whatever plan (custom or generic) it caches.
    """
    model = sql.Literal(escape(where.model_id)).as_string(conn)
    filters = [f"model_id = {model}"]
    if where.session_ids is not None:
        filters.append("session_id = ANY(%(sessions)s)")
        params["sessions"] = [escape(v) for v in sorted(where.session_ids)]
    if where.exclude_session_ids:
        filters.append("session_id <> ALL(%(excluded)s)")
        params["excluded"] = [escape(v) for v in sorted(where.exclude_session_ids)]
    if where.platform is not None:
        filters.append("platform = %(platform)s")
        params["platform"] = escape(where.platform)
    if where.user_id is not None:
        filters.append("user_id = %(user)s")
        params["user"] = escape(where.user_id)
    if where.roles is not None:
        filters.append("role = ANY(%(roles)s)")
        params["roles"] = [escape(v) for v in sorted(where.roles)]
    return " AND ".join(filters)


class PgvectorStore:
    """Vectors of any number of models in one schema; any number of hosts may share it."""

    #: A lexical seed term held by more rows is common: it only fills up (``_lexical.py``).
    common_rows = COMMON_ROWS
    #: The fill-up ranks at most this many of the newest common-term matches in scope.
    window = WINDOW

    def __init__(
        self, pool: AsyncConnectionPool[Any], config: PgvectorConfig, *, logger: Any = None
    ) -> None:
        self._pool: AsyncConnectionPool[Any] | None = pool
        self.config = config
        self.schema = config.schema
        s = '"' + config.schema + '"'
        self._s = s
        self._logger = logger if logger is not None else get_logger("vectorstore-pgvector")

    @classmethod
    async def connect(cls, config: PgvectorConfig, *, logger: Any = None) -> PgvectorStore:
        """Open the pool, create the extension (if allowed) and the schema."""
        if config.uri is None:
            raise ValueError("PgvectorConfig.uri is not set")
        timeout = float(config.connect_timeout_s)
        pool: AsyncConnectionPool[Any] = AsyncConnectionPool(
            config.uri,
            min_size=config.min_pool_size,
            max_size=max(config.max_pool_size, config.min_pool_size),
            kwargs={
                "autocommit": True,
                "connect_timeout": config.connect_timeout_s,
                "application_name": "aalis-vectorstore-pgvector",
            },
            timeout=timeout,
            name="aalis-vectorstore-pgvector",
            open=False,
        )
        store = cls(pool, config, logger=logger)
        try:
            async with asyncio.timeout(timeout + 1):
                await pool.open(wait=config.min_pool_size > 0, timeout=timeout)
                async with pool.connection(timeout=timeout) as conn:
                    await migrate(conn, config.schema)
        except Exception as exc:
            await pool.close()
            where = redact(config.uri)
            reason = redact(f"{type(exc).__name__}: {exc}")
            raise VectorStoreUnavailable(
                f"pgvector store at {where} (schema {config.schema!r}) is not usable: {reason}"
            ) from None
        except BaseException:
            await pool.close()
            raise
        return store

    @property
    def pool(self) -> AsyncConnectionPool[Any]:
        if self._pool is None:
            raise VectorStoreUnavailable("the pgvector store is closed")
        return self._pool

    async def close(self) -> None:
        pool, self._pool = self._pool, None
        if pool is not None:
            await pool.close()

    # -- writes --------------------------------------------------------------------------

    async def _ensure_model(self, conn: AsyncConnection[Any], model_id: str, dim: int) -> None:
        """Register the model's width and its HNSW index, inside the caller's transaction.

        The row lock on ``models`` serialises hosts adding the same model. A model whose
        vectors are all gone may come back with another width: its index is rebuilt.
        """
        s = self._s
        mid = escape(model_id)
        cursor = await conn.execute(
            f"INSERT INTO {s}.models (model_id, dim) VALUES (%s, %s)"
            " ON CONFLICT (model_id) DO NOTHING RETURNING dim",
            (mid, dim),
        )
        created = await cursor.fetchone() is not None
        if not created:
            cursor = await conn.execute(
                f"SELECT dim FROM {s}.models WHERE model_id = %s FOR UPDATE", (mid,)
            )
            row = await cursor.fetchone()
            known = int(row[0]) if row else dim
            if known == dim:
                return
            cursor = await conn.execute(
                f"SELECT 1 FROM {s}.vectors WHERE model_id = %s LIMIT 1", (mid,)
            )
            if await cursor.fetchone() is not None:
                raise DimensionMismatch(model_id, known, dim)
            await conn.execute(f"UPDATE {s}.models SET dim = %s WHERE model_id = %s", (dim, mid))
        await create_index(conn, self.schema, model_id, dim)

    async def drop_index(self, model_id: str) -> None:
        """Drop the model's HNSW index, before a bulk load (inserting into HNSW is the slow part).

        Searches stay correct meanwhile (the exact form over the rows in scope), only slower;
        ``build_index`` puts the index back.
        """
        index = sql.Identifier(index_name(model_id))
        async with self.pool.connection() as conn:
            await conn.execute(
                sql.SQL("DROP INDEX IF EXISTS {}.{}").format(sql.Identifier(self.schema), index)
            )

    async def build_index(self, model_id: str) -> None:
        """(Re)build the model's HNSW index in one pass over its vectors."""
        async with self.pool.connection() as conn, conn.transaction():
            cursor = await conn.execute(
                f"SELECT dim FROM {self._s}.models WHERE model_id = %s FOR UPDATE",
                (escape(model_id),),
            )
            row = await cursor.fetchone()
            if row is None:
                return
            await create_index(conn, self.schema, model_id, int(row[0]))

    async def upsert(self, records: Sequence[VectorRecord]) -> int:
        batch = check_records(records)
        dims = batch_dims(batch)
        rows: dict[str, tuple[Any, ...]] = {}
        for record in batch:
            for value, what in (
                (record.message_id, "message_id"),
                (record.session_id, "session_id"),
                (record.role, "role"),
                (record.model_id, "model_id"),
                (record.text, "text"),
                (record.platform, "platform"),
                (record.user_id, "user_id"),
            ):
                check_text(value, what)
            if not INT64_MIN <= record.timestamp <= INT64_MAX:
                raise ValueError(f"timestamp {record.timestamp} does not fit in a bigint")
            key = escape(record.message_id)
            rows.pop(key, None)  # a key twice in one batch: the last one wins
            rows[key] = (
                key,
                escape(record.session_id),
                record.timestamp,
                escape(record.role),
                escape(record.model_id),
                escape(record.text),
                escape_optional(record.platform),
                escape_optional(record.user_id),
                vector_literal(float_row(record.vector)),
                document_terms(record.text),
            )
        if not rows:
            return 0
        s = self._s
        async with self.pool.connection() as conn, conn.transaction():
            for model_id, dim in sorted(dims.items()):
                await self._ensure_model(conn, model_id, dim)
            async with conn.cursor() as cursor:
                await cursor.executemany(
                    f"INSERT INTO {s}.vectors (message_id, session_id, ts, role, model_id, text,"
                    " platform, user_id, embedding, lex)"
                    " VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s::vector,"
                    " array_to_tsvector(%s::text[]))"
                    " ON CONFLICT (message_id) DO UPDATE SET session_id = excluded.session_id,"
                    " ts = excluded.ts, role = excluded.role, model_id = excluded.model_id,"
                    " text = excluded.text, platform = excluded.platform,"
                    " user_id = excluded.user_id, embedding = excluded.embedding,"
                    " lex = excluded.lex",
                    list(rows.values()),
                )
        return len(batch)

    async def delete(
        self,
        session_id: str,
        ids: Iterable[str] | None = None,
        *,
        timestamps: Iterable[int] | None = None,
    ) -> int:
        session_id, wanted_ids, wanted = check_delete(session_id, ids, timestamps)
        sid = escape(session_id)
        async with self.pool.connection() as conn:
            if wanted_ids is not None:
                if not wanted_ids:
                    return 0
                cursor = await conn.execute(
                    f"DELETE FROM {self._s}.vectors WHERE session_id = %s AND message_id = ANY(%s)",
                    (sid, [escape(i) for i in wanted_ids]),
                )
            elif wanted is None:
                cursor = await conn.execute(
                    f"DELETE FROM {self._s}.vectors WHERE session_id = %s", (sid,)
                )
            else:
                valid = [ts for ts in wanted if INT64_MIN <= ts <= INT64_MAX]
                if not valid:
                    return 0
                cursor = await conn.execute(
                    f"DELETE FROM {self._s}.vectors WHERE session_id = %s AND ts = ANY(%s)",
                    (sid, valid),
                )
            return max(int(cursor.rowcount), 0)

    async def delete_all(self) -> int:
        async with self.pool.connection() as conn:
            cursor = await conn.execute(f"DELETE FROM {self._s}.vectors")
            return max(int(cursor.rowcount), 0)

    async def entries(self, session_id: str) -> list[VectorEntry]:
        sid = check_session_id(session_id)
        async with self.pool.connection() as conn:
            cursor = await conn.execute(
                f"SELECT message_id, ts, role, model_id, text FROM {self._s}.vectors"
                " WHERE session_id = %s ORDER BY ts, message_id",
                (escape(sid),),
            )
            rows = await cursor.fetchall()
        return [
            VectorEntry(
                message_id=unescape(m),
                session_id=sid,
                timestamp=int(ts),
                role=unescape(role),
                model_id=unescape(model),
                text=unescape(text),
            )
            for m, ts, role, model, text in rows
        ]

    async def sessions(self) -> list[str]:
        async with self.pool.connection() as conn:
            cursor = await conn.execute(
                f"SELECT DISTINCT session_id FROM {self._s}.vectors ORDER BY session_id"
            )
            rows = await cursor.fetchall()
        return [unescape(row[0]) for row in rows]

    async def dropped_sessions(self) -> list[str]:
        """Sessions whose vectors the identity migration dropped (see ``DroppedSessions``)."""
        async with self.pool.connection() as conn:
            cursor = await conn.execute(
                f"SELECT session_id FROM {self._s}.dropped_sessions ORDER BY session_id"
            )
            rows = await cursor.fetchall()
        return [unescape(row[0]) for row in rows]

    async def acknowledge_dropped(self, session_ids: Sequence[str]) -> None:
        """Forget those sessions: their gaps are recorded in the message store."""
        ids = [escape(check_session_id(s)) for s in session_ids]
        if not ids:
            return
        async with self.pool.connection() as conn:
            await conn.execute(
                f"DELETE FROM {self._s}.dropped_sessions WHERE session_id = ANY(%s)", (ids,)
            )

    # -- reads ---------------------------------------------------------------------------

    async def _dim(self, conn: AsyncConnection[Any], model_id: str) -> int | None:
        cursor = await conn.execute(
            f"SELECT m.dim FROM {self._s}.models m WHERE m.model_id = %s"
            f" AND EXISTS (SELECT 1 FROM {self._s}.vectors v WHERE v.model_id = m.model_id)",
            (escape(model_id),),
        )
        row = await cursor.fetchone()
        return None if row is None else int(row[0])

    async def search(self, vector: Sequence[float], k: int, where: ScopeFilter) -> list[VectorHit]:
        k = check_k(k)
        where = check_where(where)
        query = float_row(vector, what="query vector")
        dim = len(query)
        async with self.pool.connection() as conn:
            if k == 0 or where.is_empty:
                await self._check_dim(conn, where.model_id, dim)
                return []
            params: dict[str, Any] = {"q": vector_literal(query), "k": k}
            condition = _scope_sql(conn, where, params)
            try:
                rows = await self._search(conn, dim, condition, params, exact=False)
                if len(rows) < k:
                    rows = await self._search(conn, dim, condition, params, exact=True)
            except psycopg.errors.DataException:
                # A stored vector of this model has another width (the cast refused it).
                await self._check_dim(conn, where.model_id, dim)
                raise
            if not rows:
                # Nothing in scope, or a model with no vectors: either way no hits, but a
                # wrong width must still be refused.
                await self._check_dim(conn, where.model_id, dim)
        return [self._hit(where.model_id, row) for row in rows]

    async def _check_dim(self, conn: AsyncConnection[Any], model_id: str, dim: int) -> None:
        known = await self._dim(conn, model_id)
        if known is not None and known != dim:
            raise DimensionMismatch(model_id, known, dim)

    def search_sql(self, dim: int, filters: str, *, exact: bool) -> str:
        """The search statement (public for the EXPLAIN tests and the benchmark)."""
        distance = f"(embedding::vector({dim}) <=> %(q)s::vector({dim}))"
        # The exact form orders by an expression the index cannot serve: a scan of the rows
        # in scope, with a zero vector's NaN distance read as cosine 0.
        order = f"coalesce(nullif({distance}, 'NaN'), 1)" if exact else distance
        return (
            "SELECT session_id, ts, role, text, platform, user_id, distance, message_id FROM ("
            f" SELECT session_id, ts, role, text, platform, user_id, {distance} AS distance,"
            " message_id,"
            f" {order} AS rank FROM {self._s}.vectors WHERE {filters}"
            f" ORDER BY {order} LIMIT %(k)s) AS found ORDER BY rank, ts DESC, message_id"
        )

    async def _search(
        self,
        conn: AsyncConnection[Any],
        dim: int,
        filters: str,
        params: dict[str, Any],
        *,
        exact: bool,
    ) -> list[tuple[Any, ...]]:
        text = self.search_sql(dim, filters, exact=exact)
        if exact:
            cursor = await conn.execute(text, params)
            exact_rows: list[tuple[Any, ...]] = await cursor.fetchall()
            return exact_rows
        ef = min(1000, max(self.config.ef_search, params["k"]))
        # One flush for the whole transaction: the settings are local to it.
        async with conn.pipeline(), conn.transaction():
            await conn.execute(
                "SELECT set_config('hnsw.iterative_scan', 'relaxed_order', true),"
                " set_config('hnsw.ef_search', %s, true),"
                " set_config('hnsw.max_scan_tuples', %s, true)",
                (str(ef), str(self.config.max_scan_tuples)),
            )
            cursor = await conn.execute(text, params)
        rows: list[tuple[Any, ...]] = await cursor.fetchall()
        return rows

    @staticmethod
    def _hit(model_id: str, row: tuple[Any, ...], *, score: float | None = None) -> VectorHit:
        session_id, ts, role, text, platform, user_id, distance, message_id = row
        if score is None:
            score = 0.0 if distance is None or math.isnan(distance) else 1.0 - float(distance)
        return VectorHit(
            message_id=unescape(message_id),
            session_id=unescape(session_id),
            timestamp=int(ts),
            role=unescape(role),
            model_id=model_id,
            text=unescape(text),
            platform=None if platform is None else unescape(platform),
            user_id=None if user_id is None else unescape(user_id),
            score=score,
        )

    async def lexical_search(self, query: str, k: int, where: ScopeFilter) -> list[VectorHit]:
        """The ``k`` records in scope whose text best matches ``query``'s terms.

        The terms are the ones the records were indexed under (``_lexical.py``); the scope is
        in the same ``WHERE`` as the term match, so ``k`` hits come back whenever ``k`` in
        scope share a term with the query. Scores are positive, higher is better, and only
        comparable within one answer.
        """
        if not isinstance(query, str):
            raise TypeError(f"query must be a str, got {type(query).__name__}")
        check_text(query, "query")
        k = check_k(k)
        where = check_where(where)
        terms = query_terms(query)
        if k == 0 or where.is_empty or not terms:
            return []
        params: dict[str, Any] = {"k": k}
        for i, (term, weight) in enumerate(terms):
            params[f"t{i}"] = tsquery_literal([term])
            params[f"w{i}"] = weight
        seeds = seed_terms(terms)
        async with self.pool.connection() as conn:
            condition = _scope_sql(conn, where, params)
            rare, common = await self._split_common(conn, seeds, condition, params)
            rows: list[tuple[Any, ...]] = []
            if rare:
                params["seeds"] = tsquery_literal(rare)
                # Planned for its values every time (no generic plan): which index serves
                # depends on how common the terms are and how wide the scope is.
                cursor = await conn.execute(
                    self.lexical_sql(condition, len(terms)), params, prepare=False
                )
                rows = await cursor.fetchall()
            more: list[tuple[Any, ...]] = []
            if len(rows) < k and common:
                params["seeds"] = tsquery_literal(common)
                params["k"] = k - len(rows)
                params["window"] = max(self.window, k)
                params["skip"] = [row[7] for row in rows]
                sql_text = self.lexical_sql(condition, len(terms), window=True)
                cursor = await conn.execute(sql_text, params, prepare=False)
                more = await cursor.fetchall()
        hits = [self._hit(where.model_id, row, score=float(row[6])) for row in rows]
        if not hits:
            return [self._hit(where.model_id, row, score=float(row[6])) for row in more]
        # The fill-up ranks below every hit of the rarer terms, in its own order, still > 0.
        floor = hits[-1].score
        return hits + [
            self._hit(where.model_id, row, score=floor * (len(more) - i) / (len(more) + 1))
            for i, row in enumerate(more)
        ]

    async def _split_common(
        self, conn: AsyncConnection[Any], seeds: list[str], filters: str, scope: dict[str, Any]
    ) -> tuple[list[str], list[str]]:
        """The seed terms held by at most ``common_rows`` rows in scope, and the others
        (docs/backends/postgres.md, "Lexical search": scoring every row that holds a word of
        every message made a query linear in the scope). Counted exactly in the scope
        (``filters``, its values in ``scope``), each up to ``common_rows + 1``."""
        params = dict(scope)
        params.update({f"c{i}": tsquery_literal([term]) for i, term in enumerate(seeds)})
        limit = self.common_rows
        sql_text = document_counts_sql(f"{self._s}.vectors", filters, len(seeds), limit)
        cursor = await conn.execute(sql_text, params, prepare=False)
        counts = await cursor.fetchone()
        assert counts is not None
        rare = [t for t, n in zip(seeds, counts, strict=True) if 0 < int(n) <= limit]
        common = [t for t, n in zip(seeds, counts, strict=True) if int(n) > limit]
        return rare, common

    async def lexical_check(self, session_id: str | None = None) -> LexicalDrift:
        """Rows whose ``lex`` is missing or stale (``LexicalIndexCheck``, ``_lexical_check.py``)."""
        sid = None if session_id is None else check_session_id(session_id)
        async with self.pool.connection() as conn:
            return await lexical_check(conn, f"{self._s}.vectors", sid)

    async def lexical_repair(self, session_id: str | None = None) -> LexicalDrift:
        """Write the terms of their text back into the rows ``lexical_check`` names."""
        sid = None if session_id is None else check_session_id(session_id)
        async with self.pool.connection() as conn:
            return await lexical_repair(conn, f"{self._s}.vectors", sid)

    def lexical_sql(self, filters: str, terms: int, *, window: bool = False) -> str:
        """The lexical statement for a query of ``terms`` terms (public for the EXPLAIN tests)."""
        return lexical_sql(f"{self._s}.vectors", filters, terms, window=window)

    async def stats(self) -> VectorStoreStats:
        async with self.pool.connection() as conn:
            cursor = await conn.execute(
                f"SELECT v.model_id, count(*), m.dim FROM {self._s}.vectors v"
                f" JOIN {self._s}.models m USING (model_id) GROUP BY v.model_id, m.dim"
            )
            rows = await cursor.fetchall()
        models = [
            ModelStats(model_id=unescape(mid), count=int(count), dim=int(dim))
            for mid, count, dim in rows
        ]
        return VectorStoreStats(models=tuple(sorted(models, key=lambda m: m.model_id)))


__all__ = ["PgvectorStore"]
