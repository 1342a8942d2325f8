from tests.webhooks.conftest import receiver

__all__ = ["receiver"]
