//go:build !cgo

package cachekit

// The package is a cgo binding of libcachekit (a C library, whose C++20
// core it compiles by default): it cannot be built with CGO_ENABLED=0. The
// undefined name below makes the compiler say so in its first error (this
// file sorts before the package's other files that build without cgo).
var _ = cachekit_needs_cgo__build_with_CGO_ENABLED_1_and_C_and_Cpp20_compilers
