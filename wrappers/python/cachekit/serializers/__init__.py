"""cachekit.serializers (the reference's module): its serializer classes and factory.
As in the reference, an instance given as serializer= is keyed as a serializer object
("<custom>:" + its class name: serializer=AutoSerializer() is not serializer="auto"),
and its values are framed and checked by the core (docs/python.md). They have no
serialize/deserialize of their own here: the stored bytes are the core's CK frames,
not a Python serializer's output."""
from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

from cachekit._core import DecodeError, DecryptionAuthenticationError
from cachekit._options import check_serializer_name
from cachekit._unavailable import module_getattr


class NamedSerializer:
    """The reference serializer behind a registry name (its `name`)."""

    name = "default"

    def __init__(self, enable_integrity_checking: bool = True) -> None:
        # The decorator's integrity_checking= decides the frame; kept for reading back.
        self.enable_integrity_checking = bool(enable_integrity_checking)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(enable_integrity_checking={self.enable_integrity_checking})"


class StandardSerializer(NamedSerializer):
    """MessagePack, language-neutral (serializer="default")."""

    name = "default"


class AutoSerializer(NamedSerializer):
    """MessagePack plus Python's tuples, sets and UUIDs (serializer="auto")."""

    name = "auto"


class OrjsonSerializer(NamedSerializer):
    """serializer="orjson": keyed as the reference keys it, values stored as MessagePack."""

    name = "orjson"


class ArrowSerializer(NamedSerializer):
    """serializer="arrow": keyed as the reference keys it, values stored as MessagePack."""

    name = "arrow"


@runtime_checkable
class SerializerProtocol(Protocol):
    def serialize(self, obj: Any) -> Any: ...

    def deserialize(self, data: bytes, metadata: Any = None) -> Any: ...


# Bytes that do not decode are the core's decode family here.
SerializationError = DecodeError

SERIALIZER_REGISTRY: dict[str, type[NamedSerializer]] = {
    "auto": AutoSerializer, "pythonic": AutoSerializer, "default": StandardSerializer,
    "std": StandardSerializer, "arrow": ArrowSerializer, "orjson": OrjsonSerializer,
}


def get_serializer(name: str, enable_integrity_checking: bool = True) -> NamedSerializer:
    """The serializer of a name the reference's registry takes (ValueError otherwise;
    "encrypted" is a ConfigurationError pointing at encryption=True)."""
    check_serializer_name(name)
    if not isinstance(name, str) or name not in SERIALIZER_REGISTRY:
        raise ValueError(f"Unknown serializer: {name!r}. Valid options: {', '.join(sorted(SERIALIZER_REGISTRY))}")
    return SERIALIZER_REGISTRY[name](enable_integrity_checking)


_ENCRYPTION = "encryption is the core's (AES-256-GCM in the CK frame): use encryption=True or cache.secure"
_BYTES = "stored bytes are the core's CK frames, not a Python serializer's"
__getattr__ = module_getattr(__name__, {
    "EncryptionWrapper": _ENCRYPTION, "EncryptionError": _ENCRYPTION, "KeyringConfigurationError": _ENCRYPTION,
    "TenantMismatchError": _ENCRYPTION, "CrossSDKSerializerProtocol": _BYTES, "EnvelopeShapeError": _BYTES,
    "SerializationFormat": _BYTES, "SerializationMetadata": _BYTES, "SuspiciousCacheEntryError": _BYTES,
    "benchmark_serializers": _BYTES, "get_available_serializers": _BYTES, "get_serializer_info": _BYTES,
})

__all__ = [
    "ArrowSerializer", "AutoSerializer", "DecryptionAuthenticationError", "OrjsonSerializer", "StandardSerializer",
    "SerializationError", "SerializerProtocol", "get_serializer", "SERIALIZER_REGISTRY",
]
