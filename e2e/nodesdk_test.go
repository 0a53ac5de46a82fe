package e2e_test

import (
	"bufio"
	"context"
	"crypto/rand"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestNodeSDK runs the official OpenAI Node SDK's suite (e2e/node) against
// the example server, and through the example relay in front of it; and,
// with GATEWAYKIT_TEST_POSTGRES, its conversation and background tests
// across two example servers on one PostgreSQL database.
func TestNodeSDK(t *testing.T) {
	node := requireNode(t)
	statSources(t)
	bin := t.TempDir()
	build(t, bin, "server", "relay")

	// The server's state in a file of the test's own, not ./gatewaykit.db.
	server := start(t, filepath.Join(bin, "server"), "-addr", "127.0.0.1:0", "-admin-addr", "127.0.0.1:0",
		"-db", "sqlite:"+filepath.Join(t.TempDir(), "gatewaykit.db"))
	relay := start(t, filepath.Join(bin, "relay"), "-addr", "127.0.0.1:0", "-admin-addr", "127.0.0.1:0",
		"-upstream", server+"/v1", "-upstream-key", "sk-demo")

	// The three runs are independent (the relay's clients use its own demo
	// keys, and the replicas their own database), and mostly wait on the
	// demo's pacing: they run at once.
	for name, base := range map[string]string{"server": server, "relay": relay} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			runSuite(t, node, name, "OPENAI_BASE_URL="+base+"/v1")
		})
	}

	// Two replicas on one PostgreSQL database: the conversation test
	// starts its conversation on one and continues it on the other; the
	// background test polls, cancels and resumes on the other the
	// responses it creates on one.
	t.Run("postgres replicas", func(t *testing.T) {
		t.Parallel()
		dsn := newPostgresDatabase(t)
		var urls []string
		for range 2 {
			urls = append(urls, start(t, filepath.Join(bin, "server"), "-addr", "127.0.0.1:0", "-admin-addr", "", "-db", dsn))
		}
		runSuite(t, node, "postgres replicas", "OPENAI_BASE_URL="+urls[0]+"/v1", "OPENAI_BASE_URL_OTHER="+urls[1]+"/v1",
			"--test-name-pattern=conversation|background")
	})
}

// runSuite runs the Node SDK's suite with the environment variables and
// node flags of args ("NAME=value" or "--flag").
func runSuite(t *testing.T, node, name string, args ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	flags := []string{"--test", "--test-reporter=spec"}
	env := os.Environ()
	for _, a := range args {
		if strings.HasPrefix(a, "--") {
			flags = append(flags, a)
		} else {
			env = append(env, a)
		}
	}
	cmd := exec.CommandContext(ctx, node, append(flags, "sdk.test.mjs")...)
	cmd.Dir = "node"
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "the Node SDK suite failed against the %s:\n%s", name, out)
	t.Logf("%s", out)
}

// newPostgresDatabase creates an empty database on the server that
// GATEWAYKIT_TEST_POSTGRES names (with psql: this module has no
// PostgreSQL driver), drops it when t ends, and returns its URL. It
// skips t when the variable is unset, as the stores' tests do.
func newPostgresDatabase(t *testing.T) string {
	t.Helper()
	base := os.Getenv("GATEWAYKIT_TEST_POSTGRES")
	if base == "" {
		t.Skip("needs PostgreSQL: set GATEWAYKIT_TEST_POSTGRES=postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable (.ci/run does)")
	}
	psql, err := exec.LookPath("psql")
	require.NoError(t, err, "GATEWAYKIT_TEST_POSTGRES is set: the replicas need psql to create their database")
	name := "gk_e2e_" + strings.ToLower(rand.Text())
	sql := func(stmt string) error {
		out, err := exec.Command(psql, base, "-v", "ON_ERROR_STOP=1", "-c", stmt).CombinedOutput()
		if err != nil {
			return fmt.Errorf("psql -c %q: %w\n%s", stmt, err, out)
		}
		return nil
	}
	require.NoError(t, sql("CREATE DATABASE "+name))
	t.Cleanup(func() {
		if err := sql("DROP DATABASE " + name + " WITH (FORCE)"); err != nil {
			t.Error(err)
		}
	})
	u, err := url.Parse(base)
	require.NoError(t, err)
	u.Path = "/" + name
	return u.String()
}

// requireNode returns the path of node, when it and the SDK are
// installed; else the test skips, or fails under GATEWAYKIT_NODE_SDK=1.
func requireNode(t *testing.T) string {
	t.Helper()
	must := os.Getenv("GATEWAYKIT_NODE_SDK") == "1"
	node, err := exec.LookPath("node")
	if err == nil {
		_, err = os.Stat(filepath.Join("node", "node_modules", "openai"))
	}
	if err != nil {
		if must {
			t.Fatalf("GATEWAYKIT_NODE_SDK=1, but Node.js or the SDK is missing (npm ci --prefix e2e/node): %v", err)
		}
		t.Skipf("Node.js or the OpenAI Node SDK is missing (npm ci --prefix e2e/node): %v", err)
	}
	return node
}

// statSources stats every file that the programs and the suite are made
// of. go test caches a test's result until a file that the test opened or
// stat'ed changes; the programs are built by a go build of their own, and
// the suite is read by node, neither of which go test sees.
func statSources(t *testing.T) {
	t.Helper()
	err := filepath.WalkDir("..", func(path string, d fs.DirEntry, err error) error {
		switch {
		case err != nil:
			return err
		case d.IsDir() && (d.Name() == "node_modules" || d.Name() == ".git"):
			return filepath.SkipDir
		case d.IsDir():
			return nil
		}
		switch filepath.Ext(path) {
		case ".go", ".mjs", ".json", ".mod", ".sum":
			_, err = os.Stat(path)
		}
		return err
	})
	require.NoError(t, err)
}

// build builds the named example programs into dir.
func build(t *testing.T, dir string, names ...string) {
	t.Helper()
	for _, n := range names {
		cmd := exec.Command("go", "build", "-o", filepath.Join(dir, n), "../examples/"+n)
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "go build ./examples/%s:\n%s", n, out)
	}
}

// bannerURL finds the address that an example prints once it listens.
var bannerURL = regexp.MustCompile(`on (http://[0-9.:\[\]a-z]+)`)

// start runs an example program until the test ends, and returns the URL
// of its banner.
func start(t *testing.T, path string, args ...string) string {
	t.Helper()
	cmd := exec.Command(path, args...)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	logs, err := os.Create(filepath.Join(t.TempDir(), "stderr"))
	require.NoError(t, err)
	cmd.Stderr = logs
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		defer func() {
			if t.Failed() {
				b, _ := os.ReadFile(logs.Name())
				t.Logf("%s logged:\n%s", filepath.Base(path), b)
			}
			logs.Close()
		}()
		_ = cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	})
	urls := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if m := bannerURL.FindStringSubmatch(sc.Text()); m != nil {
				urls <- m[1]
				break
			}
		}
		for sc.Scan() { // keep draining, so that the program never blocks
		}
	}()
	select {
	case u := <-urls:
		return u
	case <-time.After(2 * time.Minute):
		t.Fatalf("%s printed no banner", filepath.Base(path))
		return ""
	}
}
