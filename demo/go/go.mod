module github.com/libcachekit/libcachekit/demo/go

go 1.22

replace github.com/libcachekit/libcachekit/wrappers/go => ../../wrappers/go

require github.com/libcachekit/libcachekit/wrappers/go v0.0.0-00010101000000-000000000000

require (
	github.com/vmihailenco/msgpack/v5 v5.4.1 // indirect
	github.com/vmihailenco/tagparser/v2 v2.0.0 // indirect
)
