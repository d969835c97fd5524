package cachekit

/*
#include <cachekit/cachekit.h>
*/
import "C"

import (
	"math"
	"time"
	"unsafe"
)

// HealthState is what the L2's calls have seen (cachekit_health.state).
type HealthState int

const (
	HealthOK          HealthState = C.CACHEKIT_HEALTH_OK
	HealthDown        HealthState = C.CACHEKIT_HEALTH_DOWN
	HealthBreakerOpen HealthState = C.CACHEKIT_HEALTH_BREAKER_OPEN
)

func (s HealthState) String() string {
	switch s {
	case HealthOK:
		return "ok"
	case HealthDown:
		return "down"
	case HealthBreakerOpen:
		return "breaker_open"
	}
	return "unknown"
}

// CoherenceState is the L1 coherence feed's state (cachekit_health.coherence).
type CoherenceState int

const (
	CoherenceOff       CoherenceState = C.CACHEKIT_COHERENCE_OFF
	CoherenceLive      CoherenceState = C.CACHEKIT_COHERENCE_LIVE
	CoherenceSuspended CoherenceState = C.CACHEKIT_COHERENCE_SUSPENDED
)

// Health is a cache's L2 health as the core saw it, without a round trip.
type Health struct {
	State               HealthState
	Coherence           CoherenceState
	Backend             string    // the URL without password or query; "" without L2
	LastError           string    // "" when none
	LastErrorAt         time.Time // zero when none
	Since               time.Time // when it went down or came back; zero: never changed
	ConsecutiveFailures uint64
}

func unixTime(s C.double) time.Time {
	if s == 0 {
		return time.Time{}
	}
	sec, frac := math.Modf(float64(s))
	return time.Unix(int64(sec), int64(frac*1e9))
}

// Health reads the cache's L2 health (docs/operations.md, "Seeing failures").
func (c *Cache) Health() (Health, error) {
	h := C.cachekit_health{struct_size: C.size_t(unsafe.Sizeof(C.cachekit_health{}))}
	err := withScratch(c.gate, func(s *scratch) error {
		return errorFrom(C.cachekit_cache_health_get_ex(c.h, &h, &s.err), &s.err)
	})
	if err != nil {
		return Health{}, err
	}
	return Health{
		State:               HealthState(h.state),
		Coherence:           CoherenceState(h.coherence),
		Backend:             C.GoString(&h.backend[0]),
		LastError:           C.GoString(&h.last_error[0]),
		LastErrorAt:         unixTime(h.last_error_at),
		Since:               unixTime(h.since),
		ConsecutiveFailures: uint64(h.consecutive_failures),
	}, nil
}
