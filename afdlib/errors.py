"""The one exception type for user mistakes (bad names, files, values).

The command line prints it as one line and exits non-zero; library callers can catch it.
"""


class AfdError(ValueError):
    """A user-facing error: unknown name, malformed file, impossible value."""
