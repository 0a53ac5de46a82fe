package sqlstore_test

import (
	"errors"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/gatewaykit/gatewaykit/auth"
	"github.com/gatewaykit/gatewaykit/conversations"
	"github.com/gatewaykit/gatewaykit/responses"
	"github.com/gatewaykit/gatewaykit/store/internal/sqlstore"
	"github.com/gatewaykit/gatewaykit/videos"
)

func TestSettle(t *testing.T) {
	for _, tc := range []struct {
		name    string
		q       auth.Quota
		p       auth.SettleParams
		want    auth.Quota
		covered bool
	}{
		{"within", auth.Quota{Remaining: 10, Reserved: 5}, auth.SettleParams{Reserved: 5, Used: 4}, auth.Quota{Remaining: 6, Used: 4}, true},
		{"over", auth.Quota{Remaining: 3}, auth.SettleParams{Used: 4}, auth.Quota{Used: 4}, false},
		{"unlimited", auth.Quota{Unlimited: true, Reserved: 2}, auth.SettleParams{Used: 9}, auth.Quota{Unlimited: true, Used: 9}, true},
		{"saturates", auth.Quota{Remaining: 1, Used: math.MaxInt64 - 1}, auth.SettleParams{Used: 1}, auth.Quota{Used: math.MaxInt64}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, covered := sqlstore.Settle(tc.q, tc.p)
			if got != tc.want || covered != tc.covered {
				t.Errorf("Settle = %+v, %v; want %+v, %v", got, covered, tc.want, tc.covered)
			}
		})
	}
	if got := sqlstore.AddSat(math.MaxInt64, 1); got != math.MaxInt64 {
		t.Errorf("AddSat = %d", got)
	}
}

func TestPage(t *testing.T) {
	for _, tc := range []struct {
		items []int
		limit int
		want  []int
		more  bool
	}{
		{nil, 2, []int{}, false},
		{[]int{1, 2, 3}, 2, []int{1, 2}, true},
		{[]int{1, 2}, 2, []int{1, 2}, false},
		{[]int{1, 2, 3}, 0, []int{1, 2, 3}, false},
	} {
		got, more := sqlstore.Page(tc.items, tc.limit)
		if got == nil || len(got) != len(tc.want) || more != tc.more {
			t.Errorf("sqlstore.Page(%v, %d) = %v, %v; want %v, %v", tc.items, tc.limit, got, more, tc.want, tc.more)
		}
	}
}

func TestItems(t *testing.T) {
	items := []responses.Item{{ID: "a"}, {ID: "b"}, {ID: "a"}}
	if got := sqlstore.DuplicateID(items); got != "a" {
		t.Errorf("DuplicateID = %q", got)
	}
	if got := sqlstore.DuplicateID(items[:2]); got != "" {
		t.Errorf("DuplicateID = %q", got)
	}
	if after, cmp, order := sqlstore.ItemPage(conversations.ItemQuery{Order: conversations.OrderDesc}); after != 1<<62 || cmp != "<" || order != "DESC" {
		t.Errorf("sqlstore.ItemPage(desc) = %d %s %s", after, cmp, order)
	}
	if after, cmp, order := sqlstore.ItemPage(conversations.ItemQuery{}); after != 0 || cmp != ">" || order != "ASC" {
		t.Errorf("sqlstore.ItemPage(asc) = %d %s %s", after, cmp, order)
	}
	if _, err := sqlstore.Conversation("conv_1", 1, []byte("{")); err == nil {
		t.Error("Conversation decoded bad metadata")
	}
}

func TestWriteHealth(t *testing.T) {
	var h sqlstore.WriteHealth
	fault := func(err error) bool { return err.Error() == "disk full" }
	full := errors.New("disk full")
	h.Note(errors.New("duplicate key"), fault)
	if h.Last() != nil {
		t.Fatal("a statement's error was recorded")
	}
	h.Note(full, fault)
	if h.Last() != full {
		t.Fatalf("Last = %v", h.Last())
	}
	h.Note(errors.New("duplicate key"), fault)
	if h.Last() != full {
		t.Fatal("a statement's error cleared the fault")
	}
	h.Note(nil, fault)
	if h.Last() != nil {
		t.Fatal("a success did not clear the fault")
	}
}

func TestUsageQuery(t *testing.T) {
	from := time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC)
	where, args := sqlstore.UsageFilter(auth.UsageParams{KeyID: "key_1", From: from}, func(t time.Time) any { return t.Unix() })
	if !slices.Equal(where, []string{"key_id = ?", "at >= ?"}) || len(args) != 2 || args[0] != "key_1" || args[1] != from.Unix() {
		t.Errorf("UsageFilter = %q, %v", where, args)
	}
	for by, want := range map[auth.UsageGroup]string{auth.GroupByModel: "model", auth.GroupByKey: "key_id", auth.GroupByDay: "DAY", "": "DAY"} {
		if got := sqlstore.UsageGroup(by, "DAY"); got != want {
			t.Errorf("sqlstore.UsageGroup(%q) = %q, want %q", by, got, want)
		}
	}
}

func TestChecks(t *testing.T) {
	if err := sqlstore.CheckKey("", auth.Key{}); err == nil || err.Error() != "empty key id" {
		t.Errorf("sqlstore.CheckKey(no id) = %v", err)
	}
	if err := sqlstore.CheckKey("not a secret", auth.Key{ID: "k"}); !errors.Is(err, auth.ErrMalformedCredential) {
		t.Errorf("sqlstore.CheckKey(bad secret) = %v", err)
	}
	if err := sqlstore.CheckNewTask(nil); !errors.Is(err, videos.ErrInvalidParams) {
		t.Errorf("sqlstore.CheckNewTask(nil) = %v", err)
	}
	if err := sqlstore.CheckPut(videos.PutParams{}); !errors.Is(err, videos.ErrInvalidParams) {
		t.Errorf("sqlstore.CheckPut(zero) = %v", err)
	}
}
