"""The one hash of the loader's keys (the parses, the schema's answers, the cache).

BLAKE2b from the interpreter's built-in module: hashlib's would load OpenSSL on every
start-up."""

from __future__ import annotations

try:
    from _blake2 import blake2b
except ImportError:  # pragma: no cover - interpreters without the private module
    from hashlib import blake2b

__all__ = ["blake2b"]
