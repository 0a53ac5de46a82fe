// Package imagestest is the conformance suite of images.Backend (and
// images.Redrawer): every implementation runs it.
package imagestest

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/images"
	"github.com/gatewaykit/gatewaykit/models"
)

// TestBackend checks the images.Backend contract against the backend that
// newBackend returns (called once per subtest) for model, which must draw
// size (such as "64x64") with the backend's default output format. A
// backend that is an images.Redrawer must redraw each image as Generate
// drew it.
func TestBackend(t *testing.T, newBackend func(t *testing.T) images.Backend, model *models.Model, size string) {
	generate := func(t *testing.T, b images.Backend, req *images.Request) *images.Result {
		t.Helper()
		require.NoError(t, images.Validate(req), "the suite's request is valid")
		res, err := b.Generate(t.Context(), &images.Params{Request: req, Model: model})
		require.NoError(t, err)
		require.NotNil(t, res)
		require.Len(t, res.Images, req.Count())
		return res
	}
	t.Run("ReturnsTheImagesAskedForWithTheirData", func(t *testing.T) {
		t.Parallel()
		req := &images.Request{Model: model.ID, Prompt: "a red kite", N: 2, Size: size, ResponseFormat: images.FormatB64JSON}
		for _, img := range generate(t, newBackend(t), req).Images {
			require.NotEmpty(t, img.Data, "b64_json needs the image's Data")
		}
	})
	t.Run("ReturnsAURLOrCanRedraw", func(t *testing.T) {
		t.Parallel()
		b := newBackend(t)
		req := &images.Request{Model: model.ID, Prompt: "a blue kite", N: 2, Size: size, ResponseFormat: images.FormatURL}
		res := generate(t, b, req)
		rd, redraws := b.(images.Redrawer)
		for i, img := range res.Images {
			if img.URL != "" {
				continue
			}
			require.True(t, redraws, "an image without a URL needs a Redrawer")
			again, err := rd.Redraw(t.Context(), &images.Params{Request: req, Model: model}, i)
			require.NoError(t, err)
			require.Equal(t, img.Data, again.Data, "Redraw draws image %d as Generate did", i)
		}
	})
}
