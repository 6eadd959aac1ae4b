"""Finished invocation logs kept for reattaching: per user, by memory, for the stated time.

A client that lost its stream reattaches to a finished invocation within
``Limits.finished_ttl`` seconds. The logs that make this cheap live in memory, so they are
bounded, and bounded so that no user's burst evicts another user's logs:

* at most ``Limits.kept_per_user`` logs per (app, user): a user's new log evicts that user's
  oldest;
* at most ``Limits.kept_bytes`` of event JSON in all: past it, the user holding the most
  loses its oldest log first;
* at most ``Limits.max_finished`` logs in all (the oldest go first);
* none older than ``Limits.finished_ttl``.

A log evicted before its time leaves a :class:`Tombstone`: its status and the cursors its
stored events had, so a reader is served the same frames, with the same ids, from the
session's stored events (see :mod:`adk_rx.cli.server.invocations.replay`). Tombstones are
small and live for the same ``finished_ttl``; after it, the invocation is gone (404).
"""

from __future__ import annotations

import time
from array import array
from collections import OrderedDict
from dataclasses import dataclass

from ..limits import Limits
from .log import InvocationLog

__all__ = ["KeptLogs", "Tombstone"]

_Key = tuple[str, str, str]
_User = tuple[str, str]
_TOMBSTONES_PER_LOG = 10  # tombstones kept, as a multiple of Limits.max_finished


@dataclass(frozen=True, slots=True)
class Tombstone:
    """What is left of an evicted log: enough to serve it again from the store.

    Attributes:
        key: (app, user, session) of the run.
        invocation_id: its id.
        status: how it ended.
        error: its error text, if it failed.
        created_at: when it started (seconds since the epoch).
        finished_at: when it ended.
        head: the cursor of its last entry.
        stored_seqs: the cursors of its stored (not partial) events in order, or None when
            they were simply 1, 2, ... (no partial events).
    """

    key: _Key
    invocation_id: str
    status: str
    error: str | None
    created_at: float
    finished_at: float
    head: int
    stored_seqs: array[int] | None

    @classmethod
    def of(cls, log: InvocationLog) -> Tombstone:
        seqs = log.stored_seqs
        plain = all(seq == index for index, seq in enumerate(seqs, 1))
        return cls(
            key=log.key,
            invocation_id=log.invocation_id or "",
            status=log.status,
            error=log.error,
            created_at=log.created_at,
            finished_at=log.finished_at or time.time(),
            head=log.head,
            stored_seqs=None if plain else array("q", seqs),
        )


class KeptLogs:
    """The finished logs and the tombstones of evicted ones. Not thread-safe: the registry
    calls it under its lock."""

    def __init__(self, limits: Limits) -> None:
        self.limits = limits
        self._logs: OrderedDict[str, InvocationLog] = OrderedDict()  # oldest finished first
        self._per_user: dict[_User, OrderedDict[str, InvocationLog]] = {}
        self._user_bytes: dict[_User, int] = {}
        self._bytes = 0
        self._tombstones: OrderedDict[str, Tombstone] = OrderedDict()

    @property
    def size_bytes(self) -> int:
        """The event JSON held by the kept logs."""
        return self._bytes

    def add(self, log: InvocationLog) -> None:
        """Keeps a finished log (one with an invocation id), then applies the bounds."""
        invocation_id = log.invocation_id
        if invocation_id is None or invocation_id in self._logs:
            return
        log.slim()  # a kept log holds its events' JSON only (Event objects cost far more)
        user = _user(log.key)
        self._logs[invocation_id] = log
        self._per_user.setdefault(user, OrderedDict())[invocation_id] = log
        size = log.size_bytes
        self._user_bytes[user] = self._user_bytes.get(user, 0) + size
        self._bytes += size
        mine = self._per_user[user]
        while len(mine) > self.limits.kept_per_user:
            self._evict(next(iter(mine)))
        self.evict()

    def get(self, invocation_id: str) -> InvocationLog | None:
        return self._logs.get(invocation_id)

    def tombstone(self, invocation_id: str) -> Tombstone | None:
        found = self._tombstones.get(invocation_id)
        if found is None or found.finished_at < time.time() - self.limits.finished_ttl:
            return None
        return found

    def of_session(self, key: _Key) -> list[InvocationLog]:
        return [log for log in self._per_user.get(_user(key), {}).values() if log.key == key]

    def forget_session(self, key: _Key) -> None:
        """Drops every log and tombstone of a session (it was deleted)."""
        for log in self.of_session(key):
            if log.invocation_id is not None:
                self._evict(log.invocation_id, tombstone=False)
        for invocation_id in [i for i, t in self._tombstones.items() if t.key == key]:
            del self._tombstones[invocation_id]

    def evict(self) -> None:
        """Applies the age, memory and count bounds."""
        limits = self.limits
        cutoff = time.time() - limits.finished_ttl
        while self._logs:
            invocation_id, log = next(iter(self._logs.items()))
            if log.finished_at is None or log.finished_at >= cutoff:
                break
            self._evict(invocation_id, tombstone=False)
        while self._bytes > limits.kept_bytes and self._user_bytes:
            heaviest = max(self._user_bytes, key=self._user_bytes.__getitem__)
            self._evict(next(iter(self._per_user[heaviest])))
        while len(self._logs) > limits.max_finished:
            self._evict(next(iter(self._logs)))
        while self._tombstones:
            oldest = next(iter(self._tombstones.values()))
            if oldest.finished_at >= cutoff and len(self._tombstones) <= (
                limits.max_finished * _TOMBSTONES_PER_LOG
            ):
                break
            del self._tombstones[oldest.invocation_id]

    def _evict(self, invocation_id: str, *, tombstone: bool = True) -> None:
        log = self._logs.pop(invocation_id)
        user = _user(log.key)
        mine = self._per_user[user]
        del mine[invocation_id]
        size = log.size_bytes
        self._bytes -= size
        self._user_bytes[user] -= size
        if not mine:
            del self._per_user[user]
            del self._user_bytes[user]
        if tombstone:
            self._tombstones[invocation_id] = Tombstone.of(log)


def _user(key: _Key) -> _User:
    return key[0], key[1]
