/* The public header compiles as strict C99 (-std=c99 -pedantic -Wall -Wextra
 * -Werror) and the version macros agree with the library that runs. */
#include <cachekit/cachekit.h>

#include <stdio.h>
#include <string.h>

#if !CACHEKIT_VERSION_CHECK(0, 1, 0)
#error "cachekit.h is older than 0.1.0"
#endif
#if CACHEKIT_VERSION_CHECK(CACHEKIT_VERSION_MAJOR + 1, 0, 0)
#error "CACHEKIT_VERSION_CHECK accepts a newer major version"
#endif

static int passed = 0;
static int failed = 0;

static void check(int ok, const char *what) {
    if (ok) {
        ++passed;
        printf("ok %s\n", what);
    } else {
        ++failed;
        printf("FAIL %s\n", what);
    }
}

int main(void) {
    char expected[64];
    cachekit_buf buf = CACHEKIT_BUF_INIT;
    int rc;

    check(cachekit_version_number() == CACHEKIT_VERSION_NUMBER, "cachekit_version_number() == CACHEKIT_VERSION_NUMBER");
    check(strcmp(cachekit_version_string(), CACHEKIT_VERSION_STRING) == 0,
          "cachekit_version_string() == CACHEKIT_VERSION_STRING");
    sprintf(expected, "%d.%d.%d", CACHEKIT_VERSION_MAJOR, CACHEKIT_VERSION_MINOR, CACHEKIT_VERSION_PATCH);
    check(strcmp(CACHEKIT_VERSION_STRING, expected) == 0, "CACHEKIT_VERSION_STRING == MAJOR.MINOR.PATCH");
    check(CACHEKIT_VERSION_NUMBER ==
              CACHEKIT_VERSION_MAJOR * 10000 + CACHEKIT_VERSION_MINOR * 100 + CACHEKIT_VERSION_PATCH,
          "CACHEKIT_VERSION_NUMBER == major*10000 + minor*100 + patch");

    /* A couple of calls through the C declarations. */
    check(strcmp(cachekit_error_name(CACHEKIT_EINVAL), "InvalidArgument") == 0, "cachekit_error_name(EINVAL)");
    rc = cachekit_serializer_code(&buf, "std");
    check(rc == CACHEKIT_OK && buf.size == 1 && strcmp(buf.ptr, "s") == 0, "cachekit_serializer_code(\"std\") == \"s\"");
    rc = cachekit_msgpack_check("\x91\x2a", 2, 0);
    check(rc == CACHEKIT_OK, "cachekit_msgpack_check([42])");
    rc = cachekit_msgpack_check(NULL, 1, 0);
    check(rc == CACHEKIT_EINVAL && cachekit_error_last_code() == CACHEKIT_EINVAL,
          "cachekit_msgpack_check(NULL, 1) == EINVAL");
    cachekit_error_clear();
    check(cachekit_error_last_code() == 0 && cachekit_error_last_message()[0] == '\0', "cachekit_error_clear");
    cachekit_buf_dispose(&buf);
    check(buf.ptr == NULL && buf.size == 0 && buf.capacity == 0, "cachekit_buf_dispose resets the buffer");
    cachekit_buf_dispose(NULL);
    cachekit_free(NULL);

    printf("header_c99: %d passed, %d failed\n", passed, failed);
    return failed == 0 ? 0 : 1;
}
