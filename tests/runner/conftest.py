from tests.models.conftest import server
from tests.sessions.postgres import fresh_postgres_url

__all__ = ["fresh_postgres_url", "server"]
