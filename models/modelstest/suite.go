// Package modelstest holds the conformance suite of the models.Catalog
// interface. Every implementation in gatewaykit runs it, and embedders run
// it against their own:
//
//	func TestCatalog(t *testing.T) {
//		modelstest.TestCatalog(t, func(t *testing.T, list []models.Model) models.Catalog {
//			return mydb.NewCatalog(t, list) // an empty store, filled with list
//		})
//	}
package modelstest

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/models"
)

// Fixtures returns the models that TestCatalog loads: a text model, a
// reasoning model with every optional field, and a video model with every
// capability set. Each call returns new values.
func Fixtures() []models.Model {
	return []models.Model{
		{
			ID:            "text-basic",
			OwnedBy:       "gatewaykit",
			Created:       1700000000,
			EndpointTypes: []models.EndpointType{models.Compat},
		},
		{
			ID:               "org/reasoner-2",
			OwnedBy:          "org",
			Created:          1710000000,
			EndpointTypes:    []models.EndpointType{models.Compat, models.CompatResponse},
			DisplayName:      "Reasoner 2",
			Description:      "A reasoning model.",
			Version:          "2.0",
			InputTokenLimit:  200000,
			OutputTokenLimit: 32000,
			Reasoning:        true,
		},
		{
			ID:            "video-first-kind",
			OwnedBy:       "vendor",
			Created:       1720000000,
			EndpointTypes: []models.EndpointType{models.CompatVideo},
			Video: &models.VideoCapabilities{
				Modes:          []models.VideoMode{models.ModeT2V, models.ModeI2V, models.ModeFirstLastFrame},
				Seconds:        models.FirstKindSeconds(),
				DefaultSeconds: 8,
				Sizes:          []string{"1280x720", "720x1280"},
				SizeRequired:   true,
				DefaultSize:    "1280x720",
				Resolutions:    []string{models.Resolution720p, models.Resolution1080p},
				MaxPromptChars: 2000,
			},
		},
	}
}

// TestCatalog checks the models.Catalog contract. newCatalog is called once
// per subtest, with the models the subtest needs (often [Fixtures]), and
// must return a catalogue holding exactly those models. Subtests run in
// parallel.
func TestCatalog(t *testing.T, newCatalog func(t *testing.T, list []models.Model) models.Catalog) {
	t.Helper()
	ctx := context.Background()

	byID := func(list []models.Model) []models.Model {
		s := slices.Clone(list)
		slices.SortFunc(s, func(a, b models.Model) int { return strings.Compare(a.ID, b.ID) })
		return s
	}

	t.Run("GetReturnsEveryFieldOfTheModel", func(t *testing.T) {
		t.Parallel()
		c := newCatalog(t, Fixtures())
		for _, want := range Fixtures() {
			got, err := c.Get(ctx, want.ID)
			require.NoError(t, err, want.ID)
			require.NotNil(t, got, want.ID)
			if diff := cmp.Diff(want, *got); diff != "" {
				t.Errorf("Get(%q) mismatch (-want +got):\n%s", want.ID, diff)
			}
		}
	})

	t.Run("GetReturnsErrNotFoundIfModelDoesNotExist", func(t *testing.T) {
		t.Parallel()
		c := newCatalog(t, Fixtures())
		got, err := c.Get(ctx, "no-such-model")
		require.ErrorIs(t, err, models.ErrNotFound)
		require.Nil(t, got)
	})

	t.Run("GetReturnsErrNotFoundForEmptyID", func(t *testing.T) {
		t.Parallel()
		c := newCatalog(t, Fixtures())
		_, err := c.Get(ctx, "")
		require.ErrorIs(t, err, models.ErrNotFound)
	})

	t.Run("GetMatchesIDsExactly", func(t *testing.T) {
		t.Parallel()
		c := newCatalog(t, Fixtures())
		for _, id := range []string{"TEXT-BASIC", "text-basic ", "reasoner-2", "models/text-basic"} {
			_, err := c.Get(ctx, id)
			require.ErrorIs(t, err, models.ErrNotFound, id)
		}
	})

	t.Run("GetReturnsErrNotFoundInEmptyCatalog", func(t *testing.T) {
		t.Parallel()
		c := newCatalog(t, nil)
		_, err := c.Get(ctx, "text-basic")
		require.ErrorIs(t, err, models.ErrNotFound)
	})

	t.Run("ListReturnsEveryModelOnce", func(t *testing.T) {
		t.Parallel()
		c := newCatalog(t, Fixtures())
		got, err := c.List(ctx)
		require.NoError(t, err)
		if diff := cmp.Diff(byID(Fixtures()), byID(got)); diff != "" {
			t.Errorf("List mismatch, compared sorted by id (-want +got):\n%s", diff)
		}
	})

	t.Run("ListOfEmptyCatalogIsEmpty", func(t *testing.T) {
		t.Parallel()
		c := newCatalog(t, nil)
		got, err := c.List(ctx)
		require.NoError(t, err)
		require.Empty(t, got)
	})

	t.Run("ListOrderIsStable", func(t *testing.T) {
		t.Parallel()
		c := newCatalog(t, Fixtures())
		first, err := c.List(ctx)
		require.NoError(t, err)
		for range 5 {
			again, err := c.List(ctx)
			require.NoError(t, err)
			if diff := cmp.Diff(first, again); diff != "" {
				t.Fatalf("List order changed between calls (-first +again):\n%s", diff)
			}
		}
	})

	t.Run("ChangingReturnedModelsDoesNotChangeCatalog", func(t *testing.T) {
		t.Parallel()
		c := newCatalog(t, Fixtures())
		video := Fixtures()[2]

		got, err := c.Get(ctx, video.ID)
		require.NoError(t, err)
		got.OwnedBy = "changed"
		got.EndpointTypes[0] = "changed"
		got.Video.Seconds[0] = 99
		got.Video.Sizes[0] = "1x1"

		list, err := c.List(ctx)
		require.NoError(t, err)
		for i := range list {
			list[i].DisplayName = "changed"
			if len(list[i].EndpointTypes) > 0 {
				list[i].EndpointTypes[0] = "changed"
			}
			if list[i].Video != nil {
				list[i].Video.Modes[0] = "changed"
			}
		}

		again, err := c.Get(ctx, video.ID)
		require.NoError(t, err)
		if diff := cmp.Diff(video, *again); diff != "" {
			t.Errorf("Get after changing returned values (-want +got):\n%s", diff)
		}
		list, err = c.List(ctx)
		require.NoError(t, err)
		if diff := cmp.Diff(byID(Fixtures()), byID(list)); diff != "" {
			t.Errorf("List after changing returned values (-want +got):\n%s", diff)
		}
	})

	t.Run("ChangingInputModelsDoesNotChangeCatalog", func(t *testing.T) {
		t.Parallel()
		in := Fixtures()
		c := newCatalog(t, in)
		in[0].EndpointTypes[0] = "changed"
		in[2].Video.Seconds[0] = 99

		got, err := c.Get(ctx, in[2].ID)
		require.NoError(t, err)
		if diff := cmp.Diff(Fixtures()[2], *got); diff != "" {
			t.Errorf("Get after changing the input (-want +got):\n%s", diff)
		}
		got, err = c.Get(ctx, in[0].ID)
		require.NoError(t, err)
		if diff := cmp.Diff(Fixtures()[0], *got); diff != "" {
			t.Errorf("Get after changing the input (-want +got):\n%s", diff)
		}
	})

	t.Run("HoldsManyModels", func(t *testing.T) {
		t.Parallel()
		var in []models.Model
		for i := range 250 {
			m := Fixtures()[i%3]
			m.ID = fmt.Sprintf("%s-%03d", m.ID, i)
			in = append(in, m)
		}
		c := newCatalog(t, in)
		list, err := c.List(ctx)
		require.NoError(t, err)
		if diff := cmp.Diff(byID(in), byID(list)); diff != "" {
			t.Errorf("List mismatch (-want +got):\n%s", diff)
		}
		for _, m := range []models.Model{in[0], in[124], in[249]} {
			got, err := c.Get(ctx, m.ID)
			require.NoError(t, err)
			require.Equal(t, m.ID, got.ID)
		}
	})

	t.Run("IsSafeForConcurrentUse", func(t *testing.T) {
		t.Parallel()
		c := newCatalog(t, Fixtures())
		var wg sync.WaitGroup
		for g := range 8 {
			wg.Go(func() {
				for i := range 50 {
					m := Fixtures()[(g+i)%3]
					got, err := c.Get(ctx, m.ID)
					if err != nil || got.ID != m.ID {
						t.Errorf("Get(%q) = %v, %v", m.ID, got, err)
						return
					}
					list, err := c.List(ctx)
					if err != nil || len(list) != 3 {
						t.Errorf("List() = %d models, %v", len(list), err)
						return
					}
				}
			})
		}
		wg.Wait()
	})
}
