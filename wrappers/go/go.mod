module github.com/libcachekit/libcachekit/wrappers/go

go 1.22
