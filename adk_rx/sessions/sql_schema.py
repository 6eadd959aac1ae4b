"""The tables of the SQL session store (SQLAlchemy Core), and their one-time setup.

::

    adk_sessions        (app_name, user_id, id) -> state JSON, create/update time, next_seq
    adk_events          (app_name, user_id, session_id, seq) -> id, invocation_id, author,
                        timestamp, body (the event's JSON; partial events are never stored)
    adk_user_state      (app_name, user_id, key) -> value JSON      one row per ``user:`` key
    adk_app_state       (app_name, key) -> value JSON               one row per ``app:`` key
    adk_schema_version  (component) -> version                      so later releases can migrate

Shared state is kept one row per key so that an append upserts or deletes only the keys its
delta names: two sessions of one user writing different ``user:`` keys never overwrite each
other, and no append rewrites a whole state blob it did not lock.

The primary key of ``adk_events`` is the (app, user, session, seq) index that every read uses:
``ORDER BY seq DESC LIMIT n`` for the newest events, a range scan for a whole history.
"""

from __future__ import annotations

import sqlalchemy as sa

from adk_rx.errors import StoreError

__all__ = [
    "APP_STATE",
    "EVENTS",
    "METADATA",
    "SCHEMA_VERSION",
    "SCHEMA_VERSIONS",
    "SESSIONS",
    "USER_STATE",
    "check_version",
]

SCHEMA_VERSION = 1
"""The version of the session tables this release reads and writes."""

METADATA = sa.MetaData()

_ID = sa.String(256)

SESSIONS = sa.Table(
    "adk_sessions",
    METADATA,
    sa.Column("app_name", _ID, primary_key=True),
    sa.Column("user_id", _ID, primary_key=True),
    sa.Column("id", _ID, primary_key=True),
    sa.Column("state", sa.Text, nullable=False),
    sa.Column("create_time", sa.Double, nullable=False),
    sa.Column("update_time", sa.Double, nullable=False),
    sa.Column("next_seq", sa.BigInteger, nullable=False),
)

EVENTS = sa.Table(
    "adk_events",
    METADATA,
    sa.Column("app_name", _ID, primary_key=True),
    sa.Column("user_id", _ID, primary_key=True),
    sa.Column("session_id", _ID, primary_key=True),
    sa.Column("seq", sa.BigInteger, primary_key=True, autoincrement=False),
    sa.Column("id", sa.String(64), nullable=False),
    sa.Column("invocation_id", sa.String(256), nullable=False),
    sa.Column("author", sa.String(256), nullable=False),
    sa.Column("timestamp", sa.Double, nullable=False),
    sa.Column("body", sa.Text, nullable=False),
)

USER_STATE = sa.Table(
    "adk_user_state",
    METADATA,
    sa.Column("app_name", _ID, primary_key=True),
    sa.Column("user_id", _ID, primary_key=True),
    sa.Column("key", sa.String(512), primary_key=True),
    sa.Column("value", sa.Text, nullable=False),
)

APP_STATE = sa.Table(
    "adk_app_state",
    METADATA,
    sa.Column("app_name", _ID, primary_key=True),
    sa.Column("key", sa.String(512), primary_key=True),
    sa.Column("value", sa.Text, nullable=False),
)

SCHEMA_VERSIONS = sa.Table(
    "adk_schema_version",
    METADATA,
    sa.Column("component", sa.String(64), primary_key=True),
    sa.Column("version", sa.Integer, nullable=False),
)


def check_version(conn: sa.Connection, component: str, version: int) -> None:
    """Records ``component``'s schema version, or checks the one the database holds.

    Call inside the transaction that created the tables, so the version row and the tables
    appear together.

    Raises:
        StoreError: the database was written by a newer release (a different schema).
    """
    found = conn.execute(
        sa.select(SCHEMA_VERSIONS.c.version).where(SCHEMA_VERSIONS.c.component == component)
    ).scalar_one_or_none()
    if found is None:
        conn.execute(sa.insert(SCHEMA_VERSIONS).values(component=component, version=version))
    elif found > version:
        raise StoreError(
            f"the database's {component} schema is version {found}; this adk_rx supports up "
            f"to {version}: upgrade adk_rx"
        )
    # found < version: no older schema exists yet; a migration goes here when one does.
