module github.com/libcachekit/libcachekit/tests/packaging/go_module/modzip

go 1.22

require golang.org/x/mod v0.20.0
