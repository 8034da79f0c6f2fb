"""The one exception the store raises to its callers."""

from __future__ import annotations


class StoreError(Exception):
    """The sessions database could not be used, or a session was not found.

    The message names the file or the session and says what to do.
    """


class SessionNotFound(StoreError):
    """No session has this id (or id prefix), or the prefix is ambiguous."""
