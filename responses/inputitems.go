package responses

import (
	"encoding/json"
	"net/http"
	"strconv"

	apierrors "github.com/gatewaykit/gatewaykit/errors"
	"github.com/gatewaykit/gatewaykit/internal/httpjson"
	"github.com/gatewaykit/gatewaykit/internal/ids"
)

// The prefixes of the ids that stored input items get when the request
// gave them none ([MessageIDPrefix] for messages, [FunctionIDPrefix] for
// function calls, [CompactionIDPrefix] for compactions).
const (
	CallOutputIDPrefix = "fco_"
	ItemIDPrefix       = "item_"
)

// Limits of GET /v1/responses/{id}/input_items, as in OpenAI's API.
const (
	DefaultInputItemsLimit = 20
	MaxInputItemsLimit     = 100
)

// InputItemList is the reply of GET /v1/responses/{id}/input_items: a
// page of the response's input items, with their ids.
type InputItemList struct {
	Object  string `json:"object"` // "list"
	Data    []Item `json:"data"`
	FirstID string `json:"first_id"`
	LastID  string `json:"last_id"`
	HasMore bool   `json:"has_more"`
}

// StoredItems returns a copy of items as they are stored, with a
// response's input or in a conversation: each with an id (kept if the
// item has one, else a new one: "msg_…", "fc_…", "fco_…", "cmp_…",
// "item_…"), and, for a message, type "message", its content as an array
// of parts (input_text, or output_text for an assistant message) and
// status completed unless it has one, as OpenAI lists them. The items'
// contents are shared with items.
func StoredItems(in []Item) []Item {
	out := make([]Item, len(in))
	copy(out, in)
	for i := range out {
		it := &out[i]
		kind := it.Kind()
		if it.ID == "" {
			it.ID = ids.New(inputIDPrefix(kind))
		}
		if kind != ItemMessage {
			continue
		}
		it.Type = ItemMessage
		if it.Status == "" {
			it.Status = string(StatusCompleted)
		}
		if it.Content.Text != nil {
			part := PartInputText
			if it.Role == RoleAssistant {
				part = PartOutputText
			}
			it.Content = PartsContent(ContentPart{Type: part, Text: *it.Content.Text})
		}
	}
	return out
}

func inputIDPrefix(kind string) string {
	switch kind {
	case ItemMessage:
		return MessageIDPrefix
	case ItemFunctionCall:
		return FunctionIDPrefix
	case ItemFunctionCallOutput:
		return CallOutputIDPrefix
	case ItemCompaction:
		return CompactionIDPrefix
	}
	return ItemIDPrefix
}

// inputItems serves GET /v1/responses/{id}/input_items: the stored input
// items, newest first unless order=asc, limit of them (20 by default, 1
// to 100), after the item named by after.
func (h *handler) inputItems(w http.ResponseWriter, r *http.Request, id string) {
	q := r.URL.Query()
	limit := DefaultInputItemsLimit
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > MaxInputItemsLimit {
			h.cfg.Fail(w, r, apierrors.InvalidRequestf("limit", "limit must be an integer from 1 to %d, got %s", MaxInputItemsLimit, apierrors.Quote(v)))
			return
		}
		limit = n
	}
	order := q.Get("order")
	switch order {
	case "", "desc", "asc":
	default:
		h.cfg.Fail(w, r, apierrors.InvalidRequestf("order", "order must be asc or desc, got %s", apierrors.Quote(order)))
		return
	}
	sr, err := h.stored(r.Context(), id)
	if err != nil {
		h.cfg.Fail(w, r, err)
		return
	}
	items := sr.Input
	if order != "asc" {
		items = make([]Item, len(sr.Input))
		for i, it := range sr.Input {
			items[len(items)-1-i] = it
		}
	}
	if after := q.Get("after"); after != "" {
		at := -1
		for i := range items {
			if items[i].ID == after {
				at = i
				break
			}
		}
		if at < 0 {
			h.cfg.Fail(w, r, apierrors.InvalidRequestf("after", "after names no input item of response %s: %s", apierrors.Quote(id), apierrors.Quote(after)))
			return
		}
		items = items[at+1:]
	}
	page := InputItemList{Object: "list", Data: items, HasMore: len(items) > limit}
	if page.HasMore {
		page.Data = items[:limit]
	}
	if n := len(page.Data); n > 0 {
		page.FirstID, page.LastID = page.Data[0].ID, page.Data[n-1].ID
	} else {
		page.Data = []Item{}
	}
	body, err := json.Marshal(&page)
	if err != nil {
		h.cfg.Fail(w, r, apierrors.Internal(err))
		return
	}
	httpjson.WriteRaw(w, http.StatusOK, body)
}
