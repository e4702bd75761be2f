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
        CapabilityAbsent as CapabilityAbsent,
    )
    from aalis_core._cli import (
        CLI_CONSUMER as CLI_CONSUMER,
        AalisGroup as AalisGroup,
        cli as cli,
        config_path as config_path,
        fail as fail,
        format_error as format_error,
        load_plugin_commands as load_plugin_commands,
        main as main,
        make_host as make_host,
        open_host as open_host,
        render_template as render_template,
        run_async as run_async,
    )
    from aalis_core._config import (
        BUILTIN_CONSUMERS as BUILTIN_CONSUMERS,
        DEFAULT_DATA_DIR as DEFAULT_DATA_DIR,
        ConfigError as ConfigError,
        ConfigProblem as ConfigProblem,
        EnvStr as EnvStr,
        HostConfig as HostConfig,
        HostSettings as HostSettings,
        LogLevel as LogLevel,
        PluginConfigs as PluginConfigs,
        PluginSchema as PluginSchema,
        default_config as default_config,
        load_config as load_config,
        parse_config as parse_config,
        positive_int as positive_int,
        positive_seconds as positive_seconds,
        structure as structure,
        validate_plugins as validate_plugins,
    )
    from aalis_core._containment import (
        CANCEL_GRACE as CANCEL_GRACE,
        Budget as Budget,
        PluginAborted as PluginAborted,
        PluginTimeout as PluginTimeout,
        call_plugin as call_plugin,
        describe as describe,
        format_seconds as format_seconds,
    )
    from aalis_core._context import (
        Caps as Caps,
        PluginContext as PluginContext,
    )
    from aalis_core._discovery import (
        HOOKSPECS_GROUP as HOOKSPECS_GROUP,
        LOAD_PLUGINS_ENV as LOAD_PLUGINS_ENV,
        PLUGINS_GROUP as PLUGINS_GROUP,
        DiscoveredHookspecs as DiscoveredHookspecs,
        DiscoveredPlugin as DiscoveredPlugin,
        DiscoveryState as DiscoveryState,
        check_plugin_class as check_plugin_class,
        discover_hookspecs as discover_hookspecs,
        discover_plugins as discover_plugins,
        error_text as error_text,
    )
    from aalis_core._entry_scan import (
        FoundDist as FoundDist,
        FoundEntryPoint as FoundEntryPoint,
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
        DurableDeclarer as DurableDeclarer,
        Handle as Handle,
        ProviderProxy as ProviderProxy,
        ProviderRecord as ProviderRecord,
        unwrap as unwrap,
    )
    from aalis_core._hook_runner import (
        CallNextNotAwaited as CallNextNotAwaited,
        Deliveries as Deliveries,
        HookDoor as HookDoor,
        HookRunner as HookRunner,
        Impls as Impls,
        deliver as deliver,
        run_onion as run_onion,
    )
    from aalis_core._hookspecs import (
        register_commands as register_commands,
    )
    from aalis_core._host import (
        Host as Host,
        PluginInfo as PluginInfo,
        PluginState as PluginState,
    )
    from aalis_core._host_services import (
        HostServices as HostServices,
        Provide as Provide,
    )
    from aalis_core._loading import (
        PluginEntry as PluginEntry,
        apply_config as apply_config,
        check_declarations as check_declarations,
        check_instances as check_instances,
        declaration_problem as declaration_problem,
        discovered_entries as discovered_entries,
        hook_problem as hook_problem,
        instance_entries as instance_entries,
        load_hookspecs as load_hookspecs,
    )
    from aalis_core._logging import (
        DEFAULT_LEVEL as DEFAULT_LEVEL,
        LEVELS as LEVELS,
        LogFormat as LogFormat,
        configure_logging as configure_logging,
        default_level as default_level,
        get_logger as get_logger,
        is_configured as is_configured,
        redact as redact,
        redact_processor as redact_processor,
        redact_value as redact_value,
    )
    from aalis_core._markers import (
        PROJECT_NAME as PROJECT_NAME,
        hookimpl as hookimpl,
        hookspec as hookspec,
    )
    from aalis_core._plugin import (
        Plugin as Plugin,
        PluginDisabled as PluginDisabled,
    )
    from aalis_core._plugin_info import (
        plugin_infos as plugin_infos,
    )
    from aalis_core._redaction import (
        MASK as MASK,
        SAFE_URI_OPTIONS as SAFE_URI_OPTIONS,
        UriRedactor as UriRedactor,
        is_secret_key as is_secret_key,
        redact_uri as redact_uri,
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
