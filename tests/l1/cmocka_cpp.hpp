// cmocka from C++: its header needs these first and declares no C linkage.
// Include it after every other header: it defines a function-like fail()
// macro that clashes with std::ios::fail() and cachekit::fail().
#pragma once

#include <csetjmp>
#include <cstdarg>
#include <cstddef>
#include <cstdint>

extern "C" {
#include <cmocka.h>
}
