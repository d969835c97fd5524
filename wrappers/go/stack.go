//go:build cgo

package cachekit

import "runtime/debug"

func stack() []byte { return debug.Stack() }
