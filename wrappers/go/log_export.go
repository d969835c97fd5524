package cachekit

/*
#include <cachekit/cachekit.h>
*/
import "C"

import (
	"context"
	"log/slog"
	"unsafe"
)

// goCachekitLog is the core's log handler (docs/operations.md, "Seeing
// failures"). It may run on a thread the core started (a coherence feed's):
// cgo gives such a thread what Go needs. It must not panic into C.
//
//export goCachekitLog
func goCachekitLog(level C.int, event *C.char, message *C.char, _ unsafe.Pointer) {
	defer func() { _ = recover() }()
	lvl := slog.LevelWarn
	if level < C.CACHEKIT_LOG_WARNING {
		lvl = slog.LevelInfo
	}
	currentLogger().Log(context.Background(), lvl, C.GoString(message), slog.String("event", C.GoString(event)))
}
