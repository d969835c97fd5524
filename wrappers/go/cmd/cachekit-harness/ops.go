package main

import (
	"bytes"
	"encoding/hex"
	"encoding/json"

	cachekit "github.com/libcachekit/libcachekit/wrappers/go"
	"github.com/libcachekit/libcachekit/wrappers/go/internal/taggedjson"
	"github.com/vmihailenco/msgpack/v5"
	"github.com/vmihailenco/msgpack/v5/msgpcode"
)

// keyTyped builds the interop key of typed arguments as a Go caller's
// values: MessagePack of the argument array, then the core's key.
func keyTyped(req request) (map[string]any, error) {
	ns, err := str(req, "namespace")
	if err != nil {
		return nil, err
	}
	op, err := str(req, "operation")
	if err != nil {
		return nil, err
	}
	args, err := typed(req, "args_json")
	if err != nil {
		return nil, err
	}
	list, ok := args.([]any)
	if !ok {
		return nil, badRequest("args_json must be an array")
	}
	packed, err := msgpack.Marshal(list)
	if err != nil {
		return nil, &failure{"UnsupportedType", err.Error()}
	}
	key, err := cachekit.InteropKey(ns, op, packed)
	if err != nil {
		return nil, err
	}
	return map[string]any{"key": key}, nil
}

// valueEncode is the canonical MessagePack stored for a value.
func valueEncode(req request) (map[string]any, error) {
	v, err := typed(req, "value_json")
	if err != nil {
		return nil, err
	}
	packed, err := msgpack.Marshal(v)
	if err != nil {
		return nil, &failure{"UnsupportedType", err.Error()}
	}
	canon, err := cachekit.CanonicalValue(packed)
	if err != nil {
		return nil, err
	}
	return map[string]any{"data": hex.EncodeToString(canon)}, nil
}

// valueDecode reads a stored value the way a Go reader does: the bounded
// check, then the MessagePack decoder into Go values.
func valueDecode(req request) (map[string]any, error) {
	data, err := hexField(req, "data")
	if err != nil {
		return nil, err
	}
	if err := cachekit.CheckValue(data); err != nil {
		return nil, err
	}
	dec := msgpack.NewDecoder(bytes.NewReader(data))
	dec.UseLooseInterfaceDecoding(true)
	v, err := decodeAny(dec)
	if err != nil {
		return nil, &failure{"DeserializationFailed", err.Error()}
	}
	j, err := taggedjson.FromGo(v)
	if err != nil {
		return nil, err
	}
	return map[string]any{"value_json": j}, nil
}

// extValue is an application ext type: kept, not interpreted.
type extValue struct {
	id   int8
	data []byte
}

// decodeAny decodes any document a reader must accept: maps with
// non-string keys and ext types other than the timestamp included.
func decodeAny(dec *msgpack.Decoder) (any, error) {
	c, err := dec.PeekCode()
	if err != nil {
		return nil, err
	}
	switch {
	case msgpcode.IsFixedArray(c) || c == msgpcode.Array16 || c == msgpcode.Array32:
		n, err := dec.DecodeArrayLen()
		if err != nil {
			return nil, err
		}
		out := make([]any, n)
		for i := range out {
			if out[i], err = decodeAny(dec); err != nil {
				return nil, err
			}
		}
		return out, nil
	case msgpcode.IsFixedMap(c) || c == msgpcode.Map16 || c == msgpcode.Map32:
		return decodeAnyMap(dec)
	case msgpcode.IsExt(c):
		raw, err := dec.DecodeRaw()
		if err != nil {
			return nil, err
		}
		inner := msgpack.NewDecoder(bytes.NewReader(raw))
		id, n, err := inner.DecodeExtHeader()
		if err != nil {
			return nil, err
		}
		if id == -1 { // the standard timestamp: time.Time
			return msgpack.NewDecoder(bytes.NewReader(raw)).DecodeTime()
		}
		payload := make([]byte, n)
		if err := inner.ReadFull(payload); err != nil {
			return nil, err
		}
		return extValue{id: id, data: payload}, nil
	}
	return dec.DecodeInterface()
}

// decodeAnyMap keeps maps with non-string keys (a reader must accept them).
func decodeAnyMap(dec *msgpack.Decoder) (any, error) {
	n, err := dec.DecodeMapLen()
	if err != nil || n < 0 {
		return nil, err
	}
	keys := make([]any, n)
	vals := make([]any, n)
	allStrings := true
	for i := 0; i < n; i++ {
		if keys[i], err = decodeAny(dec); err != nil {
			return nil, err
		}
		if _, ok := keys[i].(string); !ok {
			allStrings = false
		}
		if vals[i], err = decodeAny(dec); err != nil {
			return nil, err
		}
	}
	if allStrings {
		m := make(map[string]any, n)
		for i := range keys {
			m[keys[i].(string)] = vals[i]
		}
		return m, nil
	}
	m := make(map[any]any, n)
	for i := range keys {
		m[keys[i]] = vals[i]
	}
	return m, nil
}

func keyInterop(req request) (map[string]any, error) {
	ns, err := str(req, "namespace")
	if err != nil {
		return nil, err
	}
	op, err := str(req, "operation")
	if err != nil {
		return nil, err
	}
	args, err := hexField(req, "args")
	if err != nil {
		return nil, err
	}
	key, err := cachekit.InteropKey(ns, op, args)
	if err != nil {
		return nil, err
	}
	canon, err := cachekit.CanonicalArgs(args)
	if err != nil {
		return nil, err
	}
	return map[string]any{"key": key, "canonical": hex.EncodeToString(canon)}, nil
}

func envelopeUnwrap(req request) (map[string]any, error) {
	env, err := hexField(req, "envelope")
	if err != nil {
		return nil, err
	}
	data, format, err := cachekit.UnwrapEnvelope(env)
	if err != nil {
		return nil, err
	}
	return map[string]any{"data": hex.EncodeToString(data), "format": format}, nil
}

func cryptoDecrypt(req request) (map[string]any, error) {
	aad, err := hexField(req, "aad")
	if err != nil {
		return nil, err
	}
	ct, err := hexField(req, "ciphertext")
	if err != nil {
		return nil, err
	}
	if _, ok := req["key"]; ok {
		key, err := hexField(req, "key")
		if err != nil {
			return nil, err
		}
		pt, err := cachekit.DecryptWithKey(key, aad, ct)
		if err != nil {
			return nil, err
		}
		return map[string]any{"plaintext": hex.EncodeToString(pt), "key_index": 0}, nil
	}
	master, err := str(req, "master_key")
	if err != nil {
		return nil, err
	}
	var previous []string
	if raw, ok := req["previous_keys"]; ok {
		if err := json.Unmarshal(raw, &previous); err != nil {
			return nil, badRequest("previous_keys must be a list of hex strings")
		}
	}
	var tenant string
	if raw, ok := req["tenant"]; ok && string(raw) != "null" {
		if tenant, err = str(req, "tenant"); err != nil {
			return nil, err
		}
	}
	var fp []byte
	if raw, ok := req["fingerprint"]; ok && string(raw) != "null" {
		if fp, err = hexField(req, "fingerprint"); err != nil {
			return nil, err
		}
	}
	kr, err := cachekit.NewKeyring(master, previous...)
	if err != nil {
		return nil, err
	}
	defer kr.Close()
	pt, idx, err := kr.Decrypt(tenant, fp, aad, ct)
	if err != nil {
		return nil, err
	}
	return map[string]any{"plaintext": hex.EncodeToString(pt), "key_index": idx}, nil
}

// Ext lets taggedjson render it as {"$ext": id, "data": hex}.
func (e extValue) Ext() (int8, []byte) { return e.id, e.data }
