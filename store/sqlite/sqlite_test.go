package sqlite_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/auth"
	"github.com/gatewaykit/gatewaykit/auth/authtest"
	"github.com/gatewaykit/gatewaykit/conversations"
	"github.com/gatewaykit/gatewaykit/conversations/conversationstest"
	"github.com/gatewaykit/gatewaykit/responses"
	"github.com/gatewaykit/gatewaykit/responses/responsestest"
	"github.com/gatewaykit/gatewaykit/store/sqlite"
	"github.com/gatewaykit/gatewaykit/videos"
	"github.com/gatewaykit/gatewaykit/videos/videostest"
)

// open opens a fresh database file in t's temporary directory, closed
// at the end of the test.
func open(t *testing.T) *sqlite.DB {
	t.Helper()
	db, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "gateway.db"), nil)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, db.Close()) })
	return db
}

func TestKeyStore(t *testing.T) {
	authtest.TestKeyStore(t, func(t *testing.T, seeds []authtest.Seed) auth.KeyStore {
		ks := open(t).Keys()
		for _, sd := range seeds {
			require.NoError(t, ks.Add(context.Background(), sd.Secret, sd.Key))
		}
		return ks
	})
}

func TestKeyPutter(t *testing.T) {
	authtest.TestKeyPutter(t, func(t *testing.T) authtest.PutStore { return open(t).Keys() })
}

func TestIDLookup(t *testing.T) {
	authtest.TestIDLookup(t, func(t *testing.T) authtest.IDStore { return open(t).Keys() })
}

func TestKeyAdmin(t *testing.T) {
	authtest.TestKeyAdmin(t, func(t *testing.T) authtest.AdminStore { return open(t).Keys() })
}

func TestUsageReader(t *testing.T) {
	authtest.TestUsageReader(t, func(t *testing.T) authtest.UsageStore { return open(t).Keys() })
}

func TestResponseStore(t *testing.T) {
	responsestest.TestStore(t, func(t *testing.T) responses.Store { return open(t).Responses() })
}

func TestRunStore(t *testing.T) {
	responsestest.TestRunStore(t, func(t *testing.T) responses.RunStore { return open(t).Runs() })
}

func TestConversationStore(t *testing.T) {
	conversationstest.TestStore(t, func(t *testing.T) conversations.Store { return open(t).Conversations() })
}

func TestTaskStore(t *testing.T) {
	videostest.TestTaskStore(t, func(t *testing.T) videos.TaskStore { return open(t).Tasks() })
}

func TestContentStore(t *testing.T) {
	videostest.TestContentStore(t, func(t *testing.T) videos.ContentStore { return open(t).Contents() })
}
