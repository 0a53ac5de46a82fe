package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/demo"
)

// TestTheDocsCommandsRunAsWritten runs the shell commands of the README's
// curl walk-through, admin walk-through, relay and health checks (the
// first sh block of each section), and the curl commands of the
// packages' doc.go files, as a reader would: one after the other in one
// bash session (so that K=… and export … hold for the lines below them),
// against this program served on loopback ports, with curl.
//
// What the test changes in a command is only what a reader's machine
// would: localhost:8080 and :8090 become the ports the server bound, and
// each placeholder ("resp_…", "task_…", "key_…", "sk-…", "…png") becomes
// the latest value of its form in an earlier reply, as a reader copies
// it. A "go run ./examples/server" line starts the server with the
// environment the line gives it (GATEWAY_ADMIN_KEY), a "go run
// ./examples/relay" line the relay, built for it; a poll of a video
// task is repeated until the task is done, as a reader would.
//
// Each curl command must answer what its comment says: the statuses a
// comment starts with ("# 401 missing_authorization", "# 200 ×5, then
// 429"), else a success (curl exits 0, no 4xx or 5xx); and the reply
// shown after "# →", up to its first "…". A command that saves the reply
// with -o must fail on an HTTP error (-f or --fail-with-body), so that an
// error is not saved as the file.
func TestTheDocsCommandsRunAsWritten(t *testing.T) {
	for _, tool := range []string{"bash", "curl"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("needs %s: %v", tool, err)
		}
	}
	readme, err := os.ReadFile("../../README.md")
	require.NoError(t, err)
	for _, section := range []string{"A curl walk-through", "The admin API", "Relay to real upstreams", "Health, metrics and traces"} {
		t.Run(section, func(t *testing.T) {
			newSession(t).run(parseSteps(t, shellBlock(t, string(readme), section)))
		})
	}
	t.Run("doc.go", func(t *testing.T) {
		block := docCurls(t, "../..")
		require.NotEmpty(t, block, "the doc.go files show curl commands (demo's, at least)")
		newSession(t).run(parseSteps(t, block))
	})
}

// shellBlock returns the first ```sh block of the README's section.
func shellBlock(t *testing.T, readme, section string) string {
	t.Helper()
	_, body, ok := strings.Cut(readme, "\n## "+section+"\n")
	require.True(t, ok, "the README has the section %q", section)
	body, _, _ = strings.Cut(body, "\n## ")
	_, block, ok := strings.Cut(body, "```sh\n")
	require.True(t, ok, "the section %q has a sh block", section)
	block, _, ok = strings.Cut(block, "```\n")
	require.True(t, ok, "an unterminated block")
	return block
}

// docCurls returns the curl commands shown in the doc.go files under
// root (code lines of doc comments, "//\tcurl …" and their continuation
// lines), one after the other.
func docCurls(t *testing.T, root string) string {
	t.Helper()
	var b strings.Builder
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || d.Name() != "doc.go" {
			return err
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		inCommand := false
		for _, line := range strings.Split(string(src), "\n") {
			code, ok := strings.CutPrefix(line, "//\t")
			if !ok {
				inCommand = false
				continue
			}
			if inCommand || strings.HasPrefix(code, "curl ") {
				b.WriteString(code + "\n")
				inCommand = strings.HasSuffix(code, `\`)
			}
		}
		return nil
	})
	require.NoError(t, err)
	return b.String()
}

// A step is one command of a block (continuation lines joined), with the
// comment that follows it.
type step struct {
	command, comment string
}

// parseSteps splits a shell block into steps; comment-only lines are
// left out.
func parseSteps(t *testing.T, block string) []step {
	t.Helper()
	var steps []step
	var cur string
	for _, line := range strings.Split(block, "\n") {
		cur += line
		if strings.HasSuffix(cur, `\`) {
			cur += "\n" // bash joins the lines
			continue
		}
		command, comment := splitComment(cur)
		cur = ""
		if strings.TrimSpace(command) != "" {
			steps = append(steps, step{command: strings.TrimSpace(command), comment: comment})
		}
	}
	require.Empty(t, cur, "a continuation line ends the block")
	return steps
}

// splitComment splits a line at its comment: a # after white space (or
// at the start), outside quotes.
func splitComment(line string) (command, comment string) {
	var quote rune
	for i, c := range line {
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			}
		case c == '\'' || c == '"':
			quote = c
		case c == '#' && (i == 0 || line[i-1] == ' ' || line[i-1] == '\t' || line[i-1] == '\n'):
			return line[:i], strings.TrimSpace(line[i+1:])
		}
	}
	return line, ""
}

// A session is one bash process in a folder of its own, and the server
// that its commands call.
type session struct {
	t       *testing.T
	dir     string
	in      io.Writer
	out     *bufio.Reader
	api     string // host:port of the server, once started
	admin   string // host:port of its admin listener
	relay   string // host:port of examples/relay, once started
	replies []string
}

// stepDone ends the output of every step, with the step's exit status;
// httpStatus is the line that curl writes for every reply.
const (
	stepDone   = "__gatewaykit_step_done__"
	httpStatus = "__gatewaykit_http_status__"
)

// shellPrelude wraps curl so that every reply's status reaches the test
// (on standard error, merged into the step's output, whatever -o says; a
// command's own -w replaces it) and no call outlives a minute; and
// replaces go so that a "go run" line shows the environment it gives
// the server.
const shellPrelude = `curl() { command curl --max-time 60 -w '%{stderr}\n` + httpStatus + ` %{http_code}\n' "$@"; }
go() { printf '__go__ %s\n' "${GATEWAY_ADMIN_KEY-}"; }
`

func newSession(t *testing.T) *session {
	t.Helper()
	dir := t.TempDir()
	cmd := exec.Command("bash", "--noprofile", "--norc")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GATEWAY_ADMIN_KEY=") // the reader's shell has none
	in, err := cmd.StdinPipe()
	require.NoError(t, err)
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	cmd.Stderr = cmd.Stdout
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		in.Close()
		_ = cmd.Wait()
	})
	s := &session{t: t, dir: dir, in: in, out: bufio.NewReader(out)}
	s.shell(shellPrelude)
	return s
}

// shell runs command in the session's bash and returns its output
// (standard output and error) and exit status.
func (s *session) shell(command string) (string, int) {
	s.t.Helper()
	_, err := fmt.Fprintf(s.in, "{\n%s\n} 2>&1; printf '\\n%s %%d\\n' $?\n", command, stepDone)
	require.NoError(s.t, err)
	var out strings.Builder
	for {
		line, err := s.out.ReadString('\n')
		require.NoError(s.t, err, "bash ended; output so far:\n%s", out.String())
		if rest, ok := strings.CutPrefix(line, stepDone+" "); ok {
			code, err := strconv.Atoi(strings.TrimSpace(rest))
			require.NoError(s.t, err)
			return strings.TrimSuffix(out.String(), "\n"), code
		}
		out.WriteString(line)
	}
}

// start starts the server as a "go run ./examples/server" line would,
// with the admin key that the session's environment (and the line) give
// it, on loopback ports of its own.
func (s *session) start(line string) {
	s.t.Helper()
	key := ""
	if line != "" {
		out, _ := s.shell(strings.TrimSuffix(strings.TrimSpace(line), "&"))
		_, key, _ = strings.Cut(out, "__go__ ")
		key = strings.TrimSpace(key)
	}
	lines := startRunLines(s.t, options{db: "sqlite:" + filepath.Join(s.dir, "gatewaykit.db"), addr: "127.0.0.1:0",
		adminAddr: "127.0.0.1:0", adminKey: key, maxConns: 64, textOptions: []demo.TextOption{demo.WithBackgroundChunkDelay(defaultBackgroundDelay)}})
	api, ok := strings.CutPrefix(lines[0], "gatewaykit example server on http://")
	require.True(s.t, ok, lines[0])
	s.api = api
	for _, l := range lines {
		if metrics, ok := strings.CutPrefix(l, "metrics: http://"); ok {
			s.admin = strings.TrimSuffix(metrics, "/metrics")
		}
	}
	require.NotEmpty(s.t, s.admin, "the banner names the admin listener: %q", lines)
}

// startRelay runs examples/relay as a "go run ./examples/relay" line
// would (its flags, the upstream on the server's port), on loopback ports
// of its own, and waits until it has the upstream's models, as a reader
// waits for the banner's models line.
func (s *session) startRelay(line string) {
	s.t.Helper()
	require.NotEmpty(s.t, s.api, "the relay's upstream, the server, runs first")
	bin := filepath.Join(s.dir, "relay")
	build := exec.Command("go", "build", "-o", bin, ".")
	build.Dir = "../relay"
	out, err := build.CombinedOutput()
	require.NoError(s.t, err, "%s", out)

	_, args, _ := strings.Cut(strings.TrimSuffix(strings.TrimSpace(line), "&"), "go run ./examples/relay")
	args = strings.NewReplacer("127.0.0.1:8080", s.api, "localhost:8080", s.api).Replace(args)
	cmd := exec.Command(bin, append(strings.Fields(args), "-addr", "127.0.0.1:0", "-admin-addr", "")...)
	stdout, err := cmd.StdoutPipe()
	require.NoError(s.t, err)
	require.NoError(s.t, cmd.Start())
	s.t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		_ = cmd.Wait()
	})
	r := bufio.NewReader(stdout)
	for {
		l, err := r.ReadString('\n')
		require.NoError(s.t, err, "the relay ended before it listed its models")
		if rest, ok := strings.CutPrefix(l, "gatewaykit relay on http://"); ok {
			s.relay, _, _ = strings.Cut(rest, ",")
		}
		if strings.HasPrefix(l, "  models:") {
			break
		}
	}
	go io.Copy(io.Discard, r)
}

// run runs the steps in order.
func (s *session) run(steps []step) {
	s.t.Helper()
	for _, st := range steps {
		switch {
		case strings.Contains(st.command, "go run ./examples/server"):
			s.start(st.command)
			continue
		case strings.Contains(st.command, "go run ./examples/relay"):
			s.startRelay(st.command)
			continue
		case strings.Contains(st.command, "go run"):
			s.t.Fatalf("the test does not know how to run %q", st.command)
		}
		if !strings.Contains(st.command, "curl ") {
			_, code := s.shell(st.command) // K=…, export …
			require.Zero(s.t, code, "%s", st.command)
			continue
		}
		if s.api == "" {
			s.start("") // the walk-through assumes the server is running
		}
		command := s.substitute(st.command)
		checkSavesOnlySuccess(s.t, command)
		out, code := s.shell(command)
		for tries := 0; isPoll(command) && running(out); tries++ {
			require.Less(s.t, tries, 600, "the video task is not done after a minute: %s", out)
			time.Sleep(100 * time.Millisecond)
			out, code = s.shell(command) // poll until the task is done, as a reader would
		}
		s.check(st, command, out, code)
		s.replies = append(s.replies, out)
	}
}

// running reports whether a video task's status says it is not done.
func running(reply string) bool {
	return strings.Contains(reply, `"status":"queued"`) || strings.Contains(reply, `"status":"in_progress"`)
}

// taskStatus is the URL of a video task's status, at the end of a
// word.
var taskStatus = regexp.MustCompile(`/v1/videos/task_\w+(\s|$)`)

// isPoll reports whether command reads a video task's status.
func isPoll(command string) bool {
	return taskStatus.MatchString(command)
}

var placeholder = regexp.MustCompile(`[\w-]*…[\w-]*`)

// substitute puts the server's addresses and the values of earlier
// replies into command.
func (s *session) substitute(command string) string {
	s.t.Helper()
	command = strings.ReplaceAll(command, "localhost:8080", s.api)
	command = strings.ReplaceAll(command, "localhost:8090", s.admin)
	command = strings.ReplaceAll(command, "localhost:8081", s.relay)
	return placeholder.ReplaceAllStringFunc(command, func(p string) string {
		prefix, suffix, _ := strings.Cut(p, "…")
		form := regexp.MustCompile(regexp.QuoteMeta(prefix) + `[^"\s/&?,]+` + regexp.QuoteMeta(suffix))
		for i := len(s.replies) - 1; i >= 0; i-- {
			if all := form.FindAllString(s.replies[i], -1); len(all) > 0 {
				return all[len(all)-1]
			}
		}
		s.t.Fatalf("no earlier reply has a value for %q in: %s", p, command)
		return ""
	})
}

var (
	statusLine = regexp.MustCompile(httpStatus + ` (\d{3})`)
	statusCode = regexp.MustCompile(`\b[1-5]\d\d\b`)
)

// check checks a curl step's output against its comment.
func (s *session) check(st step, command, out string, code int) {
	s.t.Helper()
	var got []string
	for _, m := range statusLine.FindAllStringSubmatch(out, -1) {
		got = append(got, m[1])
	}
	if len(got) == 0 { // the command's own -w writes the statuses
		got = statusCode.FindAllString(out, -1)
	}
	require.NotEmpty(s.t, got, "%s: no status; exit %d; output:\n%s", command, code, out)
	s.t.Logf("%s\n\t→ %s", command, strings.Join(got, " "))
	want := []string(nil)
	if st.comment != "" && st.comment[0] >= '1' && st.comment[0] <= '5' {
		want = statusCode.FindAllString(st.comment, -1)
	}
	if want == nil {
		require.Zero(s.t, code, "%s: curl failed; output:\n%s", command, out)
		for _, g := range got {
			n, _ := strconv.Atoi(g)
			require.Less(s.t, n, 400, "%s answered %d; output:\n%s", command, n, out)
		}
	} else {
		for _, g := range got {
			require.Contains(s.t, want, g, "%s: the comment says %q; output:\n%s", command, st.comment, out)
		}
		for _, w := range want {
			require.Contains(s.t, got, w, "%s: the comment says %q; output:\n%s", command, st.comment, out)
		}
	}
	if shown, ok := strings.CutPrefix(st.comment, "→ "); ok {
		shown, _, _ = strings.Cut(shown, "…")
		require.Contains(s.t, out, shown, "%s: the comment shows the reply; output:\n%s", command, out)
	}
}

// shortFail is a group of curl's short options with -f among them (-sSf).
var shortFail = regexp.MustCompile(`^-[a-zA-Z]*f[a-zA-Z]*$`)

// checkSavesOnlySuccess fails t for a curl command that writes the reply
// to a file (-o FILE) without failing on an HTTP error.
func checkSavesOnlySuccess(t *testing.T, command string) {
	t.Helper()
	fields := strings.Fields(command)
	saves, fails := false, false
	for i, f := range fields {
		switch {
		case f == "-o" && i+1 < len(fields) && fields[i+1] != "/dev/null":
			saves = true
		case f == "--fail" || f == "--fail-with-body" || shortFail.MatchString(f):
			fails = true
		}
	}
	if saves {
		require.True(t, fails, "%s saves the reply with -o but does not fail on an HTTP error (-f): an error would be saved as the file", command)
	}
}
