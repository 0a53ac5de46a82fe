package copies_test

import (
	"bytes"
	"flag"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

var update = flag.Bool("update", false, "copy the originals into sdk/*/copied_test.go again")

// The module's root (sdk/) and the kit's (the repository's), from this
// package's directory.
const (
	moduleDir = "../.."
	kitDir    = "../../.."
)

// A decl is one top-level declaration of a file, other than an import.
type decl struct {
	key  string // its name; Type.Method for a method; the first name of a group
	text []byte // its source, doc comment included
	file string // the file's base name
	off  int    // where it starts in the file
}

// decls parses a Go file and returns its package name, its declarations
// and the offset at which the first one starts.
func decls(t *testing.T, path string) (pkg string, ds []decl, start int) {
	t.Helper()
	src, err := os.ReadFile(path)
	require.NoError(t, err)
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, src, parser.ParseComments)
	require.NoError(t, err)
	start = len(src)
	for _, d := range f.Decls {
		if g, ok := d.(*ast.GenDecl); ok && g.Tok == token.IMPORT {
			continue
		}
		from, key := d.Pos(), ""
		switch d := d.(type) {
		case *ast.FuncDecl:
			if d.Doc != nil {
				from = d.Doc.Pos()
			}
			key = d.Name.Name
			if d.Recv != nil {
				recv := d.Recv.List[0].Type
				if star, ok := recv.(*ast.StarExpr); ok {
					recv = star.X
				}
				if index, ok := recv.(*ast.IndexExpr); ok {
					recv = index.X
				}
				key = recv.(*ast.Ident).Name + "." + key
			}
		case *ast.GenDecl:
			if d.Doc != nil {
				from = d.Doc.Pos()
			}
			switch s := d.Specs[0].(type) {
			case *ast.TypeSpec:
				key = s.Name.Name
			case *ast.ValueSpec:
				key = s.Names[0].Name
			}
		}
		off := fset.Position(from).Offset
		start = min(start, off)
		ds = append(ds, decl{key: key, text: src[off:fset.Position(d.End()).Offset], file: filepath.Base(path), off: off})
	}
	return f.Name.Name, ds, start
}

// TestCopiesAreTheSameAsTheirOriginals checks every sdk/X/copied_test.go
// against the tests of package X of the kit.
func TestCopiesAreTheSameAsTheirOriginals(t *testing.T) {
	copies, err := filepath.Glob(filepath.Join(moduleDir, "*", "copied_test.go"))
	require.NoError(t, err)
	require.NotEmpty(t, copies)
	for _, path := range copies {
		name := filepath.Base(filepath.Dir(path))
		shown := filepath.Join("sdk", name, "copied_test.go") // path, from the repository's root
		t.Run(name, func(t *testing.T) {
			pkg, copied, start := decls(t, path)
			require.NotEmpty(t, copied, "%s copies nothing", shown)
			sources, err := filepath.Glob(filepath.Join(kitDir, name, "*_test.go"))
			require.NoError(t, err)
			originals := map[string]decl{}
			for _, src := range sources {
				srcPkg, ds, _ := decls(t, src)
				if srcPkg != pkg {
					continue
				}
				for _, d := range ds {
					originals[d.key] = d
				}
			}
			if *update {
				rewrite(t, path, start, copied, originals)
				return
			}
			for _, c := range copied {
				o, ok := originals[c.key]
				if !ok {
					t.Errorf("%s: %s is not declared in %s/*_test.go any more", shown, c.key, name)
					continue
				}
				if !bytes.Equal(c.text, o.text) {
					t.Errorf("%s: %s differs from its original in %s/%s (go test ./sdk/internal/copies -update copies it again):\n%s",
						shown, c.key, name, o.file, o.text)
				}
			}
		})
	}
}

// rewrite writes path again: what comes before its first declaration
// (package clause, comment, imports), then the original of each of its
// declarations, in the order of the originals' files and places.
func rewrite(t *testing.T, path string, start int, copied []decl, originals map[string]decl) {
	t.Helper()
	src, err := os.ReadFile(path)
	require.NoError(t, err)
	var ds []decl
	for _, c := range copied {
		o, ok := originals[c.key]
		require.True(t, ok, "%s: %s is not declared in the original package any more", path, c.key)
		ds = append(ds, o)
	}
	slices.SortFunc(ds, func(a, b decl) int {
		if c := strings.Compare(a.file, b.file); c != 0 {
			return c
		}
		return a.off - b.off
	})
	var out bytes.Buffer
	out.Write(bytes.TrimRight(src[:start], "\n"))
	for _, d := range ds {
		out.WriteString("\n\n")
		out.Write(d.text)
	}
	out.WriteString("\n")
	require.NoError(t, os.WriteFile(path, out.Bytes(), 0o644))
}
