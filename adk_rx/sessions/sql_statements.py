"""The statements of the SQL session store, built once.

Building a SQLAlchemy statement per call costs about four times as much as running it on
SQLite, so every statement here is built at import (or once per dialect) with bound
parameters, and callers pass values at execution. Session keys bind as ``app``, ``user``
and ``sid``.
"""

from __future__ import annotations

import sqlalchemy as sa
from sqlalchemy.dialects import postgresql, sqlite

from adk_rx.sessions.sql_schema import APP_STATE, EVENTS, SESSIONS, USER_STATE

__all__ = ["Upserts", "events_query"]

_S, _E, _U, _A = SESSIONS, EVENTS, USER_STATE, APP_STATE

_APP, _USER, _SID = sa.bindparam("app"), sa.bindparam("user"), sa.bindparam("sid")
_SESSION_IS = (_S.c.app_name == _APP, _S.c.user_id == _USER, _S.c.id == _SID)
_EVENTS_OF = (_E.c.app_name == _APP, _E.c.user_id == _USER, _E.c.session_id == _SID)

# The common append (no session keys in the delta) claims its number with one statement: the
# UPDATE takes the row lock and RETURNING hands back the advanced counter.
CLAIM_SEQ = (
    sa.update(_S)
    .where(*_SESSION_IS)
    .values(next_seq=_S.c.next_seq + 1, update_time=sa.bindparam("new_time"))
    .returning(_S.c.next_seq)
)
LOCK_SESSION_WITH_STATE = sa.select(_S.c.next_seq, _S.c.state).where(*_SESSION_IS).with_for_update()
INSERT_EVENT = sa.insert(_E)
ADVANCE_SESSION_WITH_STATE = (
    sa.update(_S)
    .where(*_SESSION_IS)
    .values(
        next_seq=sa.bindparam("new_seq"),
        update_time=sa.bindparam("new_time"),
        state=sa.bindparam("new_state"),
    )
)

READ_SESSION = sa.select(_S.c.state, _S.c.update_time).where(*_SESSION_IS)
LIST_SESSIONS = (
    sa.select(_S.c.id, _S.c.state, _S.c.update_time)
    .where(_S.c.app_name == _APP, _S.c.user_id == _USER)
    .order_by(_S.c.create_time, _S.c.id)
)
# Both shared scopes in one round trip: (is_user, key, value) rows.
READ_SHARED_STATE = sa.union_all(
    sa.select(sa.literal(0).label("is_user"), _A.c.key, _A.c.value).where(_A.c.app_name == _APP),
    sa.select(sa.literal(1).label("is_user"), _U.c.key, _U.c.value).where(
        _U.c.app_name == _APP, _U.c.user_id == _USER
    ),
)
DELETE_EVENTS = sa.delete(_E).where(*_EVENTS_OF)
DELETE_SESSION = sa.delete(_S).where(*_SESSION_IS)
DELETE_USER_KEY = sa.delete(_U).where(
    _U.c.app_name == _APP, _U.c.user_id == _USER, _U.c.key == sa.bindparam("key")
)
DELETE_APP_KEY = sa.delete(_A).where(_A.c.app_name == _APP, _A.c.key == sa.bindparam("key"))

_ALL_EVENTS = sa.select(_E.c.seq, _E.c.id, _E.c.body).where(*_EVENTS_OF)
EVENTS_FROM = _ALL_EVENTS.where(_E.c.seq >= sa.bindparam("from_seq")).order_by(_E.c.seq)
_AFTER = sa.bindparam("after", type_=sa.Double)
_RECENT = (
    sa.select(_E.c.seq, _E.c.id, _E.c.timestamp, _E.c.body)
    .where(*_EVENTS_OF)
    .order_by(_E.c.seq.desc())
    .limit(sa.bindparam("count", type_=sa.Integer))
    .subquery()
)
_EVENTS_QUERIES: dict[tuple[bool, bool], sa.Executable] = {
    (False, False): _ALL_EVENTS.order_by(_E.c.seq),
    (False, True): _ALL_EVENTS.where(_E.c.timestamp >= _AFTER).order_by(_E.c.seq),
    (True, False): sa.select(_RECENT.c.seq, _RECENT.c.id, _RECENT.c.body).order_by(_RECENT.c.seq),
    (True, True): sa.select(_RECENT.c.seq, _RECENT.c.id, _RECENT.c.body)
    .where(_RECENT.c.timestamp >= _AFTER)
    .order_by(_RECENT.c.seq),
}


def events_query(*, limited: bool, after: bool) -> sa.Executable:
    """The (seq, id, body) query, oldest first: newest ``count`` rows and/or ``>= after``.

    The count is applied before the timestamp filter, as ``GetSessionConfig.apply`` does.
    """
    return _EVENTS_QUERIES[(limited, after)]


class Upserts:
    """The statements whose SQL differs by dialect (``INSERT ... ON CONFLICT``)."""

    def __init__(self, is_sqlite: bool) -> None:
        insert = sqlite.insert if is_sqlite else postgresql.insert
        # RETURNING, not rowcount: psycopg reports -1 rows for an ignored insert.
        self.create_session = insert(_S).on_conflict_do_nothing().returning(_S.c.id)
        user = insert(_U)
        self.set_user_key = user.on_conflict_do_update(
            index_elements=[_U.c.app_name, _U.c.user_id, _U.c.key],
            set_={"value": user.excluded.value},
        )
        app = insert(_A)
        self.set_app_key = app.on_conflict_do_update(
            index_elements=[_A.c.app_name, _A.c.key], set_={"value": app.excluded.value}
        )
