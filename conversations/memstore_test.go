package conversations_test

import (
	"testing"

	"github.com/gatewaykit/gatewaykit/conversations"
	"github.com/gatewaykit/gatewaykit/conversations/conversationstest"
)

func TestMemoryStore(t *testing.T) {
	conversationstest.TestStore(t, func(*testing.T) conversations.Store { return conversations.NewMemoryStore(nil) })
}
