package cachekit

import (
	"context"
	"errors"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// recordingHandler keeps every slog record it is given.
type recordingHandler struct {
	mu      sync.Mutex
	records []slog.Record
}

func (h *recordingHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h *recordingHandler) Handle(_ context.Context, r slog.Record) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.records = append(h.records, r.Clone())
	return nil
}
func (h *recordingHandler) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h *recordingHandler) WithGroup(string) slog.Handler      { return h }

func (h *recordingHandler) events(name string) []slog.Record {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []slog.Record
	for _, r := range h.records {
		r.Attrs(func(a slog.Attr) bool {
			if a.Key == "event" && a.Value.String() == name {
				out = append(out, r)
			}
			return true
		})
	}
	return out
}

// A refused port: one backend_down WARNING naming the URL and the cause, one
// breaker_open, nothing more for many failing calls; Stats carry the health.
func TestRefusedPortLogsOnceAndShowsInStats(t *testing.T) {
	h := &recordingHandler{}
	SetLogger(slog.New(h))
	defer SetLogger(nil)
	url := "redis://127.0.0.1:" + strconv.Itoa(freePort(t))
	ctx := context.Background()
	c, err := New(ctx, Options{BackendURL: url, DisableL1: true})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for i := 0; i < 200; i++ {
		if _, err := c.Get(ctx, "golog", "k"); !errors.Is(err, ErrNotFound) {
			t.Fatalf("fail-open Get: want a miss, got %v", err)
		}
	}
	down := h.events("backend_down")
	if len(down) != 1 {
		t.Fatalf("want one backend_down, got %d (%d records)", len(down), len(h.records))
	}
	if down[0].Level != slog.LevelWarn || !strings.HasPrefix(down[0].Message, url+": ") ||
		!strings.Contains(down[0].Message, "refused") {
		t.Fatalf("backend_down: %v %q", down[0].Level, down[0].Message)
	}
	if n := len(h.events("breaker_open")); n != 1 {
		t.Fatalf("want one breaker_open, got %d", n)
	}
	if len(h.records) != 2 {
		t.Fatalf("200 failing calls logged %d lines", len(h.records))
	}
	st, err := c.Stats("")
	if err != nil {
		t.Fatal(err)
	}
	if st.Health.State != HealthBreakerOpen || st.Health.Backend != url ||
		!strings.Contains(st.Health.LastError, "refused") || st.Health.LastErrorAt.IsZero() {
		t.Fatalf("health: %+v", st.Health)
	}
}
