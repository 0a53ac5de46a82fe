package models_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/models"
	"github.com/gatewaykit/gatewaykit/models/modelstest"
)

func TestMemoryCatalog(t *testing.T) {
	modelstest.TestCatalog(t, func(t *testing.T, list []models.Model) models.Catalog {
		return models.NewMemoryCatalog(list...)
	})
}

func ids(t *testing.T, c models.Catalog) []string {
	t.Helper()
	list, err := c.List(context.Background())
	require.NoError(t, err)
	out := make([]string, len(list))
	for i, m := range list {
		out[i] = m.ID
	}
	return out
}

func TestMemoryCatalogKeepsInsertionOrder(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	m := func(id string) models.Model {
		return models.Model{ID: id, EndpointTypes: []models.EndpointType{models.Compat}}
	}
	c := models.NewMemoryCatalog(m("zeta"), m("alpha"), m("mid"))
	require.Equal(t, []string{"zeta", "alpha", "mid"}, ids(t, c))

	require.NoError(t, c.Put(m("new")))
	require.Equal(t, []string{"zeta", "alpha", "mid", "new"}, ids(t, c))

	replaced := m("alpha")
	replaced.OwnedBy = "someone"
	require.NoError(t, c.Put(replaced))
	require.Equal(t, []string{"zeta", "alpha", "mid", "new"}, ids(t, c))
	got, err := c.Get(ctx, "alpha")
	require.NoError(t, err)
	require.Equal(t, "someone", got.OwnedBy)

	require.True(t, c.Delete("zeta"))
	require.False(t, c.Delete("zeta"))
	require.Equal(t, []string{"alpha", "mid", "new"}, ids(t, c))
	_, err = c.Get(ctx, "zeta")
	require.ErrorIs(t, err, models.ErrNotFound)
	got, err = c.Get(ctx, "new")
	require.NoError(t, err)
	require.Equal(t, "new", got.ID)

	require.NoError(t, c.Put(m("zeta")))
	require.Equal(t, []string{"alpha", "mid", "new", "zeta"}, ids(t, c))
}

func TestMemoryCatalogPutRejectsEmptyID(t *testing.T) {
	t.Parallel()
	c := models.NewMemoryCatalog()
	require.Error(t, c.Put(models.Model{}))
	require.Empty(t, ids(t, c))
}

func TestMemoryCatalogPutCopies(t *testing.T) {
	t.Parallel()
	c := models.NewMemoryCatalog()
	in := models.Model{ID: "a", EndpointTypes: []models.EndpointType{models.Compat}}
	require.NoError(t, c.Put(in))
	in.EndpointTypes[0] = models.CompatVideo
	got, err := c.Get(context.Background(), "a")
	require.NoError(t, err)
	require.Equal(t, []models.EndpointType{models.Compat}, got.EndpointTypes)
}

func TestNewMemoryCatalogPanics(t *testing.T) {
	t.Parallel()
	a := models.Model{ID: "a"}
	require.PanicsWithValue(t, "models: NewMemoryCatalog: empty model id", func() {
		models.NewMemoryCatalog(a, models.Model{})
	})
	require.PanicsWithValue(t, `models: NewMemoryCatalog: duplicate model id "a"`, func() {
		models.NewMemoryCatalog(a, a)
	})
}
