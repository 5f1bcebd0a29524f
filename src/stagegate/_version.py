"""The version of stagegate: one place, read by the package, the CLI and the cache key."""

__version__ = "0.1.0"
