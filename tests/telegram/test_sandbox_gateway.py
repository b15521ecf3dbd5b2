"""SandboxGateway implements every method of the TelegramGateway protocol, with the same parameters."""

import inspect

import pytest

from telegram.errors import TransientError
from telegram.gateway import TelegramGateway, open_gateway
from telegram.sandbox.gateway import SandboxGateway

PROTOCOL_METHODS = [
    name for name, member in vars(TelegramGateway).items() if inspect.isfunction(member) and not name.startswith("_")
]


@pytest.mark.parametrize("name", PROTOCOL_METHODS)
def test_every_protocol_method_has_the_same_parameters(name):
    expected = inspect.signature(getattr(TelegramGateway, name)).parameters
    actual = inspect.signature(getattr(SandboxGateway, name)).parameters

    assert [(p.name, p.kind, p.default) for p in actual.values()] == [
        (p.name, p.kind, p.default) for p in expected.values()
    ]


def test_open_gateway_gives_the_sandbox_at_the_configured_path(settings, tmp_path):
    settings.TELEGRAM_BACKEND = "sandbox"
    settings.SANDBOX_PATH = tmp_path / "nothing-loaded"

    gateway = open_gateway(phone="+15550000001")

    assert isinstance(gateway, SandboxGateway)
    with pytest.raises(TransientError, match="sandbox_load"):
        gateway.world  # noqa: B018
