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
        SessionId as SessionId,
    )
    from aalis_memory_tools._cli_plugin import (
        CommandError as CommandError,
        MemoryCli as MemoryCli,
    )
    from aalis_memory_tools._export_format import (
        FORMAT as FORMAT,
        FORMAT_VERSION as FORMAT_VERSION,
        ExportFile as ExportFile,
        ExportSummary as ExportSummary,
        TransferError as TransferError,
        dumps as dumps,
        header as header,
        iter_lines as iter_lines,
        iter_sessions as iter_sessions,
        message_line as message_line,
        metadata_line as metadata_line,
        parse_export as parse_export,
        reopenable as reopenable,
        scan_export as scan_export,
        store_order as store_order,
    )
    from aalis_memory_tools._transfer import (
        METADATA_BATCH as METADATA_BATCH,
        ExportReport as ExportReport,
        MigrateReport as MigrateReport,
        OversizeMessage as OversizeMessage,
        Plan as Plan,
        ProgressFn as ProgressFn,
        SizeLimit as SizeLimit,
        TextOutput as TextOutput,
        WriteReport as WriteReport,
        atomic_output as atomic_output,
        check_export_file as check_export_file,
        conversation_messages as conversation_messages,
        export_lines as export_lines,
        export_sessions as export_sessions,
        export_source as export_source,
        import_file as import_file,
        import_into as import_into,
        import_target as import_target,
        left_out as left_out,
        left_out_text as left_out_text,
        memory_holders as memory_holders,
        migrate_between as migrate_between,
        migration_stores as migration_stores,
        plan_session as plan_session,
        read_metadata as read_metadata,
        refuse_volatile as refuse_volatile,
        require as require,
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
