package main

import (
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/examples/internal/readme"
)

// TestREADMEServerAndRelayStartSideBySide runs the commands of the
// README's "Relay to real upstreams" section as written: the example
// server, then the relay in front of it, on one machine. Both start (each
// on its own ports, admin listeners included), and the README's chat goes
// through the relay. Each port that the commands name, or leave at their
// default, becomes a free port, the same one for the same number (so the
// relay's -upstream reaches the server, and commands that would collide
// on a reader's machine collide here too).
func TestREADMEServerAndRelayStartSideBySide(t *testing.T) {
	t.Parallel()
	cmds := readme.Commands(t, "../../README.md", "## Relay to real upstreams")
	require.Len(t, cmds, 2)
	require.Equal(t, "server", cmds[0].Example)
	require.Equal(t, "relay", cmds[1].Example)
	bins := map[string]string{"server": readme.Build(t, "../server"), "relay": readme.Build(t, ".")}
	ports := readme.Ports{}
	dir := t.TempDir() // the server's SQLite file goes here
	procs := make(map[string]*readme.Process)
	for _, c := range cmds {
		defaults := readme.Defaults(t, bins[c.Example])
		for _, f := range []string{"-addr", "-admin-addr"} {
			v, ok := c.Flag(f)
			if !ok {
				v = defaults[f]
			}
			c = c.With(f, ports.Addr(t, v))
		}
		if u, ok := c.Flag("-upstream"); ok {
			c = c.With("-upstream", ports.URL(t, u))
		}
		procs[c.Example] = readme.Start(t, dir, bins[c.Example], c.Args...)
	}
	for _, banner := range []struct{ example, line string }{{"server", "example server on"}, {"relay", "relay on"}} {
		p := procs[banner.example]
		p.WaitFor(t, banner.line)
		metrics := strings.Fields(p.WaitFor(t, "metrics: "))[1]
		res, err := http.Get(metrics)
		require.NoError(t, err)
		res.Body.Close()
		require.Equal(t, http.StatusOK, res.StatusCode, "%s's admin listener", banner.example)
	}
	procs["relay"].WaitFor(t, "models:") // the upstream listed its models

	addr, ok := cmds[1].Flag("-addr")
	if !ok {
		addr = readme.Defaults(t, bins["relay"])["-addr"]
	}
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, "http://"+ports.Addr(t, addr)+"/v1/chat/completions",
		strings.NewReader(`{"model":"demo-chat","messages":[{"role":"user","content":"hello"}]}`))
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer sk-demo")
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	require.Equal(t, http.StatusOK, res.StatusCode)
}
