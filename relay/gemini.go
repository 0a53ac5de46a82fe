package relay

import (
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	apierrors "github.com/gatewaykit/gatewaykit/errors"
	"github.com/gatewaykit/gatewaykit/internal/httpjson"
)

// The Gemini-style methods relayed on PatternGemini.
const (
	geminiGenerate = "generateContent"
	geminiStream   = "streamGenerateContent"
)

// parseGeminiAction splits the action of a Gemini-style path (the
// {action...} of PatternGemini, "gemini-2.0-flash:generateContent") into
// the model and the method, which must be one of the two this gateway
// serves.
func parseGeminiAction(action string) (model, method string, ok bool) {
	j := strings.LastIndexByte(action, ':')
	if j <= 0 {
		return "", "", false
	}
	model, method = action[:j], action[j+1:]
	if method != geminiGenerate && method != geminiStream {
		return "", "", false
	}
	return model, method, true
}

// geminiURL returns the upstream URL of a Gemini-style call. An upstream's
// BaseURL ends in /v1 (the OpenAI-compatible API); the Gemini-style API
// sits beside it, under /v1beta at the same root, as on this gateway:
//
//	BaseURL http://host:9000/v1      → http://host:9000/v1beta/models/{model}:{method}
//	BaseURL https://host/api/v1      → https://host/api/v1beta/models/{model}:{method}
//	BaseURL https://host/v1beta      → https://host/v1beta/models/{model}:{method}
//
// A BaseURL that ends in /v1beta is used as it is (Google's own API,
// https://generativelanguage.googleapis.com/v1beta); any other is taken as
// the root. Each segment of the model name is path-escaped; query is
// appended as it is.
func geminiURL(base, model, method, query string) string {
	switch {
	case strings.HasSuffix(base, "/v1beta"):
	case strings.HasSuffix(base, "/v1"):
		base += "beta"
	default:
		base += "/v1beta"
	}
	segs := strings.Split(model, "/")
	for i, s := range segs {
		segs[i] = url.PathEscape(s)
	}
	u := base + "/models/" + strings.Join(segs, "/") + ":" + method
	if query != "" {
		u += "?" + query
	}
	return u
}

// serveGemini relays POST /v1beta/models/{model}:generateContent and
// :streamGenerateContent. The model comes from the path; the body, which
// needs no look, is streamed to the upstream as the client sends it. The
// query goes upstream without the client's key parameter (alt=sse stays).
func (h *accessHandler) serveGemini(w http.ResponseWriter, r *http.Request) error {
	model, method, ok := parseGeminiAction(r.PathValue("action"))
	if !ok {
		return apierrors.NotFound(fmt.Sprintf("No Gemini-style method at %s; this gateway serves :%s and :%s.", apierrors.Echo(r.URL.Path), geminiGenerate, geminiStream))
	}
	if fb := h.fallbackFor(geminiEndpoint, model); fb != nil {
		fb.ServeHTTP(w, r)
		return nil
	}
	if err := httpjson.CheckContentType(r); err != nil {
		return err
	}
	ctx := r.Context()
	if err := h.check(ctx, geminiEndpoint, model); err != nil {
		return err
	}
	limit := h.cfg.maxBytes
	if r.ContentLength > limit {
		return httpjson.TooLarge(limit)
	}
	if err := h.reserve(ctx, geminiEstimate(r.ContentLength)); err != nil {
		return err
	}
	q := r.URL.Query()
	q.Del("key")
	query := q.Encode()
	src := http.MaxBytesReader(w, r.Body, limit)
	body := newStreamBody(func(*Upstream) io.Reader { return src })
	res, u, err := h.relay.Do(withFormat(ctx, formatGemini), model, func(u *Upstream) (*http.Request, error) {
		b, err := body.attempt(u)
		if err != nil {
			return nil, err
		}
		req, err := http.NewRequest(http.MethodPost, geminiURL(u.BaseURL, u.Model, method, query), b)
		if err != nil {
			return nil, err
		}
		req.ContentLength = r.ContentLength
		req.Header.Set("Content-Type", "application/json")
		h.setHeaders(r, req, formatGemini)
		return req, nil
	})
	if body.tooLarge() {
		if res != nil {
			res.Body.Close()
		}
		return httpjson.TooLarge(limit)
	}
	if err != nil {
		return err
	}
	return h.reply(w, r, formatGemini, res, u)
}
