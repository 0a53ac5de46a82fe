// Package hanguptest checks that a handler lets go when its client hangs
// up: the backend sees the cancellation, the handler returns, and no
// goroutine is left behind. The tests of the endpoint packages (chat,
// completions, responses, messages…) share it.
package hanguptest

import (
	"bufio"
	"context"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"
	"time"
)

// Case is one hang-up to check.
type Case struct {
	// Handler serves the request; its backend blocks until its context
	// ends.
	Handler http.Handler
	// Path and Body make the POST.
	Path, Body string
	// Stream says whether the reply is a stream: the client then reads its
	// first line before it hangs up, and FirstLine checks that line.
	Stream    bool
	FirstLine func(line string) bool
	// Blocked is closed by the backend when it blocks (after its first
	// delta, when streaming); Returned when it has returned.
	Blocked, Returned <-chan struct{}
}

// Run makes the request, hangs up once the backend blocks (and, for a
// stream, once the first line arrived), then waits for the backend and the
// handler to return and for the goroutines to come back to what they were
// before the request. It does not run in parallel with other tests: it
// counts goroutines.
func Run(t *testing.T, c Case) {
	t.Helper()
	served := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer close(served)
		c.Handler.ServeHTTP(w, r)
	}))
	defer srv.Close()
	client := srv.Client()
	baseline := runtime.NumGoroutine()

	ctx, hangUp := context.WithCancel(t.Context())
	defer hangUp()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL+c.Path, strings.NewReader(c.Body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	done := make(chan struct{})
	read := make(chan struct{}) // closed once the first line is read
	go func() {
		defer close(done)
		res, err := client.Do(req)
		if err != nil {
			return // hung up before the reply
		}
		defer res.Body.Close()
		// Read the first line, then wait to be hung up on.
		line, _ := bufio.NewReader(res.Body).ReadString('\n')
		if c.Stream && c.FirstLine != nil && !c.FirstLine(line) {
			t.Errorf("unexpected first line %q", line)
		}
		close(read)
		<-ctx.Done()
	}()

	<-c.Blocked
	if c.Stream {
		<-read
	}
	hangUp()
	<-c.Returned // the backend saw the cancellation
	<-served     // and the handler returned
	<-done
	client.CloseIdleConnections()

	// Bounded polling, no assertion on time: the connection's goroutines
	// wind down asynchronously.
	n := runtime.NumGoroutine()
	for i := 0; i < 500 && n > baseline; i++ {
		time.Sleep(10 * time.Millisecond)
		n = runtime.NumGoroutine()
	}
	if n > baseline {
		t.Fatalf("goroutines leaked: %d, baseline %d", n, baseline)
	}
}
