"""Aalis lexical embedder plugin (character n-gram hashing)."""

from aalis_plugin_embedding_hash.plugin import PRIORITY, EmbeddingHash, HashConfig

__all__ = ["PRIORITY", "EmbeddingHash", "HashConfig"]
