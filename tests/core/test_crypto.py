import pytest
from cryptography.fernet import Fernet

from core.crypto import SealBroken, reseal, seal, unseal


def test_sealed_text_is_not_readable_and_opens_again(settings):
    sealed = seal("1BVtsOK4Bu...session")
    assert "session" not in sealed
    assert unseal(sealed) == "1BVtsOK4Bu...session"


def test_rotation_old_keys_still_open_and_reseal_uses_the_newest(settings):
    old_key = settings.SESSION_ENCRYPTION_KEYS[0]
    sealed_with_old = seal("secret")
    new_key = Fernet.generate_key().decode()
    settings.SESSION_ENCRYPTION_KEYS = [new_key, old_key]

    assert unseal(sealed_with_old) == "secret"
    resealed = reseal(sealed_with_old)
    settings.SESSION_ENCRYPTION_KEYS = [new_key]
    assert unseal(resealed) == "secret"
    with pytest.raises(SealBroken):
        unseal(sealed_with_old)


def test_empty_stays_empty():
    assert seal("") == "" and unseal("") == ""
