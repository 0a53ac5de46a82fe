package relay

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"mime/multipart"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	apierrors "github.com/gatewaykit/gatewaykit/errors"
)

// findModelDecoder is the reference for findModel: the same contract,
// with encoding/json's Decoder. It reads the top-level "model" member of a JSON object body,
// without decoding the rest into values: a gateway forwards every member,
// modelled or not, as the client sent it. Errors are 400
// invalid_request_error values for a body that is not one JSON object,
// a model that is not a string, and a model named twice.
//
// Members whose name equals "model" ignoring case count as the model too:
// encoding/json, and so many upstreams, match member names that way, so a
// second "MODEL" could otherwise choose another model than the one
// checked. Such a body is refused.
func findModelDecoder(body []byte) (modelLoc, error) {
	var loc modelLoc
	if len(bytes.TrimSpace(body)) == 0 {
		return loc, apierrors.InvalidRequest("", "request body is empty; expected a JSON object")
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	tok, err := dec.Token()
	if err != nil {
		return loc, syntaxError(err)
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return loc, apierrors.InvalidRequest("", "request body must be a JSON object")
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return loc, syntaxError(err)
		}
		key, _ := tok.(string) // a member name: the decoder guarantees a string here
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return loc, syntaxError(err)
		}
		if !strings.EqualFold(key, "model") {
			continue
		}
		if loc.end != 0 {
			return loc, apierrors.InvalidRequest("model", "model must appear once in the request body")
		}
		if err := json.Unmarshal(raw, &loc.model); err != nil {
			return loc, apierrors.InvalidRequestf("model", "model must be a string, got %s", apierrors.Echo(string(raw)))
		}
		loc.end = int(dec.InputOffset())
		loc.start = loc.end - len(raw)
	}
	if _, err := dec.Token(); err != nil { // the closing brace
		return loc, syntaxError(err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return loc, apierrors.InvalidRequest("", "request body must hold a single JSON value")
	}
	return loc, nil
}

// FuzzFindModel checks that findModel never panics, agrees with the
// Decoder-based reference, accepts only valid JSON objects, and that
// renaming the model changes nothing else.
func FuzzFindModel(f *testing.F) {
	for _, s := range []string{
		`{"model":"m","input":"x"}`,
		`{"input":[1,{"model":"inner"}],"model":"m"}`,
		` {"a":1, "model" : "m\u00e9" , "b":{}} `,
		`{"Model":"m"}`,
		`{"model":"a","MODEL":"b"}`,
		`{"model":1}`,
		`{}`, `[]`, `"model"`, `{"model":"m"} {}`, `{"model":"m"`, ``,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		loc, err := findModel(body)
		ref, refErr := findModelDecoder(body)
		if (err == nil) != (refErr == nil) || (err == nil && loc != ref) {
			t.Fatalf("findModel(%q) = %+v, %v; the decoder finds %+v, %v", body, loc, err, ref, refErr)
		}
		if err != nil {
			return
		}
		if !json.Valid(body) {
			t.Fatalf("accepted invalid JSON %q", body)
		}
		if loc.end == 0 {
			return
		}
		const name = "renamed/\"model\"\n"
		out := loc.rename(body, name)
		got, err := findModel(out)
		if err != nil {
			t.Fatalf("renamed body %q: %v", out, err)
		}
		if got.model != name {
			t.Fatalf("renamed body %q names %q", out, got.model)
		}
		var before, after map[string]any
		if err := json.Unmarshal(body, &before); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(out, &after); err != nil {
			t.Fatal(err)
		}
		for k := range before {
			if strings.EqualFold(k, "model") {
				delete(before, k)
				delete(after, k)
			}
		}
		if diff := cmp.Diff(before, after); diff != "" {
			t.Fatalf("renaming changed other members (-before +after):\n%s", diff)
		}
	})
}

// rawPart is a part as read with NextRawPart.
type rawPart struct {
	Name   string
	Header map[string][]string
	Data   string
}

func readRawParts(r io.Reader, boundary string) ([]rawPart, error) {
	mr := multipart.NewReader(r, boundary)
	var parts []rawPart
	for {
		p, err := mr.NextRawPart()
		if err == io.EOF {
			return parts, nil
		}
		if err != nil {
			return nil, err
		}
		data, err := io.ReadAll(p)
		if err != nil {
			return nil, err
		}
		parts = append(parts, rawPart{p.FormName(), p.Header, string(data)})
	}
}

// FuzzFormEncoder checks that the upstream body of a multipart upload
// holds the client's parts, in order, with the first model field renamed
// and later ones dropped, whatever the client sent.
func FuzzFormEncoder(f *testing.F) {
	const boundary = "xyz"
	seed := func(fields ...string) []byte {
		var b bytes.Buffer
		mw := multipart.NewWriter(&b)
		_ = mw.SetBoundary(boundary)
		for i := 0; i+1 < len(fields); i += 2 {
			if fields[i] == "file" {
				fw, _ := mw.CreateFormFile("file", "a.wav")
				_, _ = io.WriteString(fw, fields[i+1])
				continue
			}
			_ = mw.WriteField(fields[i], fields[i+1])
		}
		_ = mw.Close()
		return b.Bytes()
	}
	f.Add(seed("model", "m", "file", "abc"))
	f.Add(seed("file", strings.Repeat("\r\n--xy", 100), "language", "en", "model", "m"))
	f.Add(seed("model", "m", "model", "other", "file", ""))
	f.Add(seed("file", "x"))
	f.Add([]byte("--xyz\r\nContent-Disposition: form-data; name=\"model\"\r\n\r\nm\r\n--xyz--"))
	f.Fuzz(func(t *testing.T, body []byte) {
		want, err := readRawParts(bytes.NewReader(body), boundary)
		if err != nil {
			return // the handler refuses such a body
		}
		fm, err := readForm(multipart.NewReader(bytes.NewReader(body), boundary))
		defer fm.close()
		var api *apierrors.Error
		if errors.As(err, &api) && api.Param == "model" {
			return // a model field too long to be a model name
		}
		if err != nil {
			t.Fatalf("readForm refused a body that parses: %v", err)
		}
		if fm.rest == nil {
			return // no model field: refused by the model check
		}
		out, err := io.ReadAll(fm.encoder(boundary, "renamed"))
		if err != nil {
			t.Fatalf("encoding: %v", err)
		}
		got, err := readRawParts(bytes.NewReader(out), boundary)
		if err != nil {
			t.Fatalf("the upstream body does not parse: %v\n%q", err, out)
		}
		var expect []rawPart
		seen := false
		for _, p := range want {
			if p.Name == "model" {
				if seen {
					continue
				}
				seen = true
				p.Data = "renamed"
			}
			expect = append(expect, p)
		}
		if diff := cmp.Diff(expect, got); diff != "" {
			t.Fatalf("upstream parts (-want +got):\n%s", diff)
		}
	})
}
