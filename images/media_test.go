package images_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/demo"
	"github.com/gatewaykit/gatewaykit/images"
	"github.com/gatewaykit/gatewaykit/internal/servedtest"
)

// typedRedraw is the demo's image backend, whose redrawn files are of a
// type of its choosing, as a backend that passes on an upstream's image
// would have.
type typedRedraw struct {
	*demo.ImageBackend
	contentType string
}

func (b typedRedraw) Redraw(ctx context.Context, p *images.Params, i int) (*images.Image, error) {
	return &images.Image{ContentType: b.contentType,
		Data: []byte(`<svg xmlns="http://www.w3.org/2000/svg"><script>alert(document.domain)</script></svg>`)}, nil
}

// TestFilesAreNeverPages: an image file is sent as an image type, or
// else as application/octet-stream for download; never sniffed, and
// sandboxed.
func TestFilesAreNeverPages(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ declared, want, disposition string }{
		{"image/png", "image/png", ""},
		{"image/webp", "image/webp", ""},
		{"image/svg+xml", "application/octet-stream", "attachment"},
		{"text/html", "application/octet-stream", "attachment"},
		{"", "application/octet-stream", "attachment"}, // sniffed as text/xml
	} {
		t.Run(tc.declared, func(t *testing.T) {
			t.Parallel()
			h := newMux(typedRedraw{demo.NewImageBackend(), tc.declared})
			r := decode(t, servedtest.PostJSON(h, "/v1/images/generations", `{"model":"demo-image","prompt":"kite","size":"16x16"}`).Body.Bytes())
			for _, method := range []string{"GET", "HEAD"} {
				w := servedtest.Do(h, method, r.Data[0].URL, "", nil)
				require.Equal(t, 200, w.Code, w.Body.String())
				require.Equal(t, tc.want, w.Header().Get("Content-Type"))
				require.Equal(t, tc.disposition, w.Header().Get("Content-Disposition"))
				require.Equal(t, "nosniff", w.Header().Get("X-Content-Type-Options"))
				require.Equal(t, "sandbox", w.Header().Get("Content-Security-Policy"))
			}
		})
	}
}
