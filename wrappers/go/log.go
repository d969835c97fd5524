package cachekit

/*
#include <cachekit/cachekit.h>
void ck_install_log_handler(void);
*/
import "C"

import (
	"log/slog"
	"sync/atomic"
)

var logger atomic.Pointer[slog.Logger]

// The core's events (backend_down, breaker_open, backend_recovered,
// coherence_suspended, coherence_resumed) go to slog from the start.
func init() { C.ck_install_log_handler() }

// SetLogger chooses where the core's failure events go: WARNING for
// backend_down, breaker_open and coherence_suspended, INFO for
// backend_recovered and coherence_resumed, each with an "event" attribute.
// nil (the default) means slog.Default() at the time of each event.
func SetLogger(l *slog.Logger) { logger.Store(l) }

func currentLogger() *slog.Logger {
	if l := logger.Load(); l != nil {
		return l
	}
	return slog.Default()
}
