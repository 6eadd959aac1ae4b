from tests.sessions.postgres import fresh_postgres_url, postgres_url

__all__ = ["fresh_postgres_url", "postgres_url"]
