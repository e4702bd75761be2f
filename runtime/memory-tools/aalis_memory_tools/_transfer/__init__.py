"""Moving memory between stores from Python: export, import and migrate (no CLI needed).

The engine behind ``aalis export``, ``aalis import`` and ``aalis migrate``
(docs/reference/transfer.md); the commands in ``aalis_memory_tools._cli_transfer`` only parse
options, call these and print. The file format is ``aalis_memory_tools._export_format``.

- ``export_sessions(memory, out, provider=..., session_id=...)`` writes an export to any text
  output, each session as it is read (``atomic_output(path)`` gives a file that appears only
  when the export completed);
- ``import_file(memory, path, replace=..., host=...)`` checks a whole export file, then
  writes it, reading it one session at a time;
- ``migrate_between(source, source_name, target, target_name, ...)`` copies one store into
  another and verifies the copy.

Import and migrate are safe to re-run (``transfer.plan``): what the target already holds is
skipped, an interrupted session completed, and anything else refused before a write unless
``replace``. Errors meant for a user are ``TransferError``: one line, nothing written.

Modules: ``stores`` (which stores, and what they must implement), ``plan`` (compare, then
write), ``exporting``, ``importing``, ``migrating``, ``reports`` (what each returns).
"""

from aalis_memory_tools._export_format import TransferError
from aalis_memory_tools._transfer.exporting import (
    TextOutput,
    atomic_output,
    export_lines,
    export_sessions,
    read_metadata,
    write_atomically,
)
from aalis_memory_tools._transfer.importing import (
    check_export_file,
    conversation_messages,
    import_file,
    import_into,
)
from aalis_memory_tools._transfer.migrating import ProgressFn, SizeLimit, migrate_between
from aalis_memory_tools._transfer.plan import METADATA_BATCH, Plan, plan_session
from aalis_memory_tools._transfer.reports import (
    ExportReport,
    MigrateReport,
    OversizeMessage,
    WriteReport,
)
from aalis_memory_tools._transfer.stores import (
    export_source,
    import_target,
    left_out,
    left_out_text,
    memory_holders,
    migration_stores,
    refuse_volatile,
    require,
)

__all__ = [
    "METADATA_BATCH",
    "ExportReport",
    "MigrateReport",
    "OversizeMessage",
    "Plan",
    "ProgressFn",
    "SizeLimit",
    "TextOutput",
    "TransferError",
    "WriteReport",
    "atomic_output",
    "check_export_file",
    "conversation_messages",
    "export_lines",
    "export_sessions",
    "export_source",
    "import_file",
    "import_into",
    "import_target",
    "left_out",
    "left_out_text",
    "memory_holders",
    "migrate_between",
    "migration_stores",
    "plan_session",
    "read_metadata",
    "refuse_volatile",
    "require",
    "write_atomically",
]
