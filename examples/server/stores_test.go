package main

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/demo"
	"github.com/gatewaykit/gatewaykit/gateway"
)

func TestOpenStores(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, tc := range []struct {
		name, dsn string
		where     string // substring of the banner's state line
		err       string
	}{
		{name: "Memory", dsn: "memory", where: "in memory"},
		{name: "SQLite", dsn: "sqlite:" + filepath.Join(dir, "a.db"), where: "SQLite file " + filepath.Join(dir, "a.db")},
		{name: "SQLiteWithoutAPath", dsn: "sqlite:", err: "-db sqlite: needs a path"},
		{name: "SQLiteOfADirectory", dsn: "sqlite:" + dir, err: "-db sqlite:" + dir},
		{name: "Unknown", dsn: "mysql://localhost/db", err: `-db "mysql://localhost/db": want sqlite:PATH`},
		{name: "Empty", dsn: "", err: `-db "": want sqlite:PATH`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			st, err := openStores(context.Background(), tc.dsn, slog.New(slog.DiscardHandler))
			if tc.err != "" {
				require.ErrorContains(t, err, tc.err)
				require.Nil(t, st)
				return
			}
			require.NoError(t, err)
			t.Cleanup(func() { require.NoError(t, st.close()) })
			require.Contains(t, st.where, tc.where)
			for _, s := range []any{st.putter, st.keys, st.responses, st.tasks, st.contents} {
				require.NotNil(t, s)
			}
		})
	}
}

// TestConfigKeysKeepTheirUsageInTheDatabase: the keys of the
// configuration are written at every start, with the file's budget, and
// what they spent before stays spent.
func TestConfigKeysKeepTheirUsageInTheDatabase(t *testing.T) {
	t.Parallel()
	dsn := "sqlite:" + filepath.Join(t.TempDir(), "gatewaykit.db")
	budget := int64(1000)
	c := gateway.DemoFile()
	c.Keys = []gateway.KeyConfig{{Secret: "sk-team", ID: "key-team", Owner: "team", Quota: &budget}}
	chat := func(g http.Handler) int {
		req := httptest.NewRequest("POST", "/v1/chat/completions",
			strings.NewReader(`{"model":"demo-chat","max_tokens":16,"messages":[{"role":"user","content":"hi"}]}`))
		req.Header.Set("Authorization", "Bearer sk-team")
		rec := httptest.NewRecorder()
		g.ServeHTTP(rec, req)
		return rec.Code
	}
	remaining := func() int64 {
		st, err := openStores(context.Background(), dsn, slog.New(slog.DiscardHandler))
		require.NoError(t, err)
		defer st.close()
		k, err := st.keys.Lookup(context.Background(), "sk-team")
		require.NoError(t, err)
		return k.Quota.Remaining
	}

	var last int64 = budget
	for start := range 3 {
		st, err := openStores(context.Background(), dsn, slog.New(slog.DiscardHandler))
		require.NoError(t, err)
		g, err := newGateway(c, st, slog.New(slog.DiscardHandler), demo.WithChunkDelay(0))
		require.NoError(t, err)
		require.Equal(t, http.StatusOK, chat(g), "start %d", start)
		require.NoError(t, st.close())
		now := remaining()
		require.Less(t, now, last, "start %d: the chat was charged, and the restart refunded nothing", start)
		last = now
	}
}
