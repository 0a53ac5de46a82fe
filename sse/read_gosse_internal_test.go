package sse

import (
	"errors"
	"io"
	"iter"
	"strings"
	"testing"
	"testing/iotest"

	gosse "github.com/tmaxmax/go-sse"
)

// readGoSSE is the reference reader: go-sse's, with Read's errors.
func readGoSSE(r io.Reader) iter.Seq2[Event, error] {
	return func(yield func(Event, error) bool) {
		for ev, err := range gosse.Read(r, &gosse.ReadConfig{MaxEventSize: MaxEventSize}) {
			if err != nil {
				yield(Event{}, readError(err))
				return
			}
			if !yield(Event{Type: ev.Type, Data: ev.Data}, nil) {
				return
			}
		}
	}
}

// readResult is what a reader made of a stream: its events, and the
// error that ended it.
type readResult struct {
	events []Event
	err    string
	tooLong, cut,
	failed bool // the error wraps ErrEventTooLong, io.ErrUnexpectedEOF, errRead
}

func readAll(seq iter.Seq2[Event, error]) readResult {
	var res readResult
	for ev, err := range seq {
		if err != nil {
			res.err = err.Error()
			res.tooLong = errors.Is(err, ErrEventTooLong)
			res.cut = errors.Is(err, io.ErrUnexpectedEOF)
			res.failed = errors.Is(err, errRead)
			return res
		}
		res.events = append(res.events, ev)
	}
	return res
}

var errRead = errors.New("the connection broke")

// chunkReader returns data in reads of the sizes that cuts gives in turn
// (1 to 16 bytes each, then the rest), and then fail, or io.EOF.
type chunkReader struct {
	data []byte
	cuts []byte
	fail bool
}

func (r *chunkReader) Read(p []byte) (int, error) {
	if len(r.data) == 0 {
		if r.fail {
			return 0, errRead
		}
		return 0, io.EOF
	}
	n := len(r.data)
	if len(r.cuts) > 0 {
		n = min(n, int(r.cuts[0]%16)+1)
		r.cuts = r.cuts[1:]
	}
	n = copy(p, r.data[:n])
	r.data = r.data[n:]
	return n, nil
}

func equalResults(t *testing.T, what string, want, got readResult) {
	t.Helper()
	if len(want.events) != len(got.events) || want.err != got.err || want.tooLong != got.tooLong || want.cut != got.cut || want.failed != got.failed {
		t.Fatalf("%s: go-sse read %+v, Read %+v", what, want, got)
	}
	for i := range want.events {
		if want.events[i] != got.events[i] {
			t.Fatalf("%s: event %d: go-sse read %+v, Read %+v", what, i, want.events[i], got.events[i])
		}
	}
}

// FuzzReadLikeGoSSE checks that Read reads every stream exactly as
// go-sse's reader does: the same events, and the same error, whether the
// stream comes in one read or in many small ones, and whether it ends
// with EOF or with a failed read.
func FuzzReadLikeGoSSE(f *testing.F) {
	for _, s := range []string{
		"data: {\"a\":1}\n\ndata: [DONE]\n\n",
		"event: response.created\ndata: {}\n\nevent: response.created\ndata: {}\n\n",
		": keep-alive\n\nid: 1\nretry: 5\ndata: x\r\n\r\n",
		"\xEF\xBB\xBFdata: bom\n\n\xEF\xBB\xBFdata: again\n\n",
		"\n\r\n\xEF\xBB\xBFdata: bom after blank lines\n\n",
		"data: cut",
		"data: a\ndata: b",
		"data\ndata:\nevent\n\n",
		"\r\r\n\n:\n",
		"data: x\n\r\ndata: y\r\rdata: z\r\n\n",
		"id: a\x00b\n\nid: ok\n\nevent: e\n\n",
		"data:no space\ndata:  two spaces\n\n",
		"toolongname: x\ndata:: colon\nda:ta\n:data\n\n",
		"data: x\n\n\n\n",
		"data: last without blank line\n",
		"event: only\nevent: twice\n\n",
	} {
		f.Add([]byte(s), []byte{0, 3, 7, 15}, false)
		f.Add([]byte(s), []byte(nil), true)
	}
	f.Fuzz(func(t *testing.T, in, cuts []byte, fail bool) {
		want := readAll(readGoSSE(&chunkReader{data: in, cuts: cuts, fail: fail}))
		got := readAll(Read(&chunkReader{data: in, cuts: cuts, fail: fail}))
		equalResults(t, "stream", want, got)
		// Stopping after the first event stops both alike.
		for _, read := range []func(io.Reader) iter.Seq2[Event, error]{readGoSSE, Read} {
			for range read(iotest.OneByteReader(strings.NewReader(string(in)))) {
				break
			}
		}
	})
}

// TestReadLikeGoSSETooLong checks the bound on an event's size, which
// the fuzzer does not reach: both readers fail alike on an event longer
// than MaxEventSize (the same bufio.Scanner bound in both).
func TestReadLikeGoSSETooLong(t *testing.T) {
	for _, n := range []int{MaxEventSize + 1} {
		stream := "data: first\n\ndata: " + strings.Repeat("x", n) + "\n\ndata: after\n\n"
		want := readAll(readGoSSE(strings.NewReader(stream)))
		got := readAll(Read(strings.NewReader(stream)))
		equalResults(t, "long event", want, got)
		if (n > MaxEventSize) != got.tooLong {
			t.Fatalf("event of %d bytes: too long %v", n, got.tooLong)
		}
	}
}
