// Package readme runs the example programs as the repository's README
// tells its readers to, for the programs' tests: it reads the `go run
// ./examples/…` commands of a README section, gives the ports they name
// free ports of this machine (the same port to the same number, so that
// commands that would collide on a reader's machine collide here too),
// and starts them from built binaries.
package readme

import (
	"bufio"
	"bytes"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
)

// A Command is one `go run ./examples/NAME …` line of the README.
type Command struct {
	Example string   // NAME: "server", "relay"
	Args    []string // its arguments, as sh splits them
}

// Flag returns the value of the flag name ("-addr") in c's arguments
// (as "-addr V" or "-addr=V"), and whether it is given.
func (c Command) Flag(name string) (string, bool) {
	for i, a := range c.Args {
		switch {
		case a == name && i+1 < len(c.Args):
			return c.Args[i+1], true
		case strings.HasPrefix(a, name+"="):
			return a[len(name)+1:], true
		}
	}
	return "", false
}

// With returns c with the flag name set to value: in place if c gives
// it, else added at the end.
func (c Command) With(name, value string) Command {
	args := make([]string, 0, len(c.Args)+2)
	found := false
	for i := 0; i < len(c.Args); i++ {
		a := c.Args[i]
		switch {
		case a == name && i+1 < len(c.Args):
			args = append(args, name, value)
			i++
			found = true
		case strings.HasPrefix(a, name+"="):
			args = append(args, name, value)
			found = true
		default:
			args = append(args, a)
		}
	}
	if !found {
		args = append(args, name, value)
	}
	return Command{Example: c.Example, Args: args}
}

var goRun = regexp.MustCompile(`^go run \./examples/([a-z]+)(?:\s|$)`)

// Commands returns the `go run ./examples/…` commands of the first sh
// code block after the line heading of the README at path (the
// repository's README.md, relative to the test's directory), in order. A
// trailing "&" and "# comment" are dropped; quotes are removed as sh
// removes them (no expansion). It fails t if there is no such block.
func Commands(t testing.TB, path, heading string) []Command {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	_, rest, ok := bytes.Cut(data, []byte("\n"+heading+"\n"))
	require.True(t, ok, "%s has no line %q", path, heading)
	_, rest, ok = bytes.Cut(rest, []byte("```sh\n"))
	require.True(t, ok, "%s has no sh block after %q", path, heading)
	block, _, ok := bytes.Cut(rest, []byte("\n```"))
	require.True(t, ok, "%s: the sh block after %q does not end", path, heading)
	var out []Command
	sc := bufio.NewScanner(bytes.NewReader(block))
	line := ""
	for sc.Scan() {
		line += sc.Text()
		if strings.HasSuffix(line, `\`) {
			line = strings.TrimSuffix(line, `\`) + " "
			continue
		}
		if m := goRun.FindStringSubmatch(line); m != nil {
			words, err := split(line)
			require.NoError(t, err, "%s: %s", path, line)
			out = append(out, Command{Example: m[1], Args: words[3:]})
		}
		line = ""
	}
	require.NotEmpty(t, out, "%s: no go run ./examples/… command after %q", path, heading)
	return out
}

// split splits line into words as sh does, without expansions: quotes
// group and are removed; an unquoted # starts a comment, and an unquoted
// & ends the command.
func split(line string) ([]string, error) {
	var words []string
	var w strings.Builder
	inWord := false
	for i := 0; i < len(line); i++ {
		switch c := line[i]; {
		case c == '\'' || c == '"':
			end := strings.IndexByte(line[i+1:], c)
			if end < 0 {
				return nil, fmt.Errorf("unterminated %c", c)
			}
			w.WriteString(line[i+1 : i+1+end])
			i += 1 + end
			inWord = true
		case c == ' ' || c == '\t':
			if inWord {
				words = append(words, w.String())
				w.Reset()
				inWord = false
			}
		case (c == '#' || c == '&') && !inWord:
			return words, nil
		default:
			w.WriteByte(c)
			inWord = true
		}
	}
	if inWord {
		words = append(words, w.String())
	}
	return words, nil
}

// Build builds the example program in dir (a directory of the examples
// module, relative to the test's) into a temporary directory and returns
// its path.
func Build(t testing.TB, dir string) string {
	t.Helper()
	abs, err := filepath.Abs(dir)
	require.NoError(t, err)
	bin := filepath.Join(t.TempDir(), filepath.Base(abs))
	out, err := exec.Command("go", "build", "-o", bin, dir).CombinedOutput()
	require.NoError(t, err, "go build %s:\n%s", dir, out)
	return bin
}

var usageDefault = regexp.MustCompile(`(?m)^\s+(-[a-z-]+) \S+\n\s+.*\(default "([^"]*)"\)$`)

// Defaults returns the defaults of the flags of the program bin that
// have one, as its -h prints them: "-addr" → "127.0.0.1:8080".
func Defaults(t testing.TB, bin string) map[string]string {
	t.Helper()
	out, _ := exec.Command(bin, "-h").CombinedOutput() // exits 0 or 2
	defaults := make(map[string]string)
	for _, m := range usageDefault.FindAllStringSubmatch(string(out), -1) {
		defaults[m[1]] = m[2]
	}
	require.NotEmpty(t, defaults, "%s -h printed no flag defaults:\n%s", bin, out)
	return defaults
}

// Ports maps the port numbers that commands name to free ports of the
// loopback interface, one free port per number.
type Ports map[string]string

// Addr returns addr ("127.0.0.1:8080", ":8080" or "8080") with its port
// mapped.
func (p Ports) Addr(t testing.TB, addr string) string {
	t.Helper()
	host, port, err := net.SplitHostPort(addr)
	if err != nil { // a bare port
		_, err = strconv.Atoi(addr)
		require.NoError(t, err, "%q is neither host:port nor a port", addr)
		return p.port(t, addr)
	}
	return net.JoinHostPort(host, p.port(t, port))
}

// URL returns the URL u with the port of its host mapped.
func (p Ports) URL(t testing.TB, u string) string {
	t.Helper()
	scheme, rest, ok := strings.Cut(u, "://")
	require.True(t, ok, "%q is not a URL", u)
	hostport, path, _ := strings.Cut(rest, "/")
	return scheme + "://" + p.Addr(t, hostport) + "/" + path
}

func (p Ports) port(t testing.TB, port string) string {
	t.Helper()
	if free, ok := p[port]; ok {
		return free
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	_, free, _ := net.SplitHostPort(l.Addr().String())
	require.NoError(t, l.Close())
	p[port] = free
	return free
}

// A Process is a started example program.
type Process struct {
	Cmd    *exec.Cmd
	Stdout chan string // its lines, closed at its exit
	done   chan struct{}
	err    error // of Wait, once done is closed
	stderr *bytes.Buffer
}

// Start starts bin with args in dir, and stops it (SIGTERM) when the test
// ends. Its stderr is logged if the test fails.
func Start(t testing.TB, dir, bin string, args ...string) *Process {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	p := &Process{Cmd: cmd, Stdout: make(chan string, 64), done: make(chan struct{}), stderr: new(bytes.Buffer)}
	cmd.Stderr = p.stderr // read once the process has exited
	require.NoError(t, cmd.Start())
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			p.Stdout <- sc.Text()
		}
		close(p.Stdout)
		p.err = cmd.Wait()
		close(p.done)
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		<-p.done
		if t.Failed() {
			t.Logf("%s %s logged:\n%s", filepath.Base(bin), strings.Join(args, " "), p.stderr.String())
		}
	})
	return p
}

// WaitFor returns the first line of p's stdout that contains s, or fails
// t with p's exit status and stderr if p exits before printing one.
func (p *Process) WaitFor(t testing.TB, s string) string {
	t.Helper()
	for line := range p.Stdout {
		if strings.Contains(line, s) {
			return line
		}
	}
	<-p.done
	require.Failf(t, "the program exited", "before printing %q: %v\n%s", s, p.err, p.stderr.String())
	return ""
}
