"""Refused at decoration as cachekit-py 0.20+ refuses them (issue 28): encryption in
object mode (nothing there can be ciphertext) and the secure preset with integrity
checking off (the preset forces it on)."""
from __future__ import annotations

import pytest

from cachekit import ConfigurationError, cache

KEY = "4d" * 32


def f(x):
    return x


@pytest.mark.parametrize("make", [
    lambda: cache.secure(backend=None, master_key=KEY),
    lambda: cache(backend=None, encryption=True, master_key=KEY),
    lambda: cache(backend=None, encryption={"enabled": True, "master_key": KEY}),
    lambda: cache.production(backend=None, encryption=True, master_key=KEY),
], ids=["secure", "encryption-true", "encryption-mapping", "preset"])
def test_encryption_without_a_backend_is_refused(make):
    with pytest.raises(ConfigurationError, match="encryption requires a backend: backend=None is L1-only"):
        make()(f)


@pytest.mark.parametrize("value", [False, 0, None])
def test_secure_refuses_integrity_checking_off(value):
    with pytest.raises(ConfigurationError, match="does not accept integrity_checking"):
        cache.secure(backend="memory://", master_key=KEY, integrity_checking=value)(f)


def test_what_stays_accepted():
    assert cache.secure(backend="memory://", master_key=KEY, integrity_checking=True)(f)(1) == 1
    assert cache(backend=None, encryption=False)(f)(2) == 2
    assert cache(backend="memory://", encryption=True, master_key=KEY)(f)(3) == 3
