package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/libcachekit/libcachekit/wrappers/go/internal/taggedjson"
	"github.com/libcachekit/libcachekit/wrappers/go/internal/vectors"
)

// call sends requests through serve, as the harness program would get
// them on standard input, and returns one decoded reply per request.
func call(t *testing.T, reqs []map[string]any) []map[string]json.RawMessage {
	t.Helper()
	var in bytes.Buffer
	for _, r := range reqs {
		line, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		in.Write(line)
		in.WriteByte('\n')
	}
	var out bytes.Buffer
	serve(&in, &out)
	var replies []map[string]json.RawMessage
	sc := bufio.NewScanner(&out)
	sc.Buffer(make([]byte, 1<<20), 1<<26)
	for sc.Scan() {
		var r map[string]json.RawMessage
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("reply %q: %v", sc.Text(), err)
		}
		replies = append(replies, r)
	}
	if len(replies) != len(reqs) {
		t.Fatalf("%d replies to %d requests", len(replies), len(reqs))
	}
	return replies
}

func field(r map[string]json.RawMessage, name string) string {
	var s string
	json.Unmarshal(r[name], &s)
	return s
}

func ok(r map[string]json.RawMessage) bool { return string(r["ok"]) == "true" }

// Every typed row of interop-mode.json through the harness: keys, values
// (encode and decode), error rows, reader rows and the encryption row.
func TestHarnessAnswersEveryTypedRow(t *testing.T) {
	f := vectors.LoadInteropMode(t, "../../../..")
	type check struct {
		name string
		req  map[string]any
		test func(t *testing.T, r map[string]json.RawMessage)
	}
	var checks []check
	for _, row := range f.KeyVectors {
		row := row
		checks = append(checks, check{"key_vectors/" + row.Name,
			map[string]any{"op": "key.interop.typed", "namespace": row.Namespace, "operation": row.Operation,
				"args_json": row.Args},
			func(t *testing.T, r map[string]json.RawMessage) {
				if !ok(r) || field(r, "key") != row.ExpectedKey {
					t.Errorf("reply %s, want key %s", r["key"], row.ExpectedKey)
				}
			}})
		checks = append(checks, check{"key_vectors/" + row.Name + "/untyped",
			map[string]any{"op": "key.interop", "namespace": row.Namespace, "operation": row.Operation,
				"args": row.CanonicalArgsHex},
			func(t *testing.T, r map[string]json.RawMessage) {
				if !ok(r) || field(r, "key") != row.ExpectedKey || field(r, "canonical") != row.CanonicalArgsHex {
					t.Errorf("reply %v", r)
				}
			}})
	}
	for _, row := range f.ValueVectors {
		row := row
		checks = append(checks, check{"value_vectors/" + row.Name + "/encode",
			map[string]any{"op": "value.encode", "value_json": row.Value},
			func(t *testing.T, r map[string]json.RawMessage) {
				if !ok(r) || field(r, "data") != row.CanonicalHex {
					t.Errorf("reply %v, want data %s", r, row.CanonicalHex)
				}
			}})
		checks = append(checks, check{"value_vectors/" + row.Name + "/decode",
			map[string]any{"op": "value.decode", "data": row.CanonicalHex},
			func(t *testing.T, r map[string]json.RawMessage) {
				got, _ := taggedjson.Decode(r["value_json"])
				want, _ := taggedjson.Decode(row.Value)
				if !ok(r) || !taggedjson.Equal(got, want) {
					t.Errorf("reply %s, want %s", r["value_json"], row.Value)
				}
			}})
	}
	for _, row := range f.ErrorVectors {
		row := row
		ns, op, args := row.Request()
		req := map[string]any{"op": "key.interop.typed", "namespace": ns, "operation": op, "args_json": args}
		checks = append(checks, check{"error_vectors/" + row.Name, req,
			func(t *testing.T, r map[string]json.RawMessage) {
				name := field(r, "error")
				if ok(r) || name == "" || name == "BadRequest" || name == "Internal" || field(r, "message") == "" {
					t.Errorf("reply %v, want a named refusal", r)
				}
			}})
	}
	for _, row := range f.ReaderAccept {
		row := row
		checks = append(checks, check{"reader_accept_vectors/" + row.Name,
			map[string]any{"op": "value.decode", "data": row.InputHex},
			func(t *testing.T, r map[string]json.RawMessage) {
				if !ok(r) {
					t.Errorf("reply %v", r)
					return
				}
				if len(row.Value) > 0 && string(row.Value) != "null" {
					got, _ := taggedjson.Decode(r["value_json"])
					want, _ := taggedjson.Decode(row.Value)
					if !taggedjson.Equal(got, want) {
						t.Errorf("decoded %s, want %s", r["value_json"], row.Value)
					}
				}
			}})
	}
	for _, row := range f.ReaderReject {
		row := row
		want := row.WantError(t)
		checks = append(checks, check{"reader_reject_vectors/" + row.Name,
			map[string]any{"op": "value.decode", "data": row.InputHex},
			func(t *testing.T, r map[string]json.RawMessage) {
				if ok(r) || field(r, "error") != want {
					t.Errorf("reply %v, want the error %s (the row's error: %q)", r, want, row.Error)
				}
			}})
	}
	for _, row := range f.Encryption {
		row := row
		checks = append(checks, check{"encryption_vectors/" + row.Name,
			map[string]any{"op": "crypto.decrypt", "master_key": row.MasterKeyHex, "tenant": row.TenantID,
				"aad": row.AADHex, "ciphertext": row.CiphertextHex},
			func(t *testing.T, r map[string]json.RawMessage) {
				if !ok(r) || field(r, "plaintext") != row.PlaintextHex || string(r["key_index"]) != "0" {
					t.Errorf("reply %v", r)
				}
			}})
	}
	reqs := make([]map[string]any, len(checks))
	for i, c := range checks {
		reqs[i] = c.req
		reqs[i]["id"] = i
	}
	replies := call(t, reqs)
	for i, c := range checks {
		t.Run(c.name, func(t *testing.T) {
			if string(replies[i]["id"]) != jsonInt(i) {
				t.Fatalf("reply %d has id %s", i, replies[i]["id"])
			}
			c.test(t, replies[i])
		})
	}
}

func jsonInt(i int) string { b, _ := json.Marshal(i); return string(b) }

// Bad lines get BadRequest and the next line is still answered.
func TestHarnessSurvivesBadLines(t *testing.T) {
	var out bytes.Buffer
	serve(strings.NewReader("garbage\n{\"op\":\"nope\"}\n{\"op\":\"value.decode\",\"data\":\"zz\"}\n"+
		"{\"op\":\"value.encode\",\"value_json\":1}\n"), &out)
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 4 {
		t.Fatalf("%d replies: %q", len(lines), out.String())
	}
	for i := 0; i < 3; i++ {
		if !strings.Contains(lines[i], `"error":"BadRequest"`) {
			t.Errorf("line %d: %s", i, lines[i])
		}
	}
	if !strings.Contains(lines[3], `"data":"01"`) {
		t.Errorf("the line after the bad ones: %s", lines[3])
	}
}
