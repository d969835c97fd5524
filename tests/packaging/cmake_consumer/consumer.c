/* Links the installed library and makes one interop key: proof that the
 * headers, the library and its version all come from the package. */
#include <cachekit/cachekit.h>
#include <cachekit/version.h>
#include <stdio.h>

int main(void) {
    static const unsigned char args[] = {0x91, 0x2a}; /* msgpack [42] */
    cachekit_buf key = CACHEKIT_BUF_INIT;
    if (cachekit_key_interop(&key, NULL, "users", "get_user", args, sizeof args) != CACHEKIT_OK) {
        fprintf(stderr, "%s\n", cachekit_error_last_message());
        return 1;
    }
    printf("%s %s\n", CACHEKIT_VERSION_STRING, key.ptr);
    cachekit_buf_dispose(&key);
    return 0;
}
