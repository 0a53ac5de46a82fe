package images_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"image/png"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/gatewaykit/gatewaykit/demo"
	"github.com/gatewaykit/gatewaykit/images"
	"github.com/gatewaykit/gatewaykit/models"
)

func ExampleNewHandler() {
	mux := http.NewServeMux()
	catalog := models.NewMemoryCatalog(demo.AccessModels()...)
	images.Register(mux, images.NewHandler(catalog, demo.NewImageBackend()))

	req := httptest.NewRequest("POST", "/v1/images/generations", strings.NewReader(
		`{"model":"demo-image","prompt":"a red kite","size":"64x48","response_format":"b64_json"}`))
	w := httptest.NewRecorder()
	mux.ServeHTTP(w, req)
	var reply images.Reply
	_ = json.Unmarshal(w.Body.Bytes(), &reply)
	raw, _ := base64.StdEncoding.DecodeString(reply.Data[0].B64JSON)
	img, err := png.Decode(bytes.NewReader(raw))
	fmt.Println(img.Bounds().Dx(), img.Bounds().Dy(), err, reply.Usage.TotalTokens)
	// Output:
	// 64 48 <nil> 4
}

func ExampleWithPublicURL() {
	mux := http.NewServeMux()
	catalog := models.NewMemoryCatalog(demo.AccessModels()...)
	images.Register(mux, images.NewHandler(catalog, demo.NewImageBackend(),
		images.WithPublicURL("https://api.example.com"), images.WithURLKey([]byte("shared by the replicas"))))

	req := httptest.NewRequest("POST", "/v1/images/generations", strings.NewReader(
		`{"model":"demo-image","prompt":"a red kite","size":"64x48"}`))
	w := httptest.NewRecorder()
	mux.ServeHTTP(w, req)
	var reply images.Reply
	_ = json.Unmarshal(w.Body.Bytes(), &reply)
	url := reply.Data[0].URL
	fmt.Println(strings.HasPrefix(url, "https://api.example.com/v1/images/files/"), strings.HasSuffix(url, ".png"))

	get := httptest.NewRecorder()
	mux.ServeHTTP(get, httptest.NewRequest("GET", strings.TrimPrefix(url, "https://api.example.com"), nil))
	fmt.Println(get.Code, get.Header().Get("Content-Type"))
	// Output:
	// true true
	// 200 image/png
}
