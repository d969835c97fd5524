// Command modzip publishes a module directory into a GOPROXY=file:// tree
// the way a Go module proxy serves it: golang.org/x/mod/zip makes the zip
// (the rules `go mod download` checks: no symlinks, no files of nested
// modules, size limits), next to the .mod, .info and list files.
//
//	modzip MODULE_DIR MODULE_PATH VERSION PROXY_DIR
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"golang.org/x/mod/module"
	"golang.org/x/mod/zip"
)

func main() {
	if len(os.Args) != 5 {
		fmt.Fprintln(os.Stderr, "usage: modzip MODULE_DIR MODULE_PATH VERSION PROXY_DIR")
		os.Exit(2)
	}
	if err := publish(os.Args[1], module.Version{Path: os.Args[2], Version: os.Args[3]}, os.Args[4]); err != nil {
		fmt.Fprintln(os.Stderr, "modzip:", err)
		os.Exit(1)
	}
}

func publish(dir string, mv module.Version, proxy string) error {
	escaped, err := module.EscapePath(mv.Path)
	if err != nil {
		return err
	}
	at := filepath.Join(proxy, filepath.FromSlash(escaped), "@v")
	if err := os.MkdirAll(at, 0o755); err != nil {
		return err
	}
	zf, err := os.Create(filepath.Join(at, mv.Version+".zip"))
	if err != nil {
		return err
	}
	if err := zip.CreateFromDir(zf, mv, dir); err != nil {
		zf.Close()
		return err
	}
	if err := zf.Close(); err != nil {
		return err
	}
	gomod, err := os.ReadFile(filepath.Join(dir, "go.mod"))
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(at, mv.Version+".mod"), gomod, 0o644); err != nil {
		return err
	}
	info, _ := json.Marshal(struct {
		Version string
		Time    time.Time
	}{mv.Version, time.Now().UTC().Truncate(time.Second)})
	if err := os.WriteFile(filepath.Join(at, mv.Version+".info"), info, 0o644); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(at, "list"), []byte(mv.Version+"\n"), 0o644)
}
