//go:build !cgo

package cachekit

// The package is a cgo binding of libcachekit (a C library): it cannot be
// built with CGO_ENABLED=0. The undefined name below makes the compiler say
// so in its first error (this file sorts before the package's other files
// that build without cgo).
var _ = cachekit_needs_cgo__build_with_CGO_ENABLED_1_and_a_C_compiler_and_libcachekit_visible_to_pkg_config
