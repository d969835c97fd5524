#include "l2/backend_label.hpp"

#include <algorithm>

namespace cachekit::l2 {

std::string backend_label(std::string_view url) {
    url = url.substr(0, url.find_first_of("?#"));
    const size_t scheme_end = url.find("://");
    if (scheme_end == std::string_view::npos) return std::string(url);
    const size_t host_start = scheme_end + 3;
    const size_t host_end = std::min(url.find('/', host_start), url.size());
    const std::string_view authority = url.substr(host_start, host_end - host_start);
    const size_t at = authority.rfind('@');
    if (at == std::string_view::npos) return std::string(url);
    std::string_view user = authority.substr(0, at);
    user = user.substr(0, user.find(':'));
    std::string out(url.substr(0, host_start));
    if (!user.empty()) out.append(user).push_back('@');
    out.append(authority.substr(at + 1));
    out.append(url.substr(host_end));
    return out;
}

}  // namespace cachekit::l2
