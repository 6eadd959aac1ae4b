"""SqlCredentialService: credentials in SQLite or PostgreSQL, encrypted at rest.

One table::

    adk_credentials(app_name, user_id, credential_key)  primary key
                   ciphertext  Fernet token of the credential's JSON (AES-128-CBC + HMAC)
                   update_time

The key comes from the environment (``ADK_RX_CREDENTIAL_KEY``, a Fernet key:
``python -c "from cryptography.fernet import Fernet; print(Fernet.generate_key().decode())"``)
or the constructor; without one the service refuses to start. Several keys, comma separated,
rotate: the first encrypts, any decrypts. A row that no key opens reads as no credential (the
user signs in again) and is logged without its content.
"""

from __future__ import annotations

import logging
import os
import time
from typing import Any

import sqlalchemy as sa

from adk_rx.auth.credential import AuthCredential
from adk_rx.auth.credential_service import BaseCredentialService, stored_form
from adk_rx.errors import ConfigurationError
from adk_rx.sessions.sql_engine import Database

__all__ = ["KEY_ENV", "SqlCredentialService"]

KEY_ENV = "ADK_RX_CREDENTIAL_KEY"
_log = logging.getLogger(__name__)

_METADATA = sa.MetaData()
_TABLE = sa.Table(
    "adk_credentials",
    _METADATA,
    sa.Column("app_name", sa.String(256), primary_key=True),
    sa.Column("user_id", sa.String(256), primary_key=True),
    sa.Column("credential_key", sa.String(512), primary_key=True),
    sa.Column("ciphertext", sa.Text, nullable=False),
    sa.Column("update_time", sa.Double, nullable=False),
)
_WHERE = sa.and_(
    _TABLE.c.app_name == sa.bindparam("app"),
    _TABLE.c.user_id == sa.bindparam("user"),
    _TABLE.c.credential_key == sa.bindparam("key"),
)
_LOAD = sa.select(_TABLE.c.ciphertext).where(_WHERE)
_DELETE = sa.delete(_TABLE).where(_WHERE)
_INSERT = sa.insert(_TABLE).values(
    app_name=sa.bindparam("app"),
    user_id=sa.bindparam("user"),
    credential_key=sa.bindparam("key"),
    ciphertext=sa.bindparam("ciphertext"),
    update_time=sa.bindparam("now"),
)


def _fernet(keys: str | None) -> Any:
    try:
        from cryptography.fernet import Fernet, MultiFernet
    except ImportError as exc:  # pragma: no cover - depends on the install
        raise ConfigurationError(
            "SqlCredentialService needs cryptography: pip install 'adk_rx[auth]'"
        ) from exc
    text = keys if keys is not None else os.environ.get(KEY_ENV, "")
    parts = [part.strip() for part in text.split(",") if part.strip()]
    if not parts:
        raise ConfigurationError(
            f"SqlCredentialService needs an encryption key: set {KEY_ENV} to a Fernet key"
        )
    try:
        return MultiFernet([Fernet(part) for part in parts])
    except ValueError:
        raise ConfigurationError(f"{KEY_ENV} holds a key that is not a Fernet key") from None


class SqlCredentialService(BaseCredentialService):
    """Credentials in a SQL database, each encrypted with a key the database never sees.

    Args:
        url: ``"sqlite:///path.db"`` or ``"postgresql://user@host/db"`` (it may be the
            sessions' database).
        key: Fernet key(s), comma separated; default: the ``ADK_RX_CREDENTIAL_KEY``
            environment variable.
        **engine_options: passed to :func:`sqlalchemy.create_engine`.

    Raises:
        ConfigurationError: no key, or a key that is not a Fernet key.
    """

    def __init__(self, url: str, *, key: str | None = None, **engine_options: Any) -> None:
        self._fernet = _fernet(key)
        self._db = Database(url, **engine_options)

    def _ready(self) -> None:
        self._db.ensure("credential", lambda conn: _METADATA.create_all(conn))

    def load_credential(
        self, *, app_name: str, user_id: str, credential_key: str
    ) -> AuthCredential | None:
        """The credential filed under the key for this app and user, or None."""
        self._ready()
        params = {"app": app_name, "user": user_id, "key": credential_key}
        with self._db.read("loading a credential") as conn:
            row = conn.execute(_LOAD, params).fetchone()
        if row is None:
            return None
        try:
            plain = self._fernet.decrypt(row[0].encode("ascii"))
            return AuthCredential.model_validate_json(plain)
        except Exception:  # no key opens it, or it is not a credential: sign in again
            _log.warning("a stored credential could not be decrypted; it is ignored")
            return None

    def save_credential(
        self, *, app_name: str, user_id: str, credential_key: str, credential: AuthCredential
    ) -> None:
        """Encrypts ``credential`` and files it under the key for this app and user."""
        plain = stored_form(credential).model_dump_json(by_alias=True, exclude_none=True)
        ciphertext = self._fernet.encrypt(plain.encode("utf-8")).decode("ascii")
        params = {"app": app_name, "user": user_id, "key": credential_key}
        self._ready()
        with self._db.write("saving a credential") as conn:
            conn.execute(_DELETE, params)
            conn.execute(_INSERT, {**params, "ciphertext": ciphertext, "now": time.time()})

    def close(self) -> None:
        """Closes the pooled connections."""
        self._db.dispose()
