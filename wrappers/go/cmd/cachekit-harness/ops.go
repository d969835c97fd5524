package main

import (
	"encoding/hex"
	"encoding/json"

	cachekit "github.com/libcachekit/libcachekit/wrappers/go"
	"github.com/libcachekit/libcachekit/wrappers/go/internal/taggedjson"
)

// keyNames reads the two names every key request carries.
func keyNames(req request) (ns, op string, err error) {
	if ns, err = str(req, "namespace"); err != nil {
		return "", "", err
	}
	if op, err = str(req, "operation"); err != nil {
		return "", "", err
	}
	return ns, op, nil
}

// keyTyped builds the interop key of typed arguments as a Go caller's
// values, through the public key builder Wrap uses (cachekit.Key).
func keyTyped(req request) (map[string]any, error) {
	ns, op, err := keyNames(req)
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
	key, err := cachekit.Key(ns, op, list...)
	if err != nil {
		return nil, err
	}
	return map[string]any{"key": key}, nil
}

// valueEncode is the canonical MessagePack stored for a value, through the
// serializer Wrap uses (cachekit.EncodeValue).
func valueEncode(req request) (map[string]any, error) {
	v, err := typed(req, "value_json")
	if err != nil {
		return nil, err
	}
	canon, err := cachekit.EncodeValue(v)
	if err != nil {
		return nil, err
	}
	return map[string]any{"data": hex.EncodeToString(canon)}, nil
}

// valueDecode reads a stored value the way a Go reader does: the bounded
// check, then the decoder Wrap uses (cachekit.DecodeValue into an interface).
func valueDecode(req request) (map[string]any, error) {
	data, err := hexField(req, "data")
	if err != nil {
		return nil, err
	}
	if err := cachekit.CheckValue(data); err != nil {
		return nil, err
	}
	var v any
	if err := cachekit.DecodeValue(data, &v); err != nil {
		return nil, err
	}
	j, err := taggedjson.FromGo(v)
	if err != nil {
		return nil, err
	}
	return map[string]any{"value_json": j}, nil
}

func keyInterop(req request) (map[string]any, error) {
	ns, op, err := keyNames(req)
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
