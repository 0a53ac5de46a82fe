package images

import (
	"bytes"
	"compress/flate"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"time"
)

// URLLifetime is how long the URLs of the handler's own image files work
// after the reply that sent them, as OpenAI's image URLs do.
const URLLifetime = time.Hour

// urlConfig holds the settings of WithURLKey and WithPublicURL.
type urlConfig struct {
	key  []byte
	base string
}

// WithURLKey sets the key that signs the handler's image URLs (HMAC-SHA256),
// so that only URLs that the handler made are served. By default, and when
// key is empty, each handler makes a random key: its URLs stop working when
// the process restarts, and a replica does not serve another's. Give every
// replica behind one address the same key (of 32 random bytes, say).
// Only this package takes it.
func WithURLKey(key []byte) Option {
	key = bytes.Clone(key)
	return option(func(c *config) { c.urls.key = key })
}

// WithPublicURL sets the absolute URL under which clients reach the
// handler, such as "https://api.example.com": the handler's image URLs are
// built under it ("https://api.example.com/v1/images/files/…"). By default
// they are paths relative to the client's origin ("/v1/images/files/…");
// they are never built from the request's Host header. Only this package
// takes it.
func WithPublicURL(base string) Option {
	base = strings.TrimRight(base, "/")
	return option(func(c *config) { c.urls.base = base })
}

// fileRef is what the URL of an image file encodes: the request that drew
// it, the image's index and when the URL expires.
type fileRef struct {
	Model             string `json:"m"`
	Prompt            string `json:"p"`
	N                 int    `json:"n,omitempty"`
	Size              string `json:"s,omitempty"`
	Quality           string `json:"q,omitempty"`
	Style             string `json:"st,omitempty"`
	Background        string `json:"b,omitempty"`
	Moderation        string `json:"md,omitempty"`
	OutputFormat      string `json:"f,omitempty"`
	OutputCompression *int   `json:"c,omitempty"`
	Index             int    `json:"i"`
	Expires           int64  `json:"e"`
}

func newFileRef(req *Request, i int, expires time.Time) *fileRef {
	return &fileRef{Model: req.Model, Prompt: req.Prompt, N: req.N, Size: req.Size, Quality: req.Quality,
		Style: req.Style, Background: req.Background, Moderation: req.Moderation,
		OutputFormat: req.OutputFormat, OutputCompression: req.OutputCompression, Index: i, Expires: expires.Unix()}
}

// request returns the request that f encodes.
func (f *fileRef) request() *Request {
	return &Request{Model: f.Model, Prompt: f.Prompt, N: f.N, Size: f.Size, Quality: f.Quality, Style: f.Style,
		Background: f.Background, Moderation: f.Moderation, OutputFormat: f.OutputFormat,
		OutputCompression: f.OutputCompression, ResponseFormat: FormatURL}
}

// sigLen is the length of the signature of a file name, in bytes.
const sigLen = 16

// maxRefBytes bounds the decompressed reference of a file name.
const maxRefBytes = 1 << 20

var b64 = base64.RawURLEncoding

// fileName returns the name of the file of f, signed with key:
// <deflated JSON>.<signature>.<ext>, in unpadded base64url.
func fileName(key []byte, f *fileRef, ext string) (string, error) {
	js, err := json.Marshal(f)
	if err != nil {
		return "", err
	}
	var buf bytes.Buffer
	zw, _ := flate.NewWriter(&buf, flate.BestCompression) // level is valid
	_, _ = zw.Write(js)
	if err := zw.Close(); err != nil {
		return "", err
	}
	payload := buf.Bytes()
	return b64.EncodeToString(payload) + "." + b64.EncodeToString(sign(key, payload)) + "." + ext, nil
}

func sign(key, payload []byte) []byte {
	m := hmac.New(sha256.New, key)
	m.Write(payload)
	return m.Sum(nil)[:sigLen]
}

// errBadFile is the error of a file name that is malformed, forged or
// expired.
var errBadFile = errors.New("images: bad file name")

// parseFileName returns the reference of a file name that key signed and
// that has not expired at now.
func parseFileName(key []byte, name string, now time.Time) (*fileRef, error) {
	parts := strings.Split(name, ".")
	if len(parts) != 3 {
		return nil, errBadFile
	}
	payload, err1 := b64.DecodeString(parts[0])
	sig, err2 := b64.DecodeString(parts[1])
	if err1 != nil || err2 != nil || !hmac.Equal(sig, sign(key, payload)) {
		return nil, errBadFile
	}
	js, err := io.ReadAll(io.LimitReader(flate.NewReader(bytes.NewReader(payload)), maxRefBytes))
	if err != nil {
		return nil, errBadFile
	}
	f := new(fileRef)
	if err := json.Unmarshal(js, f); err != nil || now.Unix() > f.Expires || f.Index < 0 {
		return nil, errBadFile
	}
	return f, nil
}

// randomKey returns a new random signing key.
func randomKey() []byte {
	k := make([]byte, 32)
	_, _ = rand.Read(k) // never fails (crypto/rand)
	return k
}
