// How a backend is named in log lines and cachekit_health: its URL without
// the password (the userinfo keeps only the user name) and without the query
// (a unix:// URL may carry password= there).
#pragma once

#include <string>
#include <string_view>

namespace cachekit::l2 {

std::string backend_label(std::string_view url);

}  // namespace cachekit::l2
