// Package vectors loads the upstream conformance vectors for the tests:
// $CACHEKIT_VECTORS_DIR, else ../shared/vectors/upstream beside the
// repository root. A test skips, saying so, when they are absent.
package vectors

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Row is what every row has: the name its test runs it under.
type Row struct {
	Name string `json:"name"`
}

// RowName is the subtest name Each gives the row.
func (r Row) RowName() string { return r.Name }

// Each runs fn on every row as a subtest named by the row, so every row a
// test uses is named in its output.
func Each[R interface{ RowName() string }](t *testing.T, rows []R, fn func(t *testing.T, row R)) {
	t.Helper()
	for _, row := range rows {
		t.Run(row.RowName(), func(t *testing.T) { fn(t, row) })
	}
}

// KeyRow is a key_vectors row; Args stays raw tagged JSON.
type KeyRow struct {
	Row
	Namespace        string          `json:"namespace"`
	Operation        string          `json:"operation"`
	Args             json.RawMessage `json:"args"`
	CanonicalArgsHex string          `json:"canonical_args_hex"`
	ExpectedKey      string          `json:"expected_key"`
}

// ValueRow is a value_vectors row.
type ValueRow struct {
	Row
	Value        json.RawMessage `json:"value"`
	CanonicalHex string          `json:"canonical_msgpack_hex"`
}

// ErrorRow is an error_vectors row: either bad args or bad segments.
type ErrorRow struct {
	Row
	Namespace *string         `json:"namespace"`
	Operation *string         `json:"operation"`
	Args      json.RawMessage `json:"args"`
}

// Request is the key request the row makes: "vectors", "op" and an empty
// argument array stand in for what the row leaves out.
func (r ErrorRow) Request() (ns, op string, args json.RawMessage) {
	ns, op, args = "vectors", "op", r.Args
	if r.Namespace != nil {
		ns = *r.Namespace
	}
	if r.Operation != nil {
		op = *r.Operation
	}
	if args == nil {
		args = []byte("[]")
	}
	return ns, op, args
}

// ReaderRow is a reader_accept_vectors / reader_reject_vectors row: raw
// MessagePack in InputHex; an accept row may give the decoded Value, a
// reject row names its Error.
type ReaderRow struct {
	Row
	InputHex string          `json:"input_hex"`
	Value    json.RawMessage `json:"value"`
	Error    string          `json:"error"`
}

// EncryptionRow is an encryption_vectors row.
type EncryptionRow struct {
	Row
	MasterKeyHex  string `json:"master_key_hex"`
	TenantID      string `json:"tenant_id"`
	CacheKey      string `json:"cache_key"`
	AADHex        string `json:"aad_hex"`
	PlaintextHex  string `json:"plaintext_hex"`
	CiphertextHex string `json:"ciphertext_hex"`
}

// InteropMode is interop-mode.json.
type InteropMode struct {
	KeyVectors   []KeyRow        `json:"key_vectors"`
	ValueVectors []ValueRow      `json:"value_vectors"`
	ErrorVectors []ErrorRow      `json:"error_vectors"`
	ReaderAccept []ReaderRow     `json:"reader_accept_vectors"`
	ReaderReject []ReaderRow     `json:"reader_reject_vectors"`
	Encryption   []EncryptionRow `json:"encryption_vectors"`
}

// Dir is the vectors folder; repoRoot is the repository root relative to
// the test's package directory (e.g. "../.." from wrappers/go).
func Dir(t testing.TB, repoRoot string) string {
	t.Helper()
	dir := os.Getenv("CACHEKIT_VECTORS_DIR")
	if dir == "" {
		dir = filepath.Join(repoRoot, "..", "shared", "vectors", "upstream")
	}
	if _, err := os.Stat(filepath.Join(dir, "interop-mode.json")); err != nil {
		t.Skipf("conformance vectors absent (%s): skipping; set CACHEKIT_VECTORS_DIR", dir)
	}
	return dir
}

// LoadInteropMode reads interop-mode.json (skipping when absent).
func LoadInteropMode(t testing.TB, repoRoot string) *InteropMode {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(Dir(t, repoRoot), "interop-mode.json"))
	if err != nil {
		t.Fatal(err)
	}
	var f InteropMode
	if err := json.Unmarshal(data, &f); err != nil {
		t.Fatalf("interop-mode.json: %v", err)
	}
	if len(f.KeyVectors) == 0 || len(f.ValueVectors) == 0 || len(f.ErrorVectors) == 0 {
		t.Fatal("interop-mode.json has no key, value or error rows")
	}
	if len(f.ReaderAccept) == 0 || len(f.ReaderReject) == 0 {
		t.Fatal("interop-mode.json has no reader_accept_vectors or reader_reject_vectors rows")
	}
	for _, r := range append(append([]ReaderRow{}, f.ReaderAccept...), f.ReaderReject...) {
		if r.InputHex == "" { // a renamed field would otherwise read as empty documents
			t.Fatalf("interop-mode.json reader row %s has no input_hex", r.Name)
		}
	}
	return &f
}

// TemporalRow is a wire-format.json temporal_sentinel_vectors row: a
// sentinel map and what it must revive to.
type TemporalRow struct {
	Row
	PayloadHex string `json:"payload_hex"`
	RevivesTo  struct {
		Type string `json:"type"` // "datetime", "date" or "time"
		ISO  string `json:"iso"`
	} `json:"revives_to"`
}

// WireFormat is the part of wire-format.json the wrappers read.
type WireFormat struct {
	TemporalSentinels []TemporalRow `json:"temporal_sentinel_vectors"`
}

// LoadWireFormat reads wire-format.json (skipping when absent).
func LoadWireFormat(t testing.TB, repoRoot string) *WireFormat {
	t.Helper()
	var f WireFormat
	load(t, repoRoot, "wire-format.json", &f)
	if len(f.TemporalSentinels) == 0 {
		t.Fatal("wire-format.json has no temporal_sentinel_vectors rows")
	}
	return &f
}

// BoundsRow is a decode-bounds.json row: its document is repeat_hex x count
// followed by suffix_hex.
type BoundsRow struct {
	Row
	Construction struct {
		RepeatHex string `json:"repeat_hex"`
		Count     int    `json:"count"`
		SuffixHex string `json:"suffix_hex"`
	} `json:"construction"`
	InputLen int `json:"input_len"`
}

// Input builds the row's document (and checks it against input_len).
func (r BoundsRow) Input(t testing.TB) []byte {
	t.Helper()
	rep, err1 := hex.DecodeString(r.Construction.RepeatHex)
	suf, err2 := hex.DecodeString(r.Construction.SuffixHex)
	if err1 != nil || err2 != nil || r.Construction.Count < 0 {
		t.Fatalf("decode-bounds.json %s: bad construction", r.Name)
	}
	in := append(bytes.Repeat(rep, r.Construction.Count), suf...)
	if len(in) != r.InputLen {
		t.Fatalf("decode-bounds.json %s: built %d bytes, input_len says %d", r.Name, len(in), r.InputLen)
	}
	return in
}

// DecodeBounds is decode-bounds.json.
type DecodeBounds struct {
	Reject []BoundsRow `json:"reject_vectors"`
	Accept []BoundsRow `json:"accept_vectors"`
}

// LoadDecodeBounds reads decode-bounds.json (skipping when absent).
func LoadDecodeBounds(t testing.TB, repoRoot string) *DecodeBounds {
	t.Helper()
	var f DecodeBounds
	load(t, repoRoot, "decode-bounds.json", &f)
	if len(f.Reject) == 0 || len(f.Accept) == 0 {
		t.Fatal("decode-bounds.json has no reject_vectors or accept_vectors rows")
	}
	return &f
}

func load(t testing.TB, repoRoot, name string, into any) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(Dir(t, repoRoot), name))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, into); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
}

// readerErrorNames maps the prose of a reader_reject_vectors row's error to
// the status name every wrapper reports for it (codec-tool.md's names).
var readerErrorNames = []struct{ phrase, name string }{
	{"trailing bytes", "TrailingBytes"},
	{"truncated", "Truncated"},
	{"depth", "DepthExceeded"},
	{"overclaim", "Overclaim"},
}

// WantError is the status name the row's error describes; a row whose
// error this table does not know fails the test, so a new kind of reject
// vector is noticed rather than passed on any error.
func (r ReaderRow) WantError(t testing.TB) string {
	t.Helper()
	text := strings.ToLower(r.Error)
	for _, e := range readerErrorNames {
		if strings.Contains(text, e.phrase) {
			return e.name
		}
	}
	t.Fatalf("reader_reject_vectors/%s: no status known for its error %q", r.Name, r.Error)
	return ""
}
