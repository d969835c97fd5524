// A live-bytes high-water meter for the program it is linked into: it
// defines malloc, calloc, realloc, free and the aligned allocators, so every
// allocation of the process (libcachekit's and libstdc++'s go through the
// executable's definitions) is counted. Used to check that a hostile
// envelope is refused before an output sized from its original_size is
// allocated. Off under ASan/TSan, which bring their own allocator.
#pragma once

#include <cstddef>
#include <cstdint>

namespace ckconf::alloc_meter {

// Whether the allocators are interposed in this build.
bool active();

// Start a measurement: the high-water restarts from the bytes live now.
void reset();

// The most bytes live at any moment since reset(), beyond those live at it.
int64_t peak_since_reset();

}  // namespace ckconf::alloc_meter
