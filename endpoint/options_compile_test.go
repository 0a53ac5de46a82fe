package endpoint_test

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
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

const module = "github.com/gatewaykit/gatewaykit/"

// endpointPackages are the packages whose NewHandler takes typed options,
// with the backend type of their NewHandler.
var endpointPackages = []struct{ name, backend string }{
	{"chat", "chat.Backend"},
	{"completions", "completions.Backend"},
	{"responses", "responses.Backend"},
	{"messages", "chat.Backend"},
	{"gemini", "chat.Backend"},
	{"embeddings", "embeddings.Backend"},
	{"moderations", "moderations.Backend"},
	{"rerank", "rerank.Backend"},
	{"images", "images.Backend"},
	{"audio", "audio.Backend"},
}

// The packages that take each shared option: those that the option means
// something to.
var (
	every     = []string{"chat", "completions", "responses", "messages", "gemini", "embeddings", "moderations", "rerank", "images", "audio"}
	streaming = []string{"chat", "completions", "responses", "messages", "gemini"}
	validated = []string{"chat", "completions", "responses", "embeddings", "moderations", "rerank", "images", "audio"}
	stamped   = []string{"chat", "completions", "responses", "images"}
)

// options is every option of the endpoint packages, with the packages that
// take it (the doc comment of each says the same).
var options = []struct {
	expr    string // a call that makes the option
	pkg     string // the package that makes it
	takenBy []string
}{
	{"endpoint.WithLogger(nil)", "endpoint", every},
	{"endpoint.WithMaxRequestBytes(1)", "endpoint", every},
	{"endpoint.WithAllowed(nil)", "endpoint", every},
	{"endpoint.WithErrorHook(nil)", "endpoint", every},
	{"endpoint.WithValidator(nil)", "endpoint", validated},
	{"endpoint.WithKeepAlive(1)", "endpoint", streaming},
	{"endpoint.WithClock(nil)", "endpoint", stamped},
	{"responses.WithStore(nil)", "responses", []string{"responses"}},
	{"responses.WithOwner(nil)", "responses", []string{"responses"}},
	{"images.WithURLKey(nil)", "images", []string{"images"}},
	{"images.WithPublicURL(\"\")", "images", []string{"images"}},
}

// TestOptionsAreTypedPerPackage type-checks small programs against the
// kit's packages: an option compiles with each package that takes it,
// and with no other (not even one of the same module, such as
// responses.WithStore given to chat.NewHandler).
func TestOptionsAreTypedPerPackage(t *testing.T) {
	t.Parallel()
	check := newChecker(t)
	for _, o := range options {
		for _, p := range endpointPackages {
			takes := slices.Contains(o.takenBy, p.name)
			t.Run(fmt.Sprintf("%s/%s", o.expr, p.name), func(t *testing.T) {
				src := program([]string{p.name, o.pkg}, fmt.Sprintf("var _ %s.Option = %s", p.name, o.expr))
				err := check(src)
				if takes {
					require.NoError(t, err, "%s should be a %s.Option", o.expr, p.name)
					return
				}
				require.ErrorContains(t, err, "missing method ApplyTo", "%s should not be a %s.Option", o.expr, p.name)
			})
		}
	}
}

// TestNewHandlerRejectsOptionsOfOtherPackages: the calls of the issue do
// not compile; every package's NewHandler takes all the options that
// apply to it, in one call.
func TestNewHandlerRejectsOptionsOfOtherPackages(t *testing.T) {
	t.Parallel()
	check := newChecker(t)
	for _, tc := range []struct {
		name, call string
		imports    []string
		wantErr    []string // each must be reported
	}{
		{
			name:    "ChatWithOptionsOfResponsesAndImages",
			imports: []string{"chat", "responses", "images"},
			call:    "chat.NewHandler(c, b, responses.WithStore(nil), images.WithURLKey(nil))",
			wantErr: []string{"responses.WithStore(nil) (value of interface type responses.Option) as chat.Option value", "missing method ApplyToChat"},
		},
		{
			name:    "EmbeddingsWithKeepAlive",
			imports: []string{"embeddings", "endpoint"},
			call:    "embeddings.NewHandler(c, b, endpoint.WithKeepAlive(time.Second))",
			wantErr: []string{"endpoint.WithKeepAlive(time.Second) (value of struct type endpoint.StreamOption) as embeddings.Option value", "missing method ApplyToEmbeddings"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := program(append(tc.imports, "models", "time"), "var c models.Catalog\nvar b chat.Backend\nvar _ = "+tc.call+"\nvar _ = time.Second")
			err := check(src)
			require.Error(t, err)
			for _, want := range tc.wantErr {
				require.ErrorContains(t, err, want)
			}
		})
	}
	for _, p := range endpointPackages {
		t.Run("AllOptionsOf/"+p.name, func(t *testing.T) {
			var args []string
			imports := []string{p.name, "models", strings.Split(p.backend, ".")[0]}
			for _, o := range options {
				if slices.Contains(o.takenBy, p.name) {
					args = append(args, o.expr)
					imports = append(imports, o.pkg)
				}
			}
			src := program(imports, fmt.Sprintf("var c models.Catalog\nvar b %s\nvar _ = %s.NewHandler(c, b, %s)", p.backend, p.name, strings.Join(args, ", ")))
			require.NoError(t, check(src))
		})
	}
}

// program returns the source of a package that imports pkgs (the kit's
// packages by name, or the standard library's time) and declares decls.
func program(pkgs []string, decls string) string {
	var b strings.Builder
	b.WriteString("package p\n\nimport (\n")
	slices.Sort(pkgs)
	for _, p := range slices.Compact(pkgs) {
		if p == "time" {
			b.WriteString("\t\"time\"\n")
			continue
		}
		fmt.Fprintf(&b, "\t%q\n", module+p)
	}
	b.WriteString(")\n\n" + decls + "\n")
	return b.String()
}

// exportData lists the files of export data of the kit's endpoint
// packages and their dependencies, as the go command compiles them (go
// list -export: from the build cache, without network), by import path.
var exportData = sync.OnceValues(func() (map[string]string, error) {
	args := []string{"list", "-export", "-deps", "-f", "{{.ImportPath}}\t{{.Export}}", module + "models", module + "endpoint"}
	for _, p := range endpointPackages {
		args = append(args, module+p.name)
	}
	// go test puts the go command of its toolchain first on the PATH.
	cmd := exec.Command("go", args...)
	cmd.Env = append(os.Environ(), "GOPROXY=off")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go list -export: %w: %s", err, stderr.String())
	}
	files := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		if path, file, ok := strings.Cut(sc.Text(), "\t"); ok && file != "" {
			files[path] = file
		}
	}
	return files, sc.Err()
})

// newChecker returns a function that type-checks the source of one file
// against the kit's packages and returns its type errors joined in one
// error, or nil. The function is not safe for concurrent use.
func newChecker(t *testing.T) func(src string) error {
	t.Helper()
	files, err := exportData()
	require.NoError(t, err)
	fset := token.NewFileSet()
	imp := importer.ForCompiler(fset, "gc", func(path string) (io.ReadCloser, error) {
		file, ok := files[path]
		if !ok {
			return nil, fmt.Errorf("no export data for %q", path)
		}
		return os.Open(file)
	})
	return func(src string) error {
		f, err := parser.ParseFile(fset, "p.go", src, 0)
		if err != nil {
			return err
		}
		var errs []string
		conf := types.Config{Importer: imp, Error: func(err error) { errs = append(errs, err.Error()) }}
		_, _ = conf.Check("p", fset, []*ast.File{f}, nil)
		if len(errs) > 0 {
			return errors.New(strings.Join(errs, "\n"))
		}
		return nil
	}
}
