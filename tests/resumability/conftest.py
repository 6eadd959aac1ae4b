from tests.models.conftest import server

__all__ = ["server"]
