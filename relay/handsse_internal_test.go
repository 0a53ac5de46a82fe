package relay

import (
	"bufio"
	"bytes"
	"io"
	"net/http"
	"strings"
)

// HandSSERelay is a hook of the external benchmarks (BenchmarkRelayPerEvent).
var HandSSERelay = handSSERelay

// handSSERelay is an experiment, for the benchmarks only: the least that
// the relay's chat stream could cost without go-sse. It forwards a chat
// request to upstream (a base URL without /v1) and reads the reply's
// events by hand (bufio lines, no goroutine), decodes each chunk with the
// relay's own decoder (decodeChatChunk) and writes it passed through
// with a gateway head, as the real relay does, flushing when nothing more
// is buffered. It does no auth, validation, accounting or error
// handling: it only tells what parsing and framing by hand would save
// per event.
func handSSERelay(upstream string) http.Handler {
	client := &http.Client{Transport: NewTransport()}
	const head = `data: {"id":"chatcmpl-0123456789ABCDEFGHIJKLMNOP","object":"chat.completion.chunk","created":1,"model":"bench"`
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		req, _ := http.NewRequestWithContext(r.Context(), http.MethodPost, upstream+"/v1/chat/completions", bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		res, err := client.Do(req)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		defer res.Body.Close()
		w.Header().Set("Content-Type", "text/event-stream")
		f := w.(http.Flusher)
		br := bufio.NewReaderSize(res.Body, 32<<10)
		var chunk chatChunk
		var kept []span
		out := make([]byte, 0, 8<<10)
		for {
			line, err := br.ReadSlice('\n')
			if err != nil {
				return
			}
			data, ok := bytes.CutPrefix(bytes.TrimRight(line, "\r\n"), []byte("data: "))
			if !ok {
				continue // the blank line between events
			}
			if string(data) == "[DONE]" {
				w.Write(append(out, "data: [DONE]\n\n"...))
				f.Flush()
				return
			}
			chunk.reset()
			kept = kept[:0]
			if !decodeChatChunk(data, &chunk, &kept) || strings.Contains(string(data), `"usage":{`) {
				continue // the usage chunk; the real relay reports it
			}
			out = append(out, head...)
			for _, sp := range kept {
				out = append(append(out, ','), data[sp.start:sp.end]...)
			}
			out = append(out, "}\n\n"...)
			if br.Buffered() == 0 {
				w.Write(out)
				f.Flush()
				out = out[:0]
			}
		}
	})
}
