"""Client addresses behind a proxy: X-Forwarded-For is read only when the peer is a proxy named in
TRUSTED_PROXIES, right to left, up to the first address that is not a trusted proxy."""

import pytest
from django.core.exceptions import ImproperlyConfigured
from django.test import RequestFactory

from config.settings.security import trusted_proxies_parse
from core.security import client_ip


def _seen(settings, *, peer: str, forwarded: str = "", proxies: str = "10.0.0.0/8") -> str:
    settings.TRUSTED_PROXIES = trusted_proxies_parse(proxies)
    meta = {"REMOTE_ADDR": peer}
    if forwarded:
        meta["HTTP_X_FORWARDED_FOR"] = forwarded
    return client_ip(RequestFactory().get("/", **meta))


def test_a_client_talking_directly_cannot_forge_its_address(settings):
    assert _seen(settings, peer="203.0.113.9", forwarded="198.51.100.1") == "203.0.113.9"


def test_behind_a_trusted_proxy_the_client_is_the_last_address_it_appended(settings):
    assert _seen(settings, peer="10.0.0.2", forwarded="192.0.2.66, 203.0.113.9") == "203.0.113.9"


def test_behind_two_trusted_proxies_both_are_skipped(settings):
    assert _seen(settings, peer="10.0.0.2", forwarded="192.0.2.66, 203.0.113.9, 10.0.0.3") == "203.0.113.9"


def test_with_no_proxy_named_the_header_is_ignored(settings):
    assert _seen(settings, peer="10.0.0.2", forwarded="203.0.113.9", proxies="") == "10.0.0.2"


def test_a_count_or_a_bad_address_is_refused_with_what_to_write():
    with pytest.raises(ImproperlyConfigured, match="addresses or networks"):
        trusted_proxies_parse("1")
    with pytest.raises(ImproperlyConfigured, match="addresses or networks"):
        trusted_proxies_parse("10.0.0.0/33")
