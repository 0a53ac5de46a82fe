package console

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io/fs"
	"net/http"
	"net/url"
	"path"
	"strings"
	"time"

	"github.com/gatewaykit/gatewaykit/route"
)

// The routes of the console in ServeMux syntax: the page at the root, and
// its files (and its configuration, config.json) under /console/. Mount
// both with [Register].
const (
	PatternIndex  = "GET /{$}"
	PatternAssets = "GET /console/"
)

// assetsDir is the path segment under which the page's files are served,
// relative to the page.
const assetsDir = "/console/"

//go:embed static
var static embed.FS

// Config configures [NewHandler].
type Config struct {
	// AdminURL is the base URL of the admin API, such as
	// "http://127.0.0.1:8090" (its routes start with /admin/v1/). The page
	// calls it from the browser, so the admin API must answer CORS. Empty
	// hides the admin views.
	AdminURL string
}

// Routes returns the routes of h, a handler from [NewHandler]:
// [PatternIndex] and [PatternAssets], each for GET and HEAD, as
// [route.Route] values that any router can mount.
func Routes(h http.Handler) []route.Route {
	return route.List(h, PatternIndex, PatternAssets)
}

// Register mounts h, a handler from [NewHandler], on mux at
// [PatternIndex] and [PatternAssets], the routes of [Routes].
func Register(mux *http.ServeMux, h http.Handler) {
	route.Register(mux, Routes(h))
}

// handler serves the console.
type handler struct {
	files map[string]file // by name, config.json among them
	csp   string
}

// file is a file of the console, ready to serve.
type file struct {
	body        []byte
	contentType string
	etag        string
}

// NewHandler returns the handler of the console: a path ending in "/" is
// answered with the page, and a path whose last directory is console/
// with the file of that name (config.json being c's public part, the
// admin URL). Other paths, and methods other than GET and HEAD, are
// refused (404, 405) in plain text. Every file has an ETag (a hash of its
// content), so that a browser revalidates it cheaply (304). It is safe
// for concurrent use.
//
// NewHandler panics if c.AdminURL is set but not an absolute http(s)
// URL.
func NewHandler(c Config) http.Handler {
	connect := "'self'"
	if c.AdminURL != "" {
		u, err := url.Parse(c.AdminURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			panic(fmt.Sprintf("console: NewHandler: AdminURL %q is not an absolute http(s) URL", c.AdminURL))
		}
		connect += " " + u.Scheme + "://" + u.Host
		c.AdminURL = strings.TrimSuffix(c.AdminURL, "/")
	}
	config, err := json.Marshal(struct {
		AdminURL string `json:"admin_url"`
	}{c.AdminURL})
	if err != nil {
		panic("console: NewHandler: " + err.Error())
	}
	files := map[string]file{"config.json": newFile(config, "application/json")}
	entries, err := fs.ReadDir(static, "static")
	if err != nil {
		panic("console: NewHandler: " + err.Error())
	}
	for _, e := range entries {
		b, err := fs.ReadFile(static, "static/"+e.Name())
		if err != nil {
			panic("console: NewHandler: " + err.Error())
		}
		files[e.Name()] = newFile(b, contentType(e.Name()))
	}
	return &handler{
		files: files,
		// The page loads nothing from elsewhere; it fetches only the
		// gateway (its own origin) and the admin API; videos and
		// thumbnails are shown from blob: URLs.
		csp: "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' blob: data:; media-src 'self' blob:; connect-src " +
			connect + "; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
	}
}

func newFile(b []byte, contentType string) file {
	sum := sha256.Sum256(b)
	return file{body: b, contentType: contentType, etag: `"` + hex.EncodeToString(sum[:12]) + `"`}
}

// contentType is the type of the file name, independent of the system's
// MIME tables.
func contentType(name string) string {
	switch path.Ext(name) {
	case ".js":
		return "text/javascript; charset=utf-8"
	case ".css":
		return "text/css; charset=utf-8"
	case ".html":
		return "text/html; charset=utf-8"
	case ".svg":
		return "image/svg+xml"
	case ".png":
		return "image/png"
	}
	return "application/octet-stream"
}

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "405 method not allowed", http.StatusMethodNotAllowed)
		return
	}
	p := r.URL.Path
	name := ""
	switch {
	case strings.HasSuffix(p, "/") && !strings.HasSuffix(p, assetsDir):
		name = "index.html"
	case strings.Contains(p, assetsDir):
		name = p[strings.LastIndex(p, assetsDir)+len(assetsDir):]
	}
	if name == "" || strings.Contains(name, "/") {
		http.NotFound(w, r)
		return
	}
	f, ok := h.files[name]
	if !ok {
		http.NotFound(w, r)
		return
	}
	hd := w.Header()
	hd.Set("Content-Security-Policy", h.csp)
	hd.Set("X-Content-Type-Options", "nosniff")
	hd.Set("Referrer-Policy", "no-referrer")
	hd.Set("Cache-Control", "no-cache")
	hd.Set("Content-Type", f.contentType)
	hd.Set("ETag", f.etag)
	http.ServeContent(w, r, name, time.Time{}, bytes.NewReader(f.body))
}
