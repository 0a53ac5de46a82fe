package relay_test

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/relay"
)

// formPart is one part of a multipart body, as an upstream received it.
type receivedPart struct {
	Name, FileName, ContentType string
	Data                        []byte
}

func parseParts(t *testing.T, contentType string, body []byte) []receivedPart {
	t.Helper()
	req := httptest.NewRequest(http.MethodPost, "/", bytes.NewReader(body))
	req.Header.Set("Content-Type", contentType)
	mr, err := req.MultipartReader()
	require.NoError(t, err)
	var parts []receivedPart
	for {
		p, err := mr.NextPart()
		if err == io.EOF {
			return parts
		}
		require.NoError(t, err)
		parts = append(parts, receivedPart{p.FormName(), p.FileName(), p.Header.Get("Content-Type"), readAll(t, p)})
	}
}

// audio returns n bytes of a repeating, position-dependent pattern.
func audio(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*7 + i/251)
	}
	return b
}

// TestMultipartModelFirstStreamsTheUpload proves that the upload is not
// buffered: the upstream receives the first part of the file while the
// client has not sent the rest yet.
func TestMultipartModelFirstStreamsTheUpload(t *testing.T) {
	t.Parallel()
	const piece = 256 << 10
	first := make(chan struct{})
	done := make(chan []byte, 1)
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mr, err := r.MultipartReader()
		if err != nil {
			http.Error(w, err.Error(), 400)
			return
		}
		var model string
		var file []byte
		for {
			p, err := mr.NextPart()
			if err != nil {
				break
			}
			if p.FormName() == "model" {
				b, _ := io.ReadAll(p)
				model = string(b)
				continue
			}
			// Less than the piece the client sent: readers and writers
			// on the way keep back a few KiB (a multipart reader looks
			// ahead for the boundary; bufio flushes by the block).
			buf := make([]byte, piece-32<<10)
			if _, err := io.ReadFull(p, buf); err != nil {
				http.Error(w, err.Error(), 400)
				return
			}
			close(first) // the client's rest is still unsent
			rest, _ := io.ReadAll(p)
			file = append(buf, rest...)
		}
		done <- file
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"text":%q}`, model)
	}))
	t.Cleanup(upstream.Close)
	r, err := relay.New([]relay.Route{{Model: "whisper-1", Upstreams: []relay.Upstream{{BaseURL: upstream.URL + "/v1", Model: "up-w"}}}})
	require.NoError(t, err)
	g := &accessGateway{srv: serveAccess(t, r)}

	file := audio(4 * piece)
	pr, pw := io.Pipe()
	mw := multipart.NewWriter(pw)
	writeErr := make(chan error, 1)
	go func() {
		err := func() error {
			if err := mw.WriteField("model", "whisper-1"); err != nil {
				return err
			}
			fw, err := mw.CreateFormFile("file", "long.wav")
			if err != nil {
				return err
			}
			if _, err := fw.Write(file[:piece]); err != nil {
				return err
			}
			select {
			case <-first:
			case <-time.After(10 * time.Second):
				return fmt.Errorf("the upstream did not get the first piece while the client was still sending: the upload is buffered")
			}
			if _, err := fw.Write(file[piece:]); err != nil {
				return err
			}
			return mw.Close()
		}()
		pw.CloseWithError(err)
		writeErr <- err
	}()
	res := g.post(t, "/v1/audio/transcriptions", mw.FormDataContentType(), pr, map[string]string{"Authorization": "Bearer " + keyOK})
	require.NoError(t, <-writeErr)
	got := readAll(t, res.Body)
	require.Equal(t, http.StatusOK, res.StatusCode, string(got))
	jsonEqual(t, `{"text":"up-w"}`, got)
	require.Equal(t, sha256.Sum256(file), sha256.Sum256(<-done))
}

func TestMultipartDropsASecondModelField(t *testing.T) {
	t.Parallel()
	up := newFakeUpstream(t, nil)
	g := newAccessGateway(t, up)
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	require.NoError(t, mw.WriteField("model", "whisper-1"))
	fw, err := mw.CreateFormFile("file", "a.wav")
	require.NoError(t, err)
	_, _ = fw.Write([]byte("RIFF"))
	require.NoError(t, mw.WriteField("model", "chat-1")) // not checked: must not reach the upstream
	require.NoError(t, mw.Close())

	res := g.post(t, "/v1/audio/transcriptions", mw.FormDataContentType(), &body, map[string]string{"Authorization": "Bearer " + keyOK})
	require.Equal(t, http.StatusOK, res.StatusCode)
	c := up.lastCall(t)
	parts := parseParts(t, c.Header.Get("Content-Type"), c.Body)
	require.Len(t, parts, 2)
	require.Equal(t, "model", parts[0].Name)
	require.Equal(t, "up-whisper-1", string(parts[0].Data))
	require.Equal(t, "RIFF", string(parts[1].Data))
}

func TestMultipartErrors(t *testing.T) {
	t.Parallel()
	up := newFakeUpstream(t, nil)
	g := newAccessGateway(t, up, relay.WithMaxRequestBytes(64<<10))
	form := func(fields ...string) (string, io.Reader) {
		var b bytes.Buffer
		mw := multipart.NewWriter(&b)
		for i := 0; i+1 < len(fields); i += 2 {
			if fields[i] == "file" {
				fw, _ := mw.CreateFormFile("file", "a.wav")
				_, _ = io.WriteString(fw, fields[i+1])
				continue
			}
			_ = mw.WriteField(fields[i], fields[i+1])
		}
		_ = mw.Close()
		return mw.FormDataContentType(), &b
	}
	big := strings.Repeat("x", 100<<10)
	tests := []struct {
		name   string
		ct     string
		body   io.Reader
		status int
		want   string
	}{
		{"NoModel", "", nil, 400, "model is required"},
		{"UnknownModel", "", nil, 404, "model_not_found"},
		{"TooLarge", "", nil, 400, "larger than"},
		{"Truncated", "multipart/form-data; boundary=xyz", strings.NewReader("--xyz\r\nContent-Disposition: form-data; name=\"file\"\r\n\r\nabc"), 400, "multipart body"},
		{"BadBoundary", "multipart/form-data; boundary=\"a\\\"b\"", strings.NewReader(""), 400, "boundary"},
	}
	tests[0].ct, tests[0].body = form("file", "abc", "language", "en")
	tests[1].ct, tests[1].body = form("model", "nope", "file", "abc")
	tests[2].ct, tests[2].body = form("file", big, "model", "whisper-1")
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			res := g.post(t, "/v1/audio/transcriptions", tc.ct, tc.body, map[string]string{"Authorization": "Bearer " + keyOK})
			require.Equal(t, tc.status, res.StatusCode)
			require.Contains(t, string(readAll(t, res.Body)), tc.want)
		})
	}
	require.Zero(t, up.callCount())
}
