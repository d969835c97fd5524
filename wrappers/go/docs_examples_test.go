package cachekit_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// docsGoMd is this module's page in the repository (absent when the module
// is used on its own: the test then skips, saying so).
const docsGoMd = "../../docs/go.md"

// exampleMarker precedes a Go block in docs/go.md that must be, line for
// line, the body of the named Example function of this package's tests (so
// the page's examples are compiled and run by `go test`, output included).
var exampleMarker = regexp.MustCompile("(?m)^<!-- go example: (Example[A-Za-z0-9_]*) -->\n```go\n((?s:.*?))```\n")

func TestDocsExamplesAreExampleFunctions(t *testing.T) {
	page, err := os.ReadFile(docsGoMd)
	if err != nil {
		t.Skipf("docs/go.md not found beside the module (%v)", err)
	}
	bodies := exampleBodies(t)
	shown := exampleMarker.FindAllSubmatch(page, -1)
	if len(shown) == 0 {
		t.Fatal("docs/go.md has no `<!-- go example: ExampleX -->` block")
	}
	for _, m := range shown {
		name, block := string(m[1]), string(m[2])
		body, ok := bodies[name]
		if !ok {
			t.Errorf("docs/go.md shows %s, which is no Example function of the package's tests", name)
			continue
		}
		if block != body {
			t.Errorf("docs/go.md's %s differs from the function's body in %s:\n--- page\n%s--- function\n%s",
				name, docsGoMd, block, body)
		}
	}
}

// exampleBodies maps each Example function of the package's test files to
// its body's source lines, one tab of indentation removed.
func exampleBodies(t *testing.T) map[string]string {
	files, err := filepath.Glob("*_test.go")
	if err != nil {
		t.Fatal(err)
	}
	bodies := map[string]string{}
	fset := token.NewFileSet()
	for _, name := range files {
		src, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		f, err := parser.ParseFile(fset, name, src, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || !strings.HasPrefix(fn.Name.Name, "Example") || fn.Body == nil {
				continue
			}
			inner := string(src[fset.Position(fn.Body.Lbrace).Offset+1 : fset.Position(fn.Body.Rbrace).Offset])
			var b strings.Builder
			for _, line := range strings.Split(strings.Trim(inner, "\n"), "\n") {
				b.WriteString(strings.TrimPrefix(line, "\t") + "\n")
			}
			bodies[fn.Name.Name] = b.String()
		}
	}
	return bodies
}
