"""Aalis plugin host: plugins, capabilities and handles, hooks, events, config, CLI.

Names are re-exported lazily (module ``__getattr__``) so that ``import aalis_core`` stays
cheap: a CLI start-up or a plugin module that only needs ``hookimpl`` does not pay for
structlog, attrs, click and importlib_metadata.
"""

# Every public name is re-exported lazily: importing the package costs nothing until a
# name is used, and no implementation module imports another through this one at load.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from aalis_core._capability import (
        Capability as Capability,
    )
    from aalis_core._capability import (
        CapabilityAbsent as CapabilityAbsent,
    )
    from aalis_core._cli import (
        CLI_CONSUMER as CLI_CONSUMER,
    )
    from aalis_core._cli import (
        AalisGroup as AalisGroup,
    )
    from aalis_core._cli import (
        cli as cli,
    )
    from aalis_core._cli import (
        config_path as config_path,
    )
    from aalis_core._cli import (
        fail as fail,
    )
    from aalis_core._cli import (
        format_error as format_error,
    )
    from aalis_core._cli import (
        load_plugin_commands as load_plugin_commands,
    )
    from aalis_core._cli import (
        main as main,
    )
    from aalis_core._cli import (
        make_host as make_host,
    )
    from aalis_core._cli import (
        open_host as open_host,
    )
    from aalis_core._cli import (
        render_template as render_template,
    )
    from aalis_core._cli import (
        run_async as run_async,
    )
    from aalis_core._config import (
        BUILTIN_CONSUMERS as BUILTIN_CONSUMERS,
    )
    from aalis_core._config import (
        DEFAULT_DATA_DIR as DEFAULT_DATA_DIR,
    )
    from aalis_core._config import (
        ConfigError as ConfigError,
    )
    from aalis_core._config import (
        ConfigProblem as ConfigProblem,
    )
    from aalis_core._config import (
        EnvStr as EnvStr,
    )
    from aalis_core._config import (
        HostConfig as HostConfig,
    )
    from aalis_core._config import (
        HostSettings as HostSettings,
    )
    from aalis_core._config import (
        LogLevel as LogLevel,
    )
    from aalis_core._config import (
        PluginConfigs as PluginConfigs,
    )
    from aalis_core._config import (
        PluginSchema as PluginSchema,
    )
    from aalis_core._config import (
        default_config as default_config,
    )
    from aalis_core._config import (
        load_config as load_config,
    )
    from aalis_core._config import (
        parse_config as parse_config,
    )
    from aalis_core._config import (
        positive_int as positive_int,
    )
    from aalis_core._config import (
        positive_seconds as positive_seconds,
    )
    from aalis_core._config import (
        structure as structure,
    )
    from aalis_core._config import (
        validate_plugins as validate_plugins,
    )
    from aalis_core._containment import (
        CANCEL_GRACE as CANCEL_GRACE,
    )
    from aalis_core._containment import (
        Budget as Budget,
    )
    from aalis_core._containment import (
        PluginAborted as PluginAborted,
    )
    from aalis_core._containment import (
        PluginTimeout as PluginTimeout,
    )
    from aalis_core._containment import (
        call_plugin as call_plugin,
    )
    from aalis_core._containment import (
        describe as describe,
    )
    from aalis_core._containment import (
        format_seconds as format_seconds,
    )
    from aalis_core._context import (
        Caps as Caps,
    )
    from aalis_core._context import (
        PluginContext as PluginContext,
    )
    from aalis_core._discovery import (
        HOOKSPECS_GROUP as HOOKSPECS_GROUP,
    )
    from aalis_core._discovery import (
        LOAD_PLUGINS_ENV as LOAD_PLUGINS_ENV,
    )
    from aalis_core._discovery import (
        PLUGINS_GROUP as PLUGINS_GROUP,
    )
    from aalis_core._discovery import (
        DiscoveredHookspecs as DiscoveredHookspecs,
    )
    from aalis_core._discovery import (
        DiscoveredPlugin as DiscoveredPlugin,
    )
    from aalis_core._discovery import (
        DiscoveryState as DiscoveryState,
    )
    from aalis_core._discovery import (
        check_plugin_class as check_plugin_class,
    )
    from aalis_core._discovery import (
        discover_hookspecs as discover_hookspecs,
    )
    from aalis_core._discovery import (
        discover_plugins as discover_plugins,
    )
    from aalis_core._discovery import (
        error_text as error_text,
    )
    from aalis_core._entry_scan import (
        FoundDist as FoundDist,
    )
    from aalis_core._entry_scan import (
        FoundEntryPoint as FoundEntryPoint,
    )
    from aalis_core._entry_scan import (
        scan as scan,
    )
    from aalis_core._errors import (
        AalisError as AalisError,
    )
    from aalis_core._gc_pause import (
        gc_paused as gc_paused,
    )
    from aalis_core._handles import (
        CapabilityRegistry as CapabilityRegistry,
    )
    from aalis_core._handles import (
        DurableDeclarer as DurableDeclarer,
    )
    from aalis_core._handles import (
        Handle as Handle,
    )
    from aalis_core._handles import (
        ProviderProxy as ProviderProxy,
    )
    from aalis_core._handles import (
        ProviderRecord as ProviderRecord,
    )
    from aalis_core._handles import (
        unwrap as unwrap,
    )
    from aalis_core._hook_runner import (
        CallNextNotAwaited as CallNextNotAwaited,
    )
    from aalis_core._hook_runner import (
        Deliveries as Deliveries,
    )
    from aalis_core._hook_runner import (
        HookDoor as HookDoor,
    )
    from aalis_core._hook_runner import (
        HookRunner as HookRunner,
    )
    from aalis_core._hook_runner import (
        Impls as Impls,
    )
    from aalis_core._hook_runner import (
        deliver as deliver,
    )
    from aalis_core._hook_runner import (
        run_onion as run_onion,
    )
    from aalis_core._hookspecs import (
        register_commands as register_commands,
    )
    from aalis_core._host import (
        Host as Host,
    )
    from aalis_core._host import (
        PluginInfo as PluginInfo,
    )
    from aalis_core._host import (
        PluginState as PluginState,
    )
    from aalis_core._host_services import (
        HostServices as HostServices,
    )
    from aalis_core._host_services import (
        Provide as Provide,
    )
    from aalis_core._loading import (
        PluginEntry as PluginEntry,
    )
    from aalis_core._loading import (
        apply_config as apply_config,
    )
    from aalis_core._loading import (
        check_declarations as check_declarations,
    )
    from aalis_core._loading import (
        check_instances as check_instances,
    )
    from aalis_core._loading import (
        declaration_problem as declaration_problem,
    )
    from aalis_core._loading import (
        discovered_entries as discovered_entries,
    )
    from aalis_core._loading import (
        hook_problem as hook_problem,
    )
    from aalis_core._loading import (
        instance_entries as instance_entries,
    )
    from aalis_core._loading import (
        load_hookspecs as load_hookspecs,
    )
    from aalis_core._logging import (
        DEFAULT_LEVEL as DEFAULT_LEVEL,
    )
    from aalis_core._logging import (
        LEVELS as LEVELS,
    )
    from aalis_core._logging import (
        LogFormat as LogFormat,
    )
    from aalis_core._logging import (
        configure_logging as configure_logging,
    )
    from aalis_core._logging import (
        default_level as default_level,
    )
    from aalis_core._logging import (
        get_logger as get_logger,
    )
    from aalis_core._logging import (
        is_configured as is_configured,
    )
    from aalis_core._logging import (
        redact as redact,
    )
    from aalis_core._logging import (
        redact_processor as redact_processor,
    )
    from aalis_core._logging import (
        redact_value as redact_value,
    )
    from aalis_core._markers import (
        PROJECT_NAME as PROJECT_NAME,
    )
    from aalis_core._markers import (
        hookimpl as hookimpl,
    )
    from aalis_core._markers import (
        hookspec as hookspec,
    )
    from aalis_core._plugin import (
        Plugin as Plugin,
    )
    from aalis_core._plugin import (
        PluginDisabled as PluginDisabled,
    )
    from aalis_core._plugin_info import (
        plugin_infos as plugin_infos,
    )
    from aalis_core._redaction import (
        MASK as MASK,
    )
    from aalis_core._redaction import (
        SAFE_URI_OPTIONS as SAFE_URI_OPTIONS,
    )
    from aalis_core._redaction import (
        UriRedactor as UriRedactor,
    )
    from aalis_core._redaction import (
        is_secret_key as is_secret_key,
    )
    from aalis_core._redaction import (
        redact_uri as redact_uri,
    )
    from aalis_core._redaction import (
        uri_secrets as uri_secrets,
    )

#: Where each public name lives: its module is imported the first time one is used.
_MODULES: dict[str, str] = {
    "aalis_core._capability": "Capability CapabilityAbsent",
    "aalis_core._cli": (
        "AalisGroup CLI_CONSUMER cli config_path fail format_error "
        "load_plugin_commands main make_host open_host render_template "
        "run_async"
    ),
    "aalis_core._config": (
        "BUILTIN_CONSUMERS ConfigError ConfigProblem DEFAULT_DATA_DIR EnvStr "
        "HostConfig HostSettings LogLevel PluginConfigs PluginSchema "
        "default_config load_config parse_config positive_int positive_seconds "
        "structure validate_plugins"
    ),
    "aalis_core._containment": (
        "Budget CANCEL_GRACE PluginAborted PluginTimeout call_plugin describe format_seconds"
    ),
    "aalis_core._context": "Caps PluginContext",
    "aalis_core._discovery": (
        "DiscoveredHookspecs DiscoveredPlugin DiscoveryState HOOKSPECS_GROUP "
        "LOAD_PLUGINS_ENV PLUGINS_GROUP check_plugin_class discover_hookspecs "
        "discover_plugins error_text"
    ),
    "aalis_core._entry_scan": "FoundDist FoundEntryPoint scan",
    "aalis_core._errors": "AalisError",
    "aalis_core._gc_pause": "gc_paused",
    "aalis_core._handles": (
        "CapabilityRegistry DurableDeclarer Handle ProviderProxy ProviderRecord unwrap"
    ),
    "aalis_core._hook_runner": (
        "CallNextNotAwaited Deliveries HookDoor HookRunner Impls deliver run_onion"
    ),
    "aalis_core._hookspecs": "register_commands",
    "aalis_core._host": "Host PluginInfo PluginState",
    "aalis_core._host_services": "HostServices Provide",
    "aalis_core._loading": (
        "PluginEntry apply_config check_declarations check_instances "
        "declaration_problem discovered_entries hook_problem instance_entries "
        "load_hookspecs"
    ),
    "aalis_core._logging": (
        "DEFAULT_LEVEL LEVELS LogFormat configure_logging default_level "
        "get_logger is_configured redact redact_processor redact_value"
    ),
    "aalis_core._markers": "PROJECT_NAME hookimpl hookspec",
    "aalis_core._plugin": "Plugin PluginDisabled",
    "aalis_core._plugin_info": "plugin_infos",
    "aalis_core._redaction": "MASK SAFE_URI_OPTIONS UriRedactor is_secret_key redact_uri uri_secrets",
}
_EXPORTS = {name: module for module, names in _MODULES.items() for name in names.split()}

__all__ = [
    "BUILTIN_CONSUMERS",
    "CANCEL_GRACE",
    "CLI_CONSUMER",
    "DEFAULT_DATA_DIR",
    "DEFAULT_LEVEL",
    "HOOKSPECS_GROUP",
    "LEVELS",
    "LOAD_PLUGINS_ENV",
    "MASK",
    "PLUGINS_GROUP",
    "PROJECT_NAME",
    "SAFE_URI_OPTIONS",
    "AalisError",
    "AalisGroup",
    "Budget",
    "CallNextNotAwaited",
    "Capability",
    "CapabilityAbsent",
    "CapabilityRegistry",
    "Caps",
    "ConfigError",
    "ConfigProblem",
    "Deliveries",
    "DiscoveredHookspecs",
    "DiscoveredPlugin",
    "DiscoveryState",
    "DurableDeclarer",
    "EnvStr",
    "FoundDist",
    "FoundEntryPoint",
    "Handle",
    "HookDoor",
    "HookRunner",
    "Host",
    "HostConfig",
    "HostServices",
    "HostSettings",
    "Impls",
    "LogFormat",
    "LogLevel",
    "Plugin",
    "PluginAborted",
    "PluginConfigs",
    "PluginContext",
    "PluginDisabled",
    "PluginEntry",
    "PluginInfo",
    "PluginSchema",
    "PluginState",
    "PluginTimeout",
    "Provide",
    "ProviderProxy",
    "ProviderRecord",
    "UriRedactor",
    "apply_config",
    "call_plugin",
    "check_declarations",
    "check_instances",
    "check_plugin_class",
    "cli",
    "config_path",
    "configure_logging",
    "declaration_problem",
    "default_config",
    "default_level",
    "deliver",
    "describe",
    "discover_hookspecs",
    "discover_plugins",
    "discovered_entries",
    "error_text",
    "fail",
    "format_error",
    "format_seconds",
    "gc_paused",
    "get_logger",
    "hook_problem",
    "hookimpl",
    "hookspec",
    "instance_entries",
    "is_configured",
    "is_secret_key",
    "load_config",
    "load_hookspecs",
    "load_plugin_commands",
    "main",
    "make_host",
    "open_host",
    "parse_config",
    "plugin_infos",
    "positive_int",
    "positive_seconds",
    "redact",
    "redact_processor",
    "redact_uri",
    "redact_value",
    "register_commands",
    "render_template",
    "run_async",
    "run_onion",
    "scan",
    "structure",
    "unwrap",
    "uri_secrets",
    "validate_plugins",
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
