// An in-process L2 backend, for tests and single-process use.
#pragma once

#include <memory>

#include "l2/backend.hpp"

namespace cachekit::l2 {

std::unique_ptr<Backend> open_memory();

}  // namespace cachekit::l2
