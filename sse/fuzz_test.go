package sse_test

import (
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/sse"
)

// FuzzWriteRead checks that what a Stream writes, Read reads back: JSON
// values compare equal after decoding, raw data arrives unchanged (with CR
// and CRLF as LF, which SSE defines), and event names are kept.
func FuzzWriteRead(f *testing.F) {
	f.Add("", "hello")
	f.Add("response.output_text.delta", `{"delta":"Hi"}`)
	f.Add(" spaced ", " data with spaces ")
	f.Add("ping", "")
	f.Add("x", "a\r\nb\rc\n")
	f.Add("bad\nname", "x")
	f.Add("", "[DONE]")
	f.Add("ünï", "\xEF\xBB\xBFbom \x00 nul \xff")
	f.Fuzz(func(t *testing.T, name, text string) {
		rec := httptest.NewRecorder()
		s, err := sse.Start(rec, newRequest(), sse.WithKeepAlive(0))
		require.NoError(t, err)
		defer s.Close()

		if strings.ContainsAny(name, "\r\n") {
			require.ErrorIs(t, s.SendJSON(name, text), sse.ErrInvalidEventName)
			require.ErrorIs(t, s.SendRaw(name, []byte(text)), sse.ErrInvalidEventName)
			require.ErrorIs(t, s.WriteRaw(name, []byte(text)), sse.ErrInvalidEventName)
			require.NoError(t, s.Flush())
			require.Zero(t, rec.Body.Len())
			return
		}
		values := []any{text, map[string]any{"text": text, "n": len(text)}, []string{name, text}}
		for _, v := range values {
			require.NoError(t, s.SendJSON(name, v))
		}
		require.NoError(t, s.SendRaw(name, []byte(text)))
		require.NoError(t, s.WriteRaw(name, []byte(text))) // flushed by Done
		require.NoError(t, s.Done())

		got, err := collect(rec.Body)
		require.NoError(t, err)
		require.Len(t, got, len(values)+3)
		for i, v := range values {
			require.Equal(t, name, got[i].Type)
			want, err := json.Marshal(v)
			require.NoError(t, err)
			var wantV, gotV any
			require.NoError(t, json.Unmarshal(want, &wantV))
			require.NoError(t, json.Unmarshal([]byte(got[i].Data), &gotV), "data %q", got[i].Data)
			if diff := cmp.Diff(wantV, gotV); diff != "" {
				t.Fatalf("value %d (-want +got):\n%s", i, diff)
			}
		}
		wantRaw := strings.ReplaceAll(strings.ReplaceAll(text, "\r\n", "\n"), "\r", "\n")
		for _, raw := range got[len(values) : len(values)+2] {
			require.Equal(t, sse.Event{Type: name, Data: wantRaw}, raw)
		}
		require.Equal(t, sse.Event{Data: sse.DoneData}, got[len(got)-1])
	})
}

// FuzzRead checks that Read never panics on arbitrary input, and that the
// events it yields survive a trip through a Stream unchanged.
func FuzzRead(f *testing.F) {
	f.Add([]byte("data: {\"a\":1}\n\ndata: [DONE]\n\n"))
	f.Add([]byte("event: response.created\ndata: {}\n\n"))
	f.Add([]byte(": keep-alive\n\nid: 1\nretry: 5\ndata: x\r\n\r\n"))
	f.Add([]byte("\xEF\xBB\xBFdata: bom\n\n"))
	f.Add([]byte("data: cut"))
	f.Add([]byte("data\ndata:\nevent\n\n"))
	f.Add([]byte("\r\r\n\n:\n"))
	f.Fuzz(func(t *testing.T, in []byte) {
		events, _ := collect(strings.NewReader(string(in)))
		if len(events) == 0 {
			return
		}
		rec := httptest.NewRecorder()
		s, err := sse.Start(rec, newRequest(), sse.WithKeepAlive(0))
		require.NoError(t, err)
		defer s.Close()
		for i, ev := range events {
			if i%2 == 0 {
				require.NoError(t, s.SendEvent(ev))
			} else {
				require.NoError(t, s.WriteRaw(ev.Type, []byte(ev.Data)))
			}
		}
		require.NoError(t, s.Flush())
		again, err := collect(rec.Body)
		require.NoError(t, err)
		if diff := cmp.Diff(events, again); diff != "" {
			t.Fatalf("events after a trip through a Stream (-read +again):\n%s", diff)
		}
	})
}
