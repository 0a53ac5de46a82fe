package audio_test

import (
	"bytes"
	"encoding/binary"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/audio"
	"github.com/gatewaykit/gatewaykit/demo"
	"github.com/gatewaykit/gatewaykit/internal/servedtest"
	"github.com/gatewaykit/gatewaykit/models"
)

func catalog() models.Catalog {
	return models.NewMemoryCatalog(append(demo.AccessModels(), demo.TextModels()...)...)
}

func newMux(b audio.Backend, opts ...audio.Option) *http.ServeMux {
	mux := http.NewServeMux()
	audio.Register(mux, audio.NewHandler(catalog(), b, opts...))
	return mux
}

type field struct{ name, value string }

// form returns a multipart body with a file part (unless file is nil)
// and the fields, and its content type.
func form(t testing.TB, fileName string, file []byte, fields ...field) ([]byte, string) {
	var b bytes.Buffer
	mw := multipart.NewWriter(&b)
	if file != nil {
		fw, err := mw.CreateFormFile("file", fileName)
		require.NoError(t, err)
		_, err = fw.Write(file)
		require.NoError(t, err)
	}
	for _, f := range fields {
		require.NoError(t, mw.WriteField(f.name, f.value))
	}
	require.NoError(t, mw.Close())
	return b.Bytes(), mw.FormDataContentType()
}

func upload(t testing.TB, h http.Handler, path, fileName string, file []byte, fields ...field) *httptest.ResponseRecorder {
	body, ct := form(t, fileName, file, fields...)
	return servedtest.Do(h, "POST", path, ct, body)
}

// wavHeader is what a test reads of a WAV file.
type wavHeader struct {
	channels, bits uint16
	rate           uint32
	dataBytes      int
	comment        string
}

func readWAV(t *testing.T, b []byte) wavHeader {
	t.Helper()
	require.GreaterOrEqual(t, len(b), 44)
	require.Equal(t, "RIFF", string(b[:4]))
	require.Equal(t, "WAVE", string(b[8:12]))
	require.Equal(t, len(b)-8, int(binary.LittleEndian.Uint32(b[4:])), "RIFF size")
	var h wavHeader
	for p := 12; p+8 <= len(b); {
		id, size := string(b[p:p+4]), int(binary.LittleEndian.Uint32(b[p+4:]))
		body := b[p+8 : p+8+size]
		switch id {
		case "fmt ":
			require.Equal(t, uint16(1), binary.LittleEndian.Uint16(body), "PCM")
			h.channels = binary.LittleEndian.Uint16(body[2:])
			h.rate = binary.LittleEndian.Uint32(body[4:])
			h.bits = binary.LittleEndian.Uint16(body[14:])
		case "LIST":
			for q := 4; q+8 <= len(body); {
				sid, ssize := string(body[q:q+4]), int(binary.LittleEndian.Uint32(body[q+4:]))
				if sid == "ICMT" {
					h.comment = string(bytes.TrimRight(body[q+8:q+8+ssize], "\x00"))
				}
				q += 8 + ssize + ssize%2
			}
		case "data":
			h.dataBytes = size
		}
		p += 8 + size + size%2
	}
	return h
}
