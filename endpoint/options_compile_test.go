package endpoint_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/internal/typecheck"

	// The packages checked: imported so that a change to one of them
	// invalidates the cached result of the test (go list -export, which
	// the test runs, is outside the go command's view).
	_ "github.com/gatewaykit/gatewaykit/audio"
	_ "github.com/gatewaykit/gatewaykit/chat"
	_ "github.com/gatewaykit/gatewaykit/completions"
	_ "github.com/gatewaykit/gatewaykit/embeddings"
	_ "github.com/gatewaykit/gatewaykit/gemini"
	_ "github.com/gatewaykit/gatewaykit/images"
	_ "github.com/gatewaykit/gatewaykit/messages"
	_ "github.com/gatewaykit/gatewaykit/models"
	_ "github.com/gatewaykit/gatewaykit/moderations"
	_ "github.com/gatewaykit/gatewaykit/rerank"
	_ "github.com/gatewaykit/gatewaykit/responses"
)

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

// newChecker returns a checker of programs that use the endpoint
// packages.
func newChecker(t *testing.T) *typecheck.Checker {
	pkgs := []string{"endpoint", "models"}
	for _, p := range endpointPackages {
		pkgs = append(pkgs, p.name)
	}
	return typecheck.New(t, pkgs...)
}

// TestOptionsAreTypedPerPackage type-checks small programs against the
// kit's packages: an option compiles with each package that takes it,
// and with no other (not even one of the same module, such as
// responses.WithStore given to chat.NewHandler).
func TestOptionsAreTypedPerPackage(t *testing.T) {
	t.Parallel()
	c := newChecker(t)
	for _, o := range options {
		for _, p := range endpointPackages {
			takes := slices.Contains(o.takenBy, p.name)
			t.Run(fmt.Sprintf("%s/%s", o.expr, p.name), func(t *testing.T) {
				src := typecheck.Program([]string{p.name, o.pkg}, nil, fmt.Sprintf("var _ %s.Option = %s", p.name, o.expr))
				err := c.Check(src)
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
	c := newChecker(t)
	for _, tc := range []struct {
		name, backend, call string
		imports             []string
		wantErr             []string // each must be reported, and no other error
	}{
		{
			name:    "ChatWithOptionsOfResponsesAndImages",
			backend: "chat.Backend",
			imports: []string{"chat", "responses", "images"},
			call:    "chat.NewHandler(c, b, responses.WithStore(nil), images.WithURLKey(nil))",
			wantErr: []string{
				"cannot use responses.WithStore(nil) (value of interface type responses.Option) as chat.Option value in argument to chat.NewHandler: responses.Option does not implement chat.Option (missing method ApplyToChat)",
				"cannot use images.WithURLKey(nil) (value of interface type images.Option) as chat.Option value in argument to chat.NewHandler: images.Option does not implement chat.Option (missing method ApplyToChat)",
			},
		},
		{
			name:    "EmbeddingsWithKeepAlive",
			backend: "embeddings.Backend",
			imports: []string{"embeddings", "endpoint"},
			call:    "embeddings.NewHandler(c, b, endpoint.WithKeepAlive(time.Second))",
			wantErr: []string{
				"cannot use endpoint.WithKeepAlive(time.Second) (value of struct type endpoint.StreamOption) as embeddings.Option value in argument to embeddings.NewHandler: endpoint.StreamOption does not implement embeddings.Option (missing method ApplyToEmbeddings)",
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := typecheck.Program(append(tc.imports, "models"), []string{"time"},
				"var c models.Catalog\nvar b "+tc.backend+"\nvar _ = "+tc.call+"\nvar _ = time.Second")
			err := c.Check(src)
			require.Error(t, err)
			var got []string
			for _, line := range strings.Split(err.Error(), "\n") {
				_, msg, _ := strings.Cut(line, ": ") // p.go:line:col
				got = append(got, msg)
			}
			require.Equal(t, tc.wantErr, got)
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
			src := typecheck.Program(imports, nil, fmt.Sprintf("var c models.Catalog\nvar b %s\nvar _ = %s.NewHandler(c, b, %s)", p.backend, p.name, strings.Join(args, ", ")))
			require.NoError(t, c.Check(src))
		})
	}
}
