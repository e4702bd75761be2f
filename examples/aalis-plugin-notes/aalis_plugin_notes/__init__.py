"""An example third-party Aalis plugin: per-session notes kept in the memory metadata store.

It shows every way a plugin takes part (docs/plugins/writing.md walks through it):
consuming the ``memory`` capability through a handle, a validated ``Config``, CLI commands
(``register_commands``), a clear type and ``memory_clear`` middleware, and an event listener.
"""

from aalis_plugin_notes.notes import NAMESPACE, Note, Notes
from aalis_plugin_notes.plugin import NotesConfig, NotesPlugin

__all__ = ["NAMESPACE", "Note", "Notes", "NotesConfig", "NotesPlugin"]
