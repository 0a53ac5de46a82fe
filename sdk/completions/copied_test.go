package completions_test

// The declarations of this file are copies of package completions's own test
// helpers (completions/*_test.go), which the tests of this package share with
// the tests that stayed there. The test of package
// github.com/gatewaykit/gatewaykit/sdk/internal/copies checks that they
// are the same; go test ./sdk/internal/copies -update copies them again.

import (
	"github.com/gatewaykit/gatewaykit/internal/endpointtest"
	"github.com/gatewaykit/gatewaykit/models"
)

const videoModel = "demo-video"

func testCatalog() *models.MemoryCatalog {
	return endpointtest.Catalog(models.Model{ID: videoModel, EndpointTypes: []models.EndpointType{models.CompatVideo}})
}
