package responses_test

// The declarations of this file are copies of package responses's own test
// helpers (responses/*_test.go), which the tests of this package share with
// the tests that stayed there. The test of package
// github.com/gatewaykit/gatewaykit/sdk/internal/copies checks that they
// are the same; go test ./sdk/internal/copies -update copies them again.

import (
	"context"
	"errors"
	"sync/atomic"

	"github.com/gatewaykit/gatewaykit/internal/endpointtest"
	"github.com/gatewaykit/gatewaykit/models"
	"github.com/gatewaykit/gatewaykit/responses"
)

// Models of the test catalogue besides the demo's: one that lacks the
// compat-response endpoint type.
const chatOnlyModel = "demo-chat-only"

func testCatalog() *models.MemoryCatalog {
	return endpointtest.Catalog(models.Model{ID: chatOnlyModel, EndpointTypes: []models.EndpointType{models.Compat}})
}

// fullStore is a store whose disk is full: Get and Delete work, Put
// fails.
type fullStore struct {
	*responses.MemoryStore
	puts atomic.Int32
}

func (s *fullStore) Put(context.Context, *responses.StoredResponse) error {
	s.puts.Add(1)
	return errors.New("sqlite: storing response: database or disk is full (13)")
}

// notStoredMessage is the message of a response that could not be stored.
const notStoredMessage = "The response was generated and charged, but it could not be stored: " +
	"it cannot be retrieved, nor continued with previous_response_id. Sending the request again generates and charges a new response."
