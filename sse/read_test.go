package sse_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/sse"
)

// collect reads every event of r and the error that ended the stream.
func collect(r io.Reader) ([]sse.Event, error) {
	var events []sse.Event
	for ev, err := range sse.Read(r) {
		if err != nil {
			return events, err
		}
		events = append(events, ev)
	}
	return events, nil
}

func TestRead(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		in      string
		want    []sse.Event
		wantErr error
	}{
		{
			name: "ChatWithDone",
			in:   "data: {\"a\":1}\n\ndata: {\"a\":2}\n\ndata: [DONE]\n\n",
			want: []sse.Event{{Data: `{"a":1}`}, {Data: `{"a":2}`}, {Data: "[DONE]"}},
		},
		{
			name: "NamedEvents",
			in:   "event: response.created\ndata: {}\n\nevent: response.completed\ndata: {\"x\":true}\n\n",
			want: []sse.Event{{Type: "response.created", Data: "{}"}, {Type: "response.completed", Data: `{"x":true}`}},
		},
		{
			name: "CRLFAndCR",
			in:   "data: a\r\n\r\ndata: b\r\rdata: c\r\n\n",
			want: []sse.Event{{Data: "a"}, {Data: "b"}, {Data: "c"}},
		},
		{
			name: "MultilineDataJoinedWithLF",
			in:   "data: one\ndata: two\ndata:three\n\n",
			want: []sse.Event{{Data: "one\ntwo\nthree"}},
		},
		{
			name: "CommentsIDAndRetrySkipped",
			in:   ": keep-alive\n\nid: 7\nretry: 100\n: note\ndata: x\n\n: keep-alive\n\n",
			want: []sse.Event{{Data: "x"}},
		},
		{
			name: "UnknownFieldsIgnored",
			in:   "foo: bar\ndata: x\nnonsense\n\n",
			want: []sse.Event{{Data: "x"}},
		},
		{
			name: "LeadingBlankLinesAndBOM",
			in:   "\xEF\xBB\xBF\n\ndata: x\n\n",
			want: []sse.Event{{Data: "x"}},
		},
		{
			name: "OnlyOneLeadingSpaceTrimmed",
			in:   "event:  spaced\ndata:  x \n\n",
			want: []sse.Event{{Type: " spaced", Data: " x "}},
		},
		{
			name: "EventWithoutData",
			in:   "event: ping\n\n",
			want: []sse.Event{{Type: "ping"}},
		},
		{
			name: "LastEventWithoutBlankLine",
			in:   "data: a\n\ndata: b\n",
			want: []sse.Event{{Data: "a"}, {Data: "b"}},
		},
		{
			name:    "CutInTheMiddleOfALine",
			in:      "data: a\n\ndata: {\"trunc",
			want:    []sse.Event{{Data: "a"}},
			wantErr: io.ErrUnexpectedEOF,
		},
		{
			name:    "NoLineBreakAtAll",
			in:      "garbage",
			wantErr: io.ErrUnexpectedEOF,
		},
		{
			name: "Empty",
			in:   "",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := collect(strings.NewReader(tc.in))
			if tc.wantErr != nil {
				require.ErrorIs(t, err, tc.wantErr)
			} else {
				require.NoError(t, err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("events (-want +got):\n%s", diff)
			}
		})
	}
}

func TestReadReaderError(t *testing.T) {
	t.Parallel()
	boom := errors.New("connection reset")
	r := io.MultiReader(strings.NewReader("data: a\n\n"), errReader{boom})
	got, err := collect(r)
	require.ErrorIs(t, err, boom)
	require.Equal(t, []sse.Event{{Data: "a"}}, got)
}

type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }

func TestReadStopsWhenTheLoopBreaks(t *testing.T) {
	t.Parallel()
	var n int
	for ev, err := range sse.Read(strings.NewReader("data: 1\n\ndata: 2\n\ndata: 3\n\n")) {
		require.NoError(t, err)
		n++
		if ev.Data == "2" {
			break
		}
	}
	require.Equal(t, 2, n)
}

func TestIsDone(t *testing.T) {
	t.Parallel()
	tests := []struct {
		ev   sse.Event
		want bool
	}{
		{ev: sse.Event{Data: "[DONE]"}, want: true},
		{ev: sse.Event{Data: "[DONE] "}},
		{ev: sse.Event{Data: `"[DONE]"`}},
		{ev: sse.Event{Data: "{}"}},
		{ev: sse.Event{}},
	}
	for _, tc := range tests {
		t.Run(tc.ev.Data, func(t *testing.T) {
			t.Parallel()
			require.Equal(t, tc.want, tc.ev.IsDone())
		})
	}
}

// repeatReader yields an endless run of one byte.
type repeatReader byte

func (r repeatReader) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	p[0] = byte(r)
	for n := 1; n < len(p); n *= 2 { // a few copies, not a write per byte (slow with -race)
		copy(p[n:], p[:n])
	}
	return len(p), nil
}

func bigEvent(dataLen int64) io.Reader {
	return io.MultiReader(
		strings.NewReader("data: "),
		io.LimitReader(repeatReader('a'), dataLen),
		strings.NewReader("\n\ndata: after\n\n"),
	)
}

func TestReadEventSizeLimit(t *testing.T) {
	if testing.Short() {
		t.Skip("reads 64 MiB")
	}
	// Not parallel: it holds a few hundred MiB at its peak.
	t.Run("JustUnderTheLimitIsAccepted", func(t *testing.T) {
		n := int64(sse.MaxEventSize - len("data: \n\n"))
		got, err := collect(bigEvent(n))
		require.NoError(t, err)
		require.Len(t, got, 2)
		require.Len(t, got[0].Data, int(n))
		require.Equal(t, "after", got[1].Data)
	})
	t.Run("OverTheLimitIsAnError", func(t *testing.T) {
		got, err := collect(bigEvent(sse.MaxEventSize + 1))
		require.ErrorIs(t, err, sse.ErrEventTooLong)
		require.Empty(t, got)
	})
}

func TestRoundTrip(t *testing.T) {
	t.Parallel()
	big := strings.Repeat("x", 1<<20)
	tests := []struct {
		name   string
		events []sse.Event
		want   []sse.Event // nil: the same as events
	}{
		{
			name:   "Unnamed",
			events: []sse.Event{{Data: `{"a":1}`}, {Data: `{"b":[1,2,3]}`}, {Data: "[DONE]"}},
		},
		{
			name:   "Named",
			events: []sse.Event{{Type: "response.created", Data: `{"type":"response.created"}`}, {Type: " spaced name ", Data: "{}"}},
		},
		{
			name:   "EmptyDataAndNoData",
			events: []sse.Event{{Data: ""}, {Type: "ping", Data: ""}},
		},
		{
			name:   "LeadingAndTrailingSpaces",
			events: []sse.Event{{Data: "  x  "}, {Data: " "}},
		},
		{
			name:   "Unicode",
			events: []sse.Event{{Data: `{"t":"héllo 世界 🙂 \u2028"}`}, {Type: "ünïcode", Data: "ok"}},
		},
		{
			name:   "LineBreaks",
			events: []sse.Event{{Data: "a\nb"}, {Data: "\n"}, {Data: "a\n\nb\n"}, {Data: "a\r\nb\rc"}},
			want:   []sse.Event{{Data: "a\nb"}, {Data: "\n"}, {Data: "a\n\nb\n"}, {Data: "a\nb\nc"}},
		},
		{
			name:   "Large",
			events: []sse.Event{{Data: `{"big":"` + big + `"}`}, {Data: "[DONE]"}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s, rec := start(t)
			for _, ev := range tc.events {
				require.NoError(t, s.SendEvent(ev))
			}
			got, err := collect(rec.Body)
			require.NoError(t, err)
			want := tc.want
			if want == nil {
				want = tc.events
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("events (-want +got):\n%s", diff)
			}
		})
	}
}

func TestRoundTripJSON(t *testing.T) {
	t.Parallel()
	values := []any{
		map[string]any{"html": "<b>&</b>", "nl": "line1\nline2\r\n", "nul": "\x00"},
		[]any{1.5, "two", nil, true, map[string]any{}},
		"a plain string",
		json.RawMessage(`{"pre": "encoded",  "spaces": [1, 2]}`),
		textChunk("assistant", "Hello", ptr("stop")),
	}
	rec := httptest.NewRecorder()
	s, err := sse.Start(rec, newRequest(), sse.WithKeepAlive(0))
	require.NoError(t, err)
	defer s.Close()
	for i, v := range values {
		name := ""
		if i%2 == 1 {
			name = "named"
		}
		require.NoError(t, s.SendJSON(name, v))
	}
	require.NoError(t, s.Done())

	got, err := collect(rec.Body)
	require.NoError(t, err)
	require.Len(t, got, len(values)+1)
	for i, v := range values {
		want, err := json.Marshal(v)
		require.NoError(t, err)
		var wantV, gotV any
		require.NoError(t, json.Unmarshal(want, &wantV))
		require.NoError(t, json.Unmarshal([]byte(got[i].Data), &gotV))
		if diff := cmp.Diff(wantV, gotV); diff != "" {
			t.Errorf("value %d (-want +got):\n%s", i, diff)
		}
		require.NotContains(t, got[i].Data, "\n")
		if i%2 == 1 {
			require.Equal(t, "named", got[i].Type)
		}
	}
	require.True(t, got[len(values)].IsDone())
	require.False(t, bytes.Contains(rec.Body.Bytes(), []byte(`\u003c`)), "no HTML escaping")
}
