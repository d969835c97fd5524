// cachekit_set_log_handler: the process-wide handler of util/log_sink.
#include "cachekit/cachekit.h"
#include "util/log_sink.hpp"

extern "C" CACHEKIT_API void cachekit_set_log_handler(cachekit_log_handler fn, void *user_data) noexcept {
    cachekit::log::set_handler(fn, user_data);
}
