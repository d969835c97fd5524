// The public header compiles as C++20 (-Wall -Wextra -Werror -pedantic), and
// every function is noexcept there: a few checked by call expression, all of
// them by function type.
#include <cachekit/cachekit.h>

#include <cstdio>
#include <cstring>
#include <type_traits>

#define CK_NOEXCEPT(call) static_assert(noexcept(call), #call " is not noexcept")

namespace {

cachekit_buf *buf = nullptr;
cachekit_keyring *ring = nullptr;
const cachekit_keyring *cring = nullptr;
cachekit_derived_keys *keys = nullptr;
unsigned char *bytes = nullptr;
size_t *size = nullptr;
int *key_index = nullptr;

// By call expression (unevaluated operands only: nothing here runs).
CK_NOEXCEPT(cachekit_error_name(0));
CK_NOEXCEPT(cachekit_error_last_code());
CK_NOEXCEPT(cachekit_error_last_message());
CK_NOEXCEPT(cachekit_error_clear());
CK_NOEXCEPT(cachekit_version_string());
CK_NOEXCEPT(cachekit_version_number());
CK_NOEXCEPT(cachekit_buf_dispose(nullptr));
CK_NOEXCEPT(cachekit_buf_reserve(buf, 0));
CK_NOEXCEPT(cachekit_free(nullptr));
CK_NOEXCEPT(cachekit_msgpack_check(nullptr, 0, 0));
CK_NOEXCEPT(cachekit_msgpack_canonical(buf, nullptr, 0, 0));
CK_NOEXCEPT(cachekit_msgpack_to_json(buf, nullptr, 0));
CK_NOEXCEPT(cachekit_serializer_code(buf, nullptr));
CK_NOEXCEPT(cachekit_key_auto(buf, nullptr, nullptr, nullptr, nullptr, 0, 0, nullptr));
CK_NOEXCEPT(cachekit_key_interop(buf, buf, nullptr, nullptr, nullptr, 0));
CK_NOEXCEPT(cachekit_envelope_wrap(buf, nullptr, 0, nullptr));
CK_NOEXCEPT(cachekit_envelope_unwrap(buf, buf, nullptr, 0));
CK_NOEXCEPT(cachekit_frame_encode(buf, nullptr, nullptr, nullptr, 0));
CK_NOEXCEPT(cachekit_frame_decode(buf, buf, size, nullptr, 0));
CK_NOEXCEPT(cachekit_container_v2_wrap(buf, nullptr, 0, 0));
CK_NOEXCEPT(cachekit_container_v2_unwrap(buf, nullptr, 0));
CK_NOEXCEPT(cachekit_crypto_available());
CK_NOEXCEPT(cachekit_master_key_from_hex(bytes, nullptr, 0));
CK_NOEXCEPT(cachekit_crypto_derive(keys, nullptr, 0, nullptr));
CK_NOEXCEPT(cachekit_crypto_aad(buf, nullptr, nullptr, nullptr, 0, nullptr));
CK_NOEXCEPT(cachekit_crypto_encrypt(buf, bytes, nullptr, 0, nullptr, 0, nullptr));
CK_NOEXCEPT(cachekit_crypto_decrypt(buf, bytes, nullptr, 0, nullptr, 0));
CK_NOEXCEPT(cachekit_keyring_new(&ring, nullptr, nullptr));
CK_NOEXCEPT(cachekit_keyring_new_raw(&ring, nullptr, 0, nullptr, 0));
CK_NOEXCEPT(cachekit_keyring_free(ring));
CK_NOEXCEPT(cachekit_keyring_fingerprint(cring, bytes, nullptr));
CK_NOEXCEPT(cachekit_keyring_encrypt(cring, buf, nullptr, nullptr, 0, nullptr, 0));
CK_NOEXCEPT(cachekit_keyring_decrypt(cring, buf, key_index, nullptr, nullptr, nullptr, 0, nullptr, 0));
CK_NOEXCEPT(cachekit_inspect(buf, nullptr, 0, cring, nullptr, nullptr));

// Every CACHEKIT_API function, by its type: noexcept is part of a function
// type since C++17, so this needs no arguments and covers functions added to
// the header later (the list is generated from cachekit.h at build time).
template <class T>
struct is_noexcept_function : std::false_type {};
template <class R, class... A>
struct is_noexcept_function<R (*)(A...) noexcept> : std::true_type {};

#define CK_API_FUNCTION(name) \
    static_assert(is_noexcept_function<decltype(&name)>::value, #name " is not noexcept in C++");
#include "abi_functions.h"
#undef CK_API_FUNCTION

// The initialiser macros are valid C++ too.
constexpr cachekit_buf kInit = CACHEKIT_BUF_INIT;
static_assert(kInit.ptr == nullptr && kInit.size == 0 && kInit.capacity == 0, "CACHEKIT_BUF_INIT is not empty");
static_assert(CACHEKIT_VERSION_CHECK(0, 1, 0), "header older than 0.1.0");

}  // namespace

int main() {
    // Called for real once, through the C++ declarations.
    cachekit_buf out = CACHEKIT_BUF_INIT;
    int rc = cachekit_serializer_code(&out, "arrow");
    bool ok = rc == CACHEKIT_OK && out.ptr != nullptr && std::strcmp(out.ptr, "w") == 0 &&
              cachekit_version_number() == CACHEKIT_VERSION_NUMBER;
    cachekit_buf_dispose(&out);
    std::printf("header_cpp: %d passed, %d failed\n", ok ? 1 : 0, ok ? 0 : 1);
    return ok ? 0 : 1;
}
