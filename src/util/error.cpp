#include "util/error.hpp"

namespace cachekit {

void fail(int code, const std::string &message) { throw Error(code, message); }

const char *status_name(int code) noexcept {
    switch (code) {
    case CACHEKIT_OK: return "Ok";
    case CACHEKIT_ENOTFOUND: return "NotFound";
    case CACHEKIT_EINVAL: return "InvalidArgument";
    case CACHEKIT_ENOMEM: return "OutOfMemory";
    case CACHEKIT_ECORRUPT: return "Corrupt";
    case CACHEKIT_ETOOBIG: return "InputTooLarge";
    case CACHEKIT_EBACKEND: return "BackendError";
    case CACHEKIT_ETIMEOUT: return "Timeout";
    case CACHEKIT_EUSER: return "UserError";
    case CACHEKIT_EDESERIALIZE: return "DeserializationFailed";
    case CACHEKIT_EBOMB: return "DecompressionBomb";
    case CACHEKIT_EDECOMPRESS: return "DecompressionFailed";
    case CACHEKIT_ECHECKSUM: return "ChecksumMismatch";
    case CACHEKIT_ESIZE: return "SizeValidationFailed";
    case CACHEKIT_EDEPTH: return "DepthExceeded";
    case CACHEKIT_EOVERCLAIM: return "Overclaim";
    case CACHEKIT_ETRUNCATED: return "Truncated";
    case CACHEKIT_ETRAILING: return "TrailingBytes";
    case CACHEKIT_EUNSUPPORTED: return "UnsupportedType";
    case CACHEKIT_ESEGMENT: return "InvalidSegment";
    case CACHEKIT_EKEY: return "InvalidKey";
    case CACHEKIT_ECIPHERTEXT: return "InvalidCiphertext";
    case CACHEKIT_EAUTH: return "AuthenticationFailed";
    case CACHEKIT_EKEYNOTFOUND: return "KeyNotFound";
    case CACHEKIT_EFRAME: return "InvalidFrame";
    case CACHEKIT_ECRYPTO_UNAVAILABLE: return "CryptoUnavailable";
    case CACHEKIT_ENONCE: return "NonceExhausted";
    case CACHEKIT_EINTERNAL: return "Internal";
    case CACHEKIT_EBUSY: return "Busy";
    case CACHEKIT_EDEADLOCK: return "Deadlock";
    case CACHEKIT_ECIRCUIT_OPEN: return "CircuitOpen";
    default: return "Unknown";
    }
}

}  // namespace cachekit
