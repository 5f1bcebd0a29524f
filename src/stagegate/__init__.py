"""stagegate: staged-migration feature flags for build, test and release pipelines."""

__version__ = "0.1.0"
