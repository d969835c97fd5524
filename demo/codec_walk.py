#!/usr/bin/env python3
"""The demo, last part: one cached value's trip through libcachekit's codec, driven via
`cachekit codec` (JSON lines) and `cachekit inspect`, printed step by step."""

import json
import subprocess
import sys

import msgpack

tool = sys.argv[1]
proc = subprocess.Popen([tool, "codec"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)


def call(**request):
    proc.stdin.write(json.dumps(request) + "\n")
    proc.stdin.flush()
    response = json.loads(proc.stdout.readline())
    if not response.get("ok"):
        raise SystemExit(f"demo: {request['op']} failed: {response}")
    return response


value = {"user_id": 42, "name": "cachekit", "active": True}
packed = msgpack.packb(value, use_bin_type=True)
print("value:", value)

auto = call(op="key.auto", namespace="demo", module="__main__", qualname="get_user",
            args=msgpack.packb([[42], {}], use_bin_type=True).hex(), integrity=True, serializer="s")
print("auto-mode key (reference Python SDK):", auto["key"])
interop = call(op="key.interop", namespace="users", operation="get_user", args=msgpack.packb([42]).hex())
print("interop/v1 key (every SDK):         ", interop["key"])

env = call(op="envelope.wrap", data=packed.hex(), format="msgpack")
print(f"ByteStorage envelope: {len(packed)} B of MessagePack -> {len(env['envelope']) // 2} B")
meta = {"format": "msgpack", "encoding": "utf-8", "compressed": True, "original_type": "msgpack"}
frame = call(op="frame.encode", serializer="default", metadata=meta, payload=env["envelope"])
print(f"CK v3 frame (what the reference SDK stores): {len(frame['frame']) // 2} B")

back = call(op="frame.decode", frame=frame["frame"])
inner = call(op="envelope.unwrap", envelope=back["payload"])
print("read back:", msgpack.unpackb(bytes.fromhex(inner["data"]), raw=False))

master = "61" * 32
keys = call(op="crypto.derive", master_key=master, tenant="default")
aad = call(op="crypto.aad", tenant="default", cache_key=interop["key"], format="msgpack", compressed=False)
sealed = call(op="crypto.encrypt", master_key=master, tenant="default", aad=aad["aad"], plaintext=packed.hex())
opened = call(op="crypto.decrypt", master_key=master, tenant="default", aad=aad["aad"], ciphertext=sealed["ciphertext"])
print(f"AES-256-GCM (key fingerprint {keys['fingerprint']}): {len(sealed['ciphertext']) // 2} B sealed, "
      f"opened with key #{opened['key_index']}: {msgpack.unpackb(bytes.fromhex(opened['plaintext']))}")
proc.stdin.close()
proc.wait()

print("\ncachekit inspect of the stored frame:")
subprocess.run([tool, "inspect", "--hex", frame["frame"]], check=True)
print("\ndemo: ok")
