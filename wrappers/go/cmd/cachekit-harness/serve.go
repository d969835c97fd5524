package main

import (
	"bufio"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	cachekit "github.com/libcachekit/libcachekit/wrappers/go"
	"github.com/libcachekit/libcachekit/wrappers/go/internal/taggedjson"
)

// request is one line; fields are read by op.
type request map[string]json.RawMessage

// failure is an error reply: the codec-tool error name and a message.
type failure struct{ name, message string }

func (f *failure) Error() string { return f.name + ": " + f.message }

func badRequest(format string, args ...any) error {
	return &failure{"BadRequest", fmt.Sprintf(format, args...)}
}

// serve answers every line of in on out; it never stops before EOF.
func serve(in io.Reader, out io.Writer) {
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 1<<20), 1<<30)
	w := bufio.NewWriter(out)
	for sc.Scan() {
		line := sc.Bytes()
		if len(line) == 0 {
			continue
		}
		reply := answer(line)
		data, err := json.Marshal(reply)
		if err != nil {
			data, _ = json.Marshal(map[string]any{"ok": false, "error": "BadRequest", "message": err.Error()})
		}
		w.Write(data)
		w.WriteByte('\n')
		w.Flush()
	}
}

func answer(line []byte) (reply map[string]any) {
	var req request
	id := json.RawMessage(nil)
	defer func() {
		if r := recover(); r != nil { // never crash: a bug becomes a reply
			reply = map[string]any{"ok": false, "error": "Internal", "message": fmt.Sprint(r)}
		}
		if id != nil {
			reply["id"] = id
		}
	}()
	if err := json.Unmarshal(line, &req); err != nil {
		return fail(badRequest("not a JSON object: %v", err))
	}
	id = req["id"]
	var op string
	if err := json.Unmarshal(req["op"], &op); err != nil {
		return fail(badRequest("missing or non-string op"))
	}
	res, err := dispatch(op, req)
	if err != nil {
		return fail(err)
	}
	res["ok"] = true
	return res
}

func fail(err error) map[string]any {
	name, msg := "InvalidArgument", err.Error()
	var f *failure
	var ce *cachekit.Error
	var te *taggedjson.Error
	switch {
	case errors.As(err, &f):
		name, msg = f.name, f.message
	case errors.As(err, &ce):
		name, msg = ce.Name, ce.Message
	case errors.As(err, &te):
		name, msg = te.Name, te.Message
	}
	return map[string]any{"ok": false, "error": name, "message": msg}
}

func str(req request, field string) (string, error) {
	var s string
	if err := json.Unmarshal(req[field], &s); err != nil {
		return "", badRequest("field %q must be a string", field)
	}
	return s, nil
}

func hexField(req request, field string) ([]byte, error) {
	s, err := str(req, field)
	if err != nil {
		return nil, err
	}
	b, err := hex.DecodeString(s)
	if err != nil {
		return nil, badRequest("field %q is not hex", field)
	}
	return b, nil
}

func typed(req request, field string) (any, error) {
	raw, ok := req[field]
	if !ok {
		return nil, badRequest("missing field %q", field)
	}
	v, err := taggedjson.Decode(raw)
	if err != nil {
		return nil, badRequest("field %q: %v", field, err)
	}
	return taggedjson.ToGo(v)
}

func dispatch(op string, req request) (map[string]any, error) {
	switch op {
	case "key.interop.typed":
		return keyTyped(req)
	case "value.encode":
		return valueEncode(req)
	case "value.decode":
		return valueDecode(req)
	case "key.interop":
		return keyInterop(req)
	case "envelope.unwrap":
		return envelopeUnwrap(req)
	case "crypto.decrypt":
		return cryptoDecrypt(req)
	}
	return nil, badRequest("unknown op %q", op)
}
