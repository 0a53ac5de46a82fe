// Package typecheck type-checks small programs against the kit's
// packages, for the tests that show what does not compile (an option of
// one package given to another's constructor): the packages are the
// go command's compilation of them (go list -export, from the build
// cache, without network), and the programs are checked with go/types.
package typecheck

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// Module is the kit's module path, ending in a slash.
const Module = "github.com/gatewaykit/gatewaykit/"

// A Checker type-checks the source of one file against the kit's
// packages. It is not safe for concurrent use.
type Checker struct {
	fset *token.FileSet
	imp  types.Importer
}

// New returns a Checker of programs that import the kit's packages pkgs
// (by path in the module, such as "chat") and the packages they import;
// it fails t if the go command cannot compile them. The test should
// import pkgs itself (a blank import will do), so that a change to them
// invalidates its cached result.
func New(t testing.TB, pkgs ...string) *Checker {
	t.Helper()
	args := []string{"list", "-export", "-deps", "-f", "{{.ImportPath}}\t{{.Export}}"}
	for _, p := range pkgs {
		args = append(args, Module+p)
	}
	// go test puts the go command of its toolchain first on the PATH.
	cmd := exec.Command("go", args...)
	cmd.Env = append(os.Environ(), "GOPROXY=off")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	require.NoError(t, err, "go list -export: %s", stderr.String())
	files := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		if path, file, ok := strings.Cut(sc.Text(), "\t"); ok && file != "" {
			files[path] = file
		}
	}
	require.NoError(t, sc.Err())
	fset := token.NewFileSet()
	return &Checker{fset: fset, imp: importer.ForCompiler(fset, "gc", func(path string) (io.ReadCloser, error) {
		file, ok := files[path]
		if !ok {
			return nil, fmt.Errorf("typecheck: no export data for %q", path)
		}
		return os.Open(file)
	})}
}

// Check type-checks src, the source of one file, and returns its errors
// joined in one, or nil.
func (c *Checker) Check(src string) error {
	f, err := parser.ParseFile(c.fset, "p.go", src, 0)
	if err != nil {
		return err
	}
	var errs []string
	conf := types.Config{Importer: c.imp, Error: func(err error) { errs = append(errs, err.Error()) }}
	_, _ = conf.Check("p", c.fset, []*ast.File{f}, nil)
	if len(errs) > 0 {
		return errors.New(strings.Join(errs, "\n"))
	}
	return nil
}

// Program returns the source of a package that imports the kit's
// packages kit (by path in the module, such as "chat") and the standard
// library's std, and declares decls.
func Program(kit, std []string, decls string) string {
	var b strings.Builder
	b.WriteString("package p\n\nimport (\n")
	for _, p := range sorted(std) {
		fmt.Fprintf(&b, "\t%q\n", p)
	}
	for _, p := range sorted(kit) {
		fmt.Fprintf(&b, "\t%q\n", Module+p)
	}
	b.WriteString(")\n\n" + decls + "\n")
	return b.String()
}

func sorted(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return slices.Compact(s)
}
