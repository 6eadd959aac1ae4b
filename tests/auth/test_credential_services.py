"""Credential services: scoped to app and user, no client secret kept, SQL encrypted at rest."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path

import pytest
import sqlalchemy as sa
from cryptography.fernet import Fernet

from adk_rx.auth import (
    AuthCredential,
    AuthCredentialTypes,
    BaseCredentialService,
    InMemoryCredentialService,
    OAuth2Auth,
    SqlCredentialService,
)
from adk_rx.auth.sql_credential_service import KEY_ENV
from adk_rx.errors import ConfigurationError
from tests.sessions.postgres import postgres_url  # noqa: F401  (fixture)

TOKEN = "at-very-secret-token"
CLIENT_SECRET = "cs-very-secret"


def _credential(token: str = TOKEN) -> AuthCredential:
    return AuthCredential(
        auth_type=AuthCredentialTypes.OAUTH2,
        oauth2=OAuth2Auth(
            client_id="app", client_secret=CLIENT_SECRET, access_token=token, expires_at=123
        ),
    )


@pytest.fixture(params=["memory", "sqlite", "postgres"])
def service(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[BaseCredentialService]:
    key = Fernet.generate_key().decode()
    if request.param == "memory":
        yield InMemoryCredentialService()
    elif request.param == "sqlite":
        sql = SqlCredentialService(f"sqlite:///{tmp_path / 'c.db'}", key=key)
        yield sql
        sql.close()
    else:
        sql = SqlCredentialService(request.getfixturevalue("postgres_url"), key=key)
        yield sql
        sql.close()


def test_a_saved_credential_loads_back_without_the_client_secret(
    service: BaseCredentialService,
) -> None:
    scope = {"app_name": "a", "user_id": "u", "credential_key": "k"}
    assert service.load_credential(**scope) is None
    service.save_credential(**scope, credential=_credential())

    loaded = service.load_credential(**scope)

    assert loaded is not None and loaded.oauth2 is not None
    assert loaded.oauth2.access_token == TOKEN and loaded.oauth2.expires_at == 123
    assert loaded.oauth2.client_secret is None


def test_credentials_are_scoped_to_app_and_user_and_replaced_on_save(
    service: BaseCredentialService,
) -> None:
    service.save_credential(app_name="a", user_id="u", credential_key="k", credential=_credential())
    service.save_credential(
        app_name="a", user_id="u", credential_key="k", credential=_credential("at-2")
    )

    assert service.load_credential(app_name="a", user_id="other", credential_key="k") is None
    assert service.load_credential(app_name="b", user_id="u", credential_key="k") is None
    loaded = service.load_credential(app_name="a", user_id="u", credential_key="k")
    assert loaded is not None and loaded.oauth2 is not None
    assert loaded.oauth2.access_token == "at-2"


def test_the_sql_service_stores_only_ciphertext(tmp_path: Path) -> None:
    path = tmp_path / "c.db"
    service = SqlCredentialService(f"sqlite:///{path}", key=Fernet.generate_key().decode())
    service.save_credential(app_name="a", user_id="u", credential_key="k", credential=_credential())
    service.close()

    engine = sa.create_engine(f"sqlite:///{path}")
    with engine.connect() as conn:
        rows = conn.exec_driver_sql("SELECT * FROM adk_credentials").fetchall()
    engine.dispose()
    assert len(rows) == 1
    assert TOKEN not in str(rows) and "oauth2" not in str(rows)
    assert TOKEN.encode() not in path.read_bytes()


def test_the_key_comes_from_the_environment_and_rotates(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    old, new = Fernet.generate_key().decode(), Fernet.generate_key().decode()
    url = f"sqlite:///{tmp_path / 'c.db'}"
    monkeypatch.setenv(KEY_ENV, old)
    first = SqlCredentialService(url)
    first.save_credential(app_name="a", user_id="u", credential_key="k", credential=_credential())
    first.close()

    monkeypatch.setenv(KEY_ENV, f"{new},{old}")
    rotated = SqlCredentialService(url)
    assert rotated.load_credential(app_name="a", user_id="u", credential_key="k") is not None
    rotated.close()


def test_no_key_or_a_bad_key_refuses_to_start(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(KEY_ENV, raising=False)
    with pytest.raises(ConfigurationError, match=KEY_ENV):
        SqlCredentialService(f"sqlite:///{tmp_path / 'c.db'}")
    with pytest.raises(ConfigurationError, match="not a Fernet key"):
        SqlCredentialService(f"sqlite:///{tmp_path / 'c.db'}", key="not-a-key")


def test_a_row_no_key_opens_reads_as_no_credential_and_logs_no_content(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    url = f"sqlite:///{tmp_path / 'c.db'}"
    first = SqlCredentialService(url, key=Fernet.generate_key().decode())
    first.save_credential(app_name="a", user_id="u", credential_key="k", credential=_credential())
    first.close()
    other = SqlCredentialService(url, key=Fernet.generate_key().decode())

    with caplog.at_level(logging.DEBUG):
        assert other.load_credential(app_name="a", user_id="u", credential_key="k") is None
    other.close()
    assert "could not be decrypted" in caplog.text and TOKEN not in caplog.text


def test_repr_and_errors_never_show_a_secret() -> None:
    credential = _credential()

    assert TOKEN not in repr(credential) and CLIENT_SECRET not in str(credential)
    with pytest.raises(Exception) as raised:
        OAuth2Auth.model_validate({"accessToken": TOKEN, "expiresAt": "not a number"})
    assert TOKEN not in str(raised.value)
