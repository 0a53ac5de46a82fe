package main

import (
	"io"
	"log/slog"
	"net"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestStoreFlagsRefuseBadValues: a -db or -redis that names nothing
// usable stops the server at start with the flag named.
func TestStoreFlagsRefuseBadValues(t *testing.T) {
	tests := []struct {
		name string
		o    options
		want string
	}{
		{name: "UnknownDatabase", o: options{db: "mysql://localhost/x"}, want: `-db "mysql://localhost/x": want sqlite:PATH`},
		{name: "MalformedRedisURL", o: options{db: "memory", redis: "localhost:6379"}, want: "-redis: want redis://host:port/db"},
		{name: "UnreachablePostgres", o: options{db: "postgres://nobody@127.0.0.1:1/x?connect_timeout=2"}, want: "-db: postgres"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tc.o.addr, tc.o.maxConns = "127.0.0.1:0", 1
			err := run(t.Context(), tc.o, io.Discard, slog.New(slog.DiscardHandler))
			require.ErrorContains(t, err, tc.want)
		})
	}
}

// TestAdminAddrInUseSaysWhatToDo: a second gateway started on one machine
// with the first's -admin-addr stops with an error that says to give
// each its own.
func TestAdminAddrInUseSaysWhatToDo(t *testing.T) {
	t.Parallel()
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { taken.Close() })
	o := options{addr: "127.0.0.1:0", maxConns: 1, db: "memory", adminAddr: taken.Addr().String()}
	err = run(t.Context(), o, io.Discard, slog.New(slog.DiscardHandler))
	require.ErrorContains(t, err, "-admin-addr "+taken.Addr().String()+": ")
	require.ErrorContains(t, err, "give each its own -admin-addr")
}
