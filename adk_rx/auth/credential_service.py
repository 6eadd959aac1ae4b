"""Credential services: where a user's credentials are kept between turns and sessions.

A credential is filed under ``(app_name, user_id, credential_key)``: one user never reads
another's. The calls are blocking and quick (a dict, a short transaction); they are made
where blocking is allowed (a sync tool runs on the I/O scheduler). What is stored never
holds the OAuth2 client secret: the tool's own configuration supplies it again when a
token is refreshed.
"""

from __future__ import annotations

import threading
from abc import ABC, abstractmethod

from adk_rx.auth.credential import AuthCredential

__all__ = ["BaseCredentialService", "InMemoryCredentialService", "stored_form"]


def stored_form(credential: AuthCredential) -> AuthCredential:
    """The credential as a service keeps it: without the client secret."""
    if credential.oauth2 is None or credential.oauth2.client_secret is None:
        return credential
    return credential.model_copy(
        update={"oauth2": credential.oauth2.model_copy(update={"client_secret": None})}
    )


class BaseCredentialService(ABC):
    """Loads and saves a user's credentials (two blocking calls)."""

    @abstractmethod
    def load_credential(
        self, *, app_name: str, user_id: str, credential_key: str
    ) -> AuthCredential | None:
        """The credential filed under the key for this app and user, or None."""

    @abstractmethod
    def save_credential(
        self, *, app_name: str, user_id: str, credential_key: str, credential: AuthCredential
    ) -> None:
        """Files ``credential`` under the key for this app and user (replacing what was there)."""


class InMemoryCredentialService(BaseCredentialService):
    """Credentials in a dict of this process (lost when it ends)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._credentials: dict[tuple[str, str, str], AuthCredential] = {}

    def load_credential(
        self, *, app_name: str, user_id: str, credential_key: str
    ) -> AuthCredential | None:
        """The credential filed under the key for this app and user, or None."""
        with self._lock:
            found = self._credentials.get((app_name, user_id, credential_key))
        return None if found is None else found.model_copy(deep=True)

    def save_credential(
        self, *, app_name: str, user_id: str, credential_key: str, credential: AuthCredential
    ) -> None:
        """Files ``credential`` under the key for this app and user."""
        kept = stored_form(credential).model_copy(deep=True)
        with self._lock:
            self._credentials[(app_name, user_id, credential_key)] = kept
