package cachekit

/*
#include <cachekit/cachekit.h>
*/
import "C"

import (
	"time"
	"unsafe"
)

// Stats are a cache's counters (docs/cache.md "Stats"), exact when read.
type Stats struct {
	L1Hits, L2Hits, Misses, Stores, Loads, LoadErrors, Waits        uint64
	StaleServed, Refreshes, DroppedFills, TooLarge, Invalidations   uint64
	BackendErrors, Timeouts, Corrupt, Tampered, WrongKey, Downgrade uint64
	SerializerMismatch                                              uint64
	L2LatencyCount                                                  uint64
	L2LatencySum                                                    time.Duration
	L1Entries, L1Bytes, L1Evictions, L1Expirations                  uint64 // whole cache
	BreakerState                                                    BreakerState
	Health                                                          Health // the L2's, as Cache.Health
}

// BreakerState is the backend circuit breaker's state.
type BreakerState int

const (
	BreakerClosed   BreakerState = C.CACHEKIT_BREAKER_CLOSED
	BreakerOpen     BreakerState = C.CACHEKIT_BREAKER_OPEN
	BreakerHalfOpen BreakerState = C.CACHEKIT_BREAKER_HALF_OPEN
)

// Stats reads the counters of namespace ns; "" sums every namespace (the
// per-namespace counters of the empty namespace are not reachable here).
func (c *Cache) Stats(ns string) (Stats, error) {
	var cns []byte
	if ns != "" {
		var err error
		if cns, err = cString("namespace", ns); err != nil {
			return Stats{}, err
		}
	}
	st := C.cachekit_cache_stats{struct_size: C.size_t(unsafe.Sizeof(C.cachekit_cache_stats{}))}
	err := withScratch(c.gate, func(s *scratch) error {
		return errorFrom(C.cachekit_cache_stats_get_ex(c.h, &st, charPtr(cns), &s.err), &s.err)
	})
	if err != nil {
		return Stats{}, err
	}
	health, err := c.Health()
	if err != nil {
		return Stats{}, err
	}
	return Stats{
		Health: health,
		L1Hits: uint64(st.l1_hits), L2Hits: uint64(st.l2_hits), Misses: uint64(st.misses),
		Stores: uint64(st.stores), Loads: uint64(st.loads), LoadErrors: uint64(st.load_errors),
		Waits: uint64(st.waits), StaleServed: uint64(st.stale_served), Refreshes: uint64(st.refreshes),
		DroppedFills: uint64(st.dropped_fills), TooLarge: uint64(st.too_large),
		Invalidations: uint64(st.invalidations), BackendErrors: uint64(st.backend_errors),
		Timeouts: uint64(st.timeouts), Corrupt: uint64(st.corrupt), Tampered: uint64(st.tampered),
		WrongKey: uint64(st.wrong_key), Downgrade: uint64(st.downgrade),
		SerializerMismatch: uint64(st.serializer_mismatch), L2LatencyCount: uint64(st.l2_latency_count),
		L2LatencySum: time.Duration(float64(st.l2_latency_sum_ms) * float64(time.Millisecond)),
		L1Entries:    uint64(st.l1_entries), L1Bytes: uint64(st.l1_bytes),
		L1Evictions: uint64(st.l1_evictions), L1Expirations: uint64(st.l1_expirations),
		BreakerState: BreakerState(st.breaker_state),
	}, nil
}
