"""Appending an event to a SQL session store: one short transaction.

::

    lock the session row and claim next_seq
        SQLite:     BEGIN IMMEDIATE (the database's write lock)
        PostgreSQL: the UPDATE ... SET next_seq = next_seq + 1 RETURNING that takes the row
                    lock, or SELECT ... FOR UPDATE first when the delta has session keys
                    whose new value is computed from the stored state
    insert the event at the claimed number (never a number the caller supplies)
    upsert / delete shared keys (one row per user: / app: key; temp: keys are dropped)

The shared keys are written in a fixed order, so two appends can never deadlock.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from adk_rx.errors import SessionNotFoundError
from adk_rx.events import Event
from adk_rx.sessions import sql_statements as sql
from adk_rx.sessions.codec import SharedDelta, decode_state, encode_state
from adk_rx.sessions.sql_engine import Tx
from adk_rx.state import apply_delta

__all__ = ["append_row", "write_shared"]


def append_row(
    conn: Tx,
    key: dict[str, str],
    event: Event,
    body: str,
    session_delta: Mapping[str, Any],
) -> int:
    """Locks the session row, advances next_seq, inserts the event at the claimed number."""
    if session_delta:
        row = conn.execute(sql.LOCK_SESSION_WITH_STATE, key).fetchone()
        seq = None if row is None else int(row[0])
    else:
        claimed = conn.execute(sql.CLAIM_SEQ, {**key, "new_time": event.timestamp}).fetchone()
        row, seq = None, None if claimed is None else int(claimed[0]) - 1
    if seq is None:
        raise SessionNotFoundError(
            f"cannot append to session {key['sid']!r} of app {key['app']!r}, "
            f"user {key['user']!r}: it does not exist (deleted?)"
        )
    if row is not None:
        state = decode_state(row[1])
        apply_delta(state, session_delta)
        changes = {
            "new_seq": seq + 1,
            "new_time": event.timestamp,
            "new_state": encode_state(state),
        }
        conn.execute(sql.ADVANCE_SESSION_WITH_STATE, {**key, **changes})
    conn.execute(
        sql.INSERT_EVENT,
        {
            "app_name": key["app"],
            "user_id": key["user"],
            "session_id": key["sid"],
            "seq": seq,
            "id": _column(event.id),
            "invocation_id": _column(event.invocation_id),
            "author": _column(event.author),
            "timestamp": event.timestamp,
            "body": body,
        },
    )
    return seq


def _column(text: str) -> str:
    """A copy of an event field for its own column: PostgreSQL refuses NUL in text, so it
    becomes U+FFFD there; the body, which events are read from, keeps the field exactly."""
    return text.replace("\x00", "\ufffd") if "\x00" in text else text


def write_shared(conn: Tx, upserts: sql.Upserts, key: dict[str, str], shared: SharedDelta) -> None:
    """Upserts and deletes the ``user:`` and ``app:`` keys of an event's delta."""
    # Keys in sorted order, user rows before app rows: every writer takes row locks in
    # the same order, so two appends can never deadlock on PostgreSQL.
    for name, value in shared.user:
        if value is None:
            conn.execute(sql.DELETE_USER_KEY, {**key, "key": name})
        else:
            row = {"app_name": key["app"], "user_id": key["user"], "key": name}
            conn.execute(upserts.set_user_key, {**row, "value": value})
    for name, value in shared.app:
        if value is None:
            conn.execute(sql.DELETE_APP_KEY, {"app": key["app"], "key": name})
        else:
            row = {"app_name": key["app"], "key": name, "value": value}
            conn.execute(upserts.set_app_key, row)
