"""The memory tools: the memory commands of the ``aalis`` CLI and the transfer engine.

``aalis history``, ``sessions``, ``clear``, ``metadata``, ``export``, ``import``, ``migrate``,
``backup`` and ``forget`` (docs/host/cli.md), and the Python API behind export, import and
migrate (docs/host/export-import.md). A client of the memory contract like any other.
"""

# Every public name is re-exported lazily: importing the package costs nothing until a
# name is used, and no implementation module imports another through this one at load.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from aalis_memory_tools._cli_params import (
        SESSION as SESSION,
    )
    from aalis_memory_tools._cli_params import (
        SessionId as SessionId,
    )
    from aalis_memory_tools._cli_plugin import (
        CommandError as CommandError,
    )
    from aalis_memory_tools._cli_plugin import (
        MemoryCli as MemoryCli,
    )
    from aalis_memory_tools._export_format import (
        FORMAT as FORMAT,
    )
    from aalis_memory_tools._export_format import (
        FORMAT_VERSION as FORMAT_VERSION,
    )
    from aalis_memory_tools._export_format import (
        ExportFile as ExportFile,
    )
    from aalis_memory_tools._export_format import (
        ExportSummary as ExportSummary,
    )
    from aalis_memory_tools._export_format import (
        TransferError as TransferError,
    )
    from aalis_memory_tools._export_format import (
        dumps as dumps,
    )
    from aalis_memory_tools._export_format import (
        header as header,
    )
    from aalis_memory_tools._export_format import (
        iter_lines as iter_lines,
    )
    from aalis_memory_tools._export_format import (
        iter_sessions as iter_sessions,
    )
    from aalis_memory_tools._export_format import (
        message_line as message_line,
    )
    from aalis_memory_tools._export_format import (
        metadata_line as metadata_line,
    )
    from aalis_memory_tools._export_format import (
        parse_export as parse_export,
    )
    from aalis_memory_tools._export_format import (
        reopenable as reopenable,
    )
    from aalis_memory_tools._export_format import (
        scan_export as scan_export,
    )
    from aalis_memory_tools._export_format import (
        store_order as store_order,
    )
    from aalis_memory_tools._transfer import (
        METADATA_BATCH as METADATA_BATCH,
    )
    from aalis_memory_tools._transfer import (
        ExportReport as ExportReport,
    )
    from aalis_memory_tools._transfer import (
        MigrateReport as MigrateReport,
    )
    from aalis_memory_tools._transfer import (
        OversizeMessage as OversizeMessage,
    )
    from aalis_memory_tools._transfer import (
        Plan as Plan,
    )
    from aalis_memory_tools._transfer import (
        ProgressFn as ProgressFn,
    )
    from aalis_memory_tools._transfer import (
        SizeLimit as SizeLimit,
    )
    from aalis_memory_tools._transfer import (
        TextOutput as TextOutput,
    )
    from aalis_memory_tools._transfer import (
        WriteReport as WriteReport,
    )
    from aalis_memory_tools._transfer import (
        atomic_output as atomic_output,
    )
    from aalis_memory_tools._transfer import (
        check_export_file as check_export_file,
    )
    from aalis_memory_tools._transfer import (
        conversation_messages as conversation_messages,
    )
    from aalis_memory_tools._transfer import (
        export_lines as export_lines,
    )
    from aalis_memory_tools._transfer import (
        export_sessions as export_sessions,
    )
    from aalis_memory_tools._transfer import (
        export_source as export_source,
    )
    from aalis_memory_tools._transfer import (
        import_file as import_file,
    )
    from aalis_memory_tools._transfer import (
        import_into as import_into,
    )
    from aalis_memory_tools._transfer import (
        import_target as import_target,
    )
    from aalis_memory_tools._transfer import (
        left_out as left_out,
    )
    from aalis_memory_tools._transfer import (
        left_out_text as left_out_text,
    )
    from aalis_memory_tools._transfer import (
        memory_holders as memory_holders,
    )
    from aalis_memory_tools._transfer import (
        migrate_between as migrate_between,
    )
    from aalis_memory_tools._transfer import (
        migration_stores as migration_stores,
    )
    from aalis_memory_tools._transfer import (
        plan_session as plan_session,
    )
    from aalis_memory_tools._transfer import (
        read_metadata as read_metadata,
    )
    from aalis_memory_tools._transfer import (
        refuse_volatile as refuse_volatile,
    )
    from aalis_memory_tools._transfer import (
        require as require,
    )
    from aalis_memory_tools._transfer import (
        write_atomically as write_atomically,
    )

#: Where each public name lives: its module is imported the first time one is used.
_MODULES: dict[str, str] = {
    "aalis_memory_tools._cli_params": "SESSION SessionId",
    "aalis_memory_tools._cli_plugin": "CommandError MemoryCli",
    "aalis_memory_tools._export_format": (
        "ExportFile ExportSummary FORMAT FORMAT_VERSION TransferError dumps "
        "header iter_lines iter_sessions message_line metadata_line "
        "parse_export reopenable scan_export store_order"
    ),
    "aalis_memory_tools._transfer": (
        "ExportReport METADATA_BATCH MigrateReport OversizeMessage Plan "
        "ProgressFn SizeLimit TextOutput WriteReport atomic_output "
        "check_export_file conversation_messages export_lines export_sessions "
        "export_source import_file import_into import_target left_out "
        "left_out_text memory_holders migrate_between migration_stores "
        "plan_session read_metadata refuse_volatile require write_atomically"
    ),
}
_EXPORTS = {name: module for module, names in _MODULES.items() for name in names.split()}

__all__ = [
    "FORMAT",
    "FORMAT_VERSION",
    "METADATA_BATCH",
    "SESSION",
    "CommandError",
    "ExportFile",
    "ExportReport",
    "ExportSummary",
    "MemoryCli",
    "MigrateReport",
    "OversizeMessage",
    "Plan",
    "ProgressFn",
    "SessionId",
    "SizeLimit",
    "TextOutput",
    "TransferError",
    "WriteReport",
    "atomic_output",
    "check_export_file",
    "conversation_messages",
    "dumps",
    "export_lines",
    "export_sessions",
    "export_source",
    "header",
    "import_file",
    "import_into",
    "import_target",
    "iter_lines",
    "iter_sessions",
    "left_out",
    "left_out_text",
    "memory_holders",
    "message_line",
    "metadata_line",
    "migrate_between",
    "migration_stores",
    "parse_export",
    "plan_session",
    "read_metadata",
    "refuse_volatile",
    "reopenable",
    "require",
    "scan_export",
    "store_order",
    "write_atomically",
]

if not TYPE_CHECKING:

    def __getattr__(name: str) -> object:
        module = _EXPORTS.get(name)
        if module is None:
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
        import importlib

        value = getattr(importlib.import_module(module), name)
        globals()[name] = value  # later lookups skip this function
        return value

    def __dir__() -> list[str]:
        return sorted(set(globals()) | set(__all__))
