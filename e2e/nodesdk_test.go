package e2e_test

import (
	"bufio"
	"context"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestNodeSDK runs the official OpenAI Node SDK's suite (e2e/node) against
// the example server, and through the example relay in front of it.
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

	for name, base := range map[string]string{"server": server, "relay": relay} {
		t.Run(name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, node, "--test", "--test-reporter=spec", "sdk.test.mjs")
			cmd.Dir = "node"
			cmd.Env = append(os.Environ(), "OPENAI_BASE_URL="+base+"/v1")
			out, err := cmd.CombinedOutput()
			require.NoError(t, err, "the Node SDK suite failed against the %s:\n%s", name, out)
			t.Logf("%s", out)
		})
	}
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
