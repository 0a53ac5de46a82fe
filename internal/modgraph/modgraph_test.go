package modgraph_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// The packages the importer imports: an embedder's usual set.
var imported = []string{"auth", "chat", "models", "responses"}

// Modules that only the kit's tests use, named here so that this test
// says what it guards against even if a library package came to import
// one: the official OpenAI SDK and the browser driver, and theirs.
var testOnly = []string{
	"github.com/openai/openai-go/v3",
	"github.com/chromedp/chromedp",
	"github.com/chromedp/cdproto",
	"github.com/tidwall/gjson",
	"github.com/tidwall/sjson",
	"github.com/coder/websocket",
	"github.com/anthropics/anthropic-sdk-go/v2",
	"google.golang.org/genai",
}

const kitPath = "github.com/gatewaykit/gatewaykit"

// goCmd runs the go command in dir, in module mode without go.work and
// with the toolchain that runs the test, and returns its output.
func goCmd(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOTOOLCHAIN=local")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	require.NoError(t, err, "go %s: %s", strings.Join(args, " "), stderr.String())
	return string(out)
}

// TestAnImporterSeesOnlyWhatTheLibraryNeeds builds a module that imports
// auth, chat, models and responses from this checkout, at the kit's own
// go version, and checks its go list -m all: each module in it is the
// kit, a module whose packages the kit's public packages import, or a
// module that one of those requires, never one that the kit's go.mod
// requires for its tests alone.
func TestAnImporterSeesOnlyWhatTheLibraryNeeds(t *testing.T) {
	kit, err := filepath.Abs(filepath.Join("..", ".."))
	require.NoError(t, err)
	goVersion := strings.TrimSpace(goCmd(t, kit, "list", "-m", "-f", "{{.GoVersion}}"))

	// The modules of the packages that the kit's public packages
	// (those an importer can import) build from.
	var public []string
	for _, p := range strings.Fields(goCmd(t, kit, "list", "./...")) {
		if !slices.Contains(strings.Split(p, "/"), "internal") {
			public = append(public, p)
		}
	}
	library := map[string]bool{}
	for _, m := range strings.Fields(goCmd(t, kit, append([]string{"list", "-deps", "-f", "{{with .Module}}{{.Path}}{{end}}"}, public...)...)) {
		library[m] = true
	}
	require.True(t, library[kitPath])

	dir := t.TempDir()
	var src strings.Builder
	src.WriteString("package main\n\nimport (\n")
	for _, p := range imported {
		src.WriteString("\t_ \"" + kitPath + "/" + p + "\"\n")
	}
	src.WriteString(")\n\nfunc main() {}\n")
	require.NoError(t, os.WriteFile(filepath.Join(dir, "main.go"), []byte(src.String()), 0o644))
	mod := "module example.com/importer\n\ngo " + goVersion + "\n\nrequire " + kitPath + " v0.0.0\n\nreplace " + kitPath + " => " + kit + "\n"
	require.NoError(t, os.WriteFile(filepath.Join(dir, "go.mod"), []byte(mod), 0o644))
	sum, err := os.ReadFile(filepath.Join(kit, "go.sum")) // spares the checksum database the kit's modules
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "go.sum"), sum, 0o644))
	goCmd(t, dir, "mod", "tidy")
	goCmd(t, dir, "build", "./...")

	// A module the importer's graph holds because another module than
	// the kit requires it is that module's business, not the kit's.
	allowed := map[string]bool{"example.com/importer": true}
	for m := range library {
		allowed[m] = true
	}
	for _, edge := range strings.Split(strings.TrimSpace(goCmd(t, dir, "mod", "graph")), "\n") {
		from, to, _ := strings.Cut(edge, " ")
		if path, _, _ := strings.Cut(from, "@"); path != kitPath {
			path, _, _ = strings.Cut(to, "@")
			allowed[path] = true
		}
	}

	var listed []string
	for _, l := range strings.Split(strings.TrimSpace(goCmd(t, dir, "list", "-m", "all")), "\n") {
		listed = append(listed, strings.Fields(l)[0])
	}
	require.Contains(t, listed, kitPath)
	t.Logf("go list -m all of an importer of %s:\n%s", strings.Join(imported, ", "), strings.Join(listed, "\n"))
	var named, unneeded []string
	for _, m := range listed {
		if slices.Contains(testOnly, m) {
			named = append(named, m)
		}
		if !allowed[m] {
			unneeded = append(unneeded, m)
		}
	}
	require.Empty(t, named, "an importer's module graph holds modules that only the kit's tests use")
	require.Empty(t, unneeded, "an importer's module graph holds modules that no public package of the kit needs: "+
		"requirements of the kit's go.mod for its tests? Tests that need them belong to module sdk (CONTRIBUTING.md, Modules)")
}
