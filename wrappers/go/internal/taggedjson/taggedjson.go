// Package taggedjson turns the tagged JSON of the conformance vectors
// (interop-mode.json "tagged_json") into Go values and back, for the
// harness and the vector tests. It is not part of the public API.
package taggedjson

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"sort"
	"strconv"
	"strings"
	"time"

	cachekit "github.com/libcachekit/libcachekit/wrappers/go"
)

// Error is a value the tagged JSON names but Go (or the protocol) cannot
// carry; Name is the codec-tool error name the harness reports.
type Error struct{ Name, Message string }

func (e *Error) Error() string { return e.Name + ": " + e.Message }

func unsupported(format string, args ...any) error {
	return &Error{Name: "UnsupportedType", Message: fmt.Sprintf(format, args...)}
}

// Set is the package's set argument (ext 83, sorted and deduplicated by
// the core).
type Set = cachekit.Set

// Decode parses JSON text keeping numbers exact.
func Decode(data []byte) (any, error) {
	d := json.NewDecoder(bytes.NewReader(data))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, err
	}
	return v, nil
}

// ToGo turns a decoded tagged-JSON value (numbers as json.Number) into the
// Go value a user would pass: int64 (uint64 past it), float64, []byte,
// time.Time, a UUID as its lowercase string, Set, string, bool, nil,
// []any and map[string]any.
func ToGo(v any) (any, error) {
	switch x := v.(type) {
	case nil, bool, string:
		return x, nil
	case json.Number:
		return parseInt(string(x))
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			g, err := ToGo(e)
			if err != nil {
				return nil, err
			}
			out[i] = g
		}
		return out, nil
	case map[string]any:
		if len(x) == 1 {
			for k, tv := range x {
				if strings.HasPrefix(k, "$") {
					return tagged(k, tv)
				}
			}
		}
		out := make(map[string]any, len(x))
		for k, e := range x {
			g, err := ToGo(e)
			if err != nil {
				return nil, err
			}
			out[k] = g
		}
		return out, nil
	}
	return nil, &Error{Name: "BadRequest", Message: fmt.Sprintf("not a JSON value: %T", v)}
}

func parseInt(s string) (any, error) {
	if i, err := strconv.ParseInt(s, 10, 64); err == nil {
		return i, nil
	}
	if u, err := strconv.ParseUint(s, 10, 64); err == nil {
		return u, nil
	}
	if _, ok := new(big.Int).SetString(s, 10); ok {
		return nil, unsupported("integer %s is outside [-2^63, 2^64): Go has no integer for it", s)
	}
	return nil, &Error{Name: "BadRequest", Message: "not an integer: " + s}
}

func tagged(tag string, v any) (any, error) {
	if tag == "$set" {
		items, ok := v.([]any)
		if !ok {
			return nil, &Error{Name: "BadRequest", Message: "$set takes an array"}
		}
		g, err := ToGo(items)
		if err != nil {
			return nil, err
		}
		return Set(g.([]any)), nil
	}
	s, ok := v.(string)
	if !ok {
		return nil, &Error{Name: "BadRequest", Message: tag + " takes a string"}
	}
	switch tag {
	case "$float":
		f, err := strconv.ParseFloat(s, 64)
		if err != nil && !math.IsInf(f, 0) { // "1e999" overflows to an infinity, as intended
			return nil, &Error{Name: "BadRequest", Message: "not a float: " + s}
		}
		return f, nil
	case "$int":
		return parseInt(s)
	case "$bytes":
		b, err := hex.DecodeString(s)
		if err != nil {
			return nil, &Error{Name: "BadRequest", Message: "not hex: " + s}
		}
		return b, nil
	case "$datetime":
		t, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			return nil, unsupported("a datetime needs a UTC offset (Go's time.Time is always aware): %s", s)
		}
		return t, nil
	case "$uuid":
		u := strings.ToLower(s)
		if len(u) != 36 || u[8] != '-' || u[13] != '-' || u[18] != '-' || u[23] != '-' {
			return nil, &Error{Name: "BadRequest", Message: "not a UUID: " + s}
		}
		if _, err := hex.DecodeString(strings.ReplaceAll(u, "-", "")); err != nil {
			return nil, &Error{Name: "BadRequest", Message: "not a UUID: " + s}
		}
		return u, nil
	}
	return nil, &Error{Name: "BadRequest", Message: "unknown tag " + tag}
}

// FromGo turns a decoded Go value back into tagged JSON (the form
// interop-mode.json writes values in): integers as numbers, floats as
// {"$float": text}, byte strings as {"$bytes": hex}, the temporal values
// DecodeValue revives (time.Time, Date, TimeOfDay) as the sentinel maps
// they were stored as ({"__datetime__": true, "value": isoformat}; tagged
// JSON's $datetime is an argument's form). Maps with non-string keys become
// objects keyed by the keys' JSON text.
func FromGo(v any) (any, error) {
	switch x := v.(type) {
	case nil, bool, string:
		return x, nil
	case int8, int16, int32, int64, int, uint8, uint16, uint32, uint64, uint:
		return json.Number(fmt.Sprint(x)), nil
	case float32:
		return map[string]any{"$float": floatText(float64(x), 32)}, nil
	case float64:
		return map[string]any{"$float": floatText(x, 64)}, nil
	case []byte:
		return map[string]any{"$bytes": hex.EncodeToString(x)}, nil
	case time.Time: // a revived datetime: the value form is its sentinel map
		return map[string]any{"__datetime__": true, "value": isoformat(x)}, nil
	case cachekit.Date:
		return map[string]any{"__date__": true, "value": x.String()}, nil
	case cachekit.TimeOfDay:
		return map[string]any{"__time__": true, "value": x.String()}, nil
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			j, err := FromGo(e)
			if err != nil {
				return nil, err
			}
			out[i] = j
		}
		return out, nil
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			j, err := FromGo(e)
			if err != nil {
				return nil, err
			}
			out[k] = j
		}
		return out, nil
	case map[any]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			jk, err := FromGo(k)
			if err != nil {
				return nil, err
			}
			kt, _ := json.Marshal(jk)
			j, err := FromGo(e)
			if err != nil {
				return nil, err
			}
			out[string(kt)] = j
		}
		return out, nil
	case interface{ Ext() (int8, []byte) }:
		id, data := x.Ext()
		return map[string]any{"$ext": int(id), "data": hex.EncodeToString(data)}, nil
	}
	return nil, unsupported("no tagged JSON for %T", v)
}

// isoformat is Python's datetime.isoformat() of an aware datetime, as
// cachekit.DateTime writes it.
func isoformat(t time.Time) string {
	t = t.Truncate(time.Microsecond)
	if t.Nanosecond() == 0 {
		return t.Format("2006-01-02T15:04:05-07:00")
	}
	return t.Format("2006-01-02T15:04:05.000000-07:00")
}

func floatText(f float64, bits int) string {
	switch {
	case math.IsNaN(f):
		return "nan"
	case math.IsInf(f, 1):
		return "1e999"
	case math.IsInf(f, -1):
		return "-1e999"
	}
	s := strconv.FormatFloat(f, 'g', -1, bits)
	if !strings.ContainsAny(s, ".eEn") {
		s += ".0"
	}
	return s
}

// Equal compares two tagged-JSON values (from Decode or FromGo): maps
// without order, floats by value.
func Equal(a, b any) bool {
	ja, _ := json.Marshal(normalize(a))
	jb, _ := json.Marshal(normalize(b))
	return bytes.Equal(ja, jb)
}

func normalize(v any) any {
	switch x := v.(type) {
	case map[string]any:
		if f, ok := x["$float"].(string); ok && len(x) == 1 {
			p, err := strconv.ParseFloat(f, 64)
			if err == nil {
				return map[string]any{"$float": strconv.FormatFloat(p, 'g', -1, 64)}
			}
		}
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		out := make(map[string]any, len(x))
		for _, k := range keys {
			out[k] = normalize(x[k])
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = normalize(e)
		}
		return out
	}
	return v
}
