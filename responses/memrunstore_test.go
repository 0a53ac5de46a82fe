package responses_test

import (
	"testing"

	"github.com/gatewaykit/gatewaykit/responses"
	"github.com/gatewaykit/gatewaykit/responses/responsestest"
)

func TestMemoryRunStore(t *testing.T) {
	t.Parallel()
	responsestest.TestRunStore(t, func(*testing.T) responses.RunStore { return responses.NewMemoryRunStore() })
}
