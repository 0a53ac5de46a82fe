package console

import (
	"embed"
	"encoding/json"
	"fmt"
	"io/fs"
	"mime"
	"net/http"
	"net/url"
	"path"
	"strings"
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

// Register mounts h, a handler from [NewHandler], on mux at
// [PatternIndex] and [PatternAssets].
func Register(mux *http.ServeMux, h http.Handler) {
	mux.Handle(PatternIndex, h)
	mux.Handle(PatternAssets, h)
}

// handler serves the console.
type handler struct {
	files  fs.FS
	config []byte // config.json
	csp    string
}

// NewHandler returns the handler of the console: a path ending in "/" is
// answered with the page, and a path whose last directory is console/
// with the file of that name (config.json being c's public part, the
// admin URL). Other paths, and methods other than GET and HEAD, are
// refused (404, 405) in plain text. It is safe for concurrent use.
//
// NewHandler panics if c.AdminURL is set but not an absolute http(s)
// URL.
func NewHandler(c Config) http.Handler {
	files, err := fs.Sub(static, "static")
	if err != nil {
		panic("console: NewHandler: " + err.Error())
	}
	connect := "'self'"
	if c.AdminURL != "" {
		u, err := url.Parse(c.AdminURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			panic(fmt.Sprintf("console: NewHandler: AdminURL %q is not an absolute http(s) URL", c.AdminURL))
		}
		connect += " " + u.Scheme + "://" + u.Host
		c.AdminURL = strings.TrimSuffix(c.AdminURL, "/")
	}
	b, err := json.Marshal(struct {
		AdminURL string `json:"admin_url"`
	}{c.AdminURL})
	if err != nil {
		panic("console: NewHandler: " + err.Error())
	}
	return &handler{
		files:  files,
		config: b,
		// The page loads nothing from elsewhere; it fetches only the
		// gateway (its own origin) and the admin API; videos and
		// thumbnails are shown from blob: URLs.
		csp: "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' blob: data:; media-src 'self' blob:; connect-src " +
			connect + "; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
	}
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
	hd := w.Header()
	hd.Set("Content-Security-Policy", h.csp)
	hd.Set("X-Content-Type-Options", "nosniff")
	hd.Set("Referrer-Policy", "no-referrer")
	hd.Set("Cache-Control", "no-cache")
	if name == "config.json" {
		hd.Set("Content-Type", "application/json")
		hd.Set("Content-Length", fmt.Sprint(len(h.config)))
		if r.Method == http.MethodGet {
			w.Write(h.config)
		}
		return
	}
	b, err := fs.ReadFile(h.files, name)
	if err != nil {
		http.NotFound(w, r)
		return
	}
	typ := mime.TypeByExtension(path.Ext(name))
	switch path.Ext(name) { // independent of the system's MIME tables
	case ".js":
		typ = "text/javascript; charset=utf-8"
	case ".css":
		typ = "text/css; charset=utf-8"
	case ".html":
		typ = "text/html; charset=utf-8"
	case ".svg":
		typ = "image/svg+xml"
	}
	if typ == "" {
		typ = "application/octet-stream"
	}
	hd.Set("Content-Type", typ)
	hd.Set("Content-Length", fmt.Sprint(len(b)))
	if r.Method == http.MethodGet {
		w.Write(b)
	}
}
