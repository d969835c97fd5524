// Command cachekit-harness answers the wrapper-harness protocol
// (../shared/spec/wrapper-harness.md) on standard input and output through
// the Go binding's public API: one JSON request per line, one response per
// line, in order, flushed.
//
//	go run ./cmd/cachekit-harness
package main

import (
	"os"
)

func main() {
	serve(os.Stdin, os.Stdout)
}
