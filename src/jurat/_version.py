"""jurat's version: the one place it is written.

Recorded in every receipt (``jurat_version``), in evidence items (``tool_version``), in job
ids and in the judges' User-Agent. Internal packages import it from here, never from the
``jurat`` root, which imports the whole public API.
"""

__version__ = "0.1.0"
