package responses

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	apierrors "github.com/gatewaykit/gatewaykit/errors"
	"github.com/gatewaykit/gatewaykit/internal/httpjson"
	"github.com/gatewaykit/gatewaykit/internal/ids"
	"github.com/gatewaykit/gatewaykit/internal/pipeline"
	"github.com/gatewaykit/gatewaykit/models"
)

// compact serves POST /v1/responses/compact: the backend's [Compactor]
// summarises the conversation (that of previous_response_id, then the
// input) into one compaction item; the reply lists the conversation's user
// messages, then that item. Compactions are not stored.
func (h *handler) compact(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	p, _, rsv, err := pipeline.Admit(&h.cfg.Config, h.catalog, models.CompatResponse, (*compacter)(h), w, r)
	if err != nil {
		h.cfg.Fail(w, r, err)
		return
	}
	var used pipeline.Usage // charged when the reply ends; nothing if it fails
	defer func() { h.cfg.Settle(ctx, rsv, used) }()
	res, err := Compact(ctx, h.backend, p)
	if err == nil && (res == nil || res.EncryptedContent == "") {
		err = apierrors.Internal(errors.New("responses: compactor returned no content and no error"))
	}
	if err != nil {
		h.cfg.Fail(w, r, err)
		return
	}
	usage := res.Usage.Normalized()
	reply := CompactedResponse{
		ID:        ids.New(IDPrefix),
		Object:    ObjectCompaction,
		CreatedAt: h.cfg.Now().Unix(),
		Output:    compactionOutput(p.Items(), res.EncryptedContent),
		Usage:     usage,
	}
	body, err := json.Marshal(&reply)
	if err != nil {
		h.cfg.Fail(w, r, apierrors.Internal(fmt.Errorf("responses: encode compaction: %w", err)))
		return
	}
	httpjson.WriteRaw(w, http.StatusOK, body)
	used = usage.charged()
}

// compacter is the handler as the pipeline.Admission of POST
// /v1/responses/compact.
type compacter handler

// Decode reads and decodes the request body.
func (h *compacter) Decode(w http.ResponseWriter, r *http.Request, req *CompactRequest) ([]byte, error) {
	return (*handler)(h).decode(w, r, req)
}

// Validate checks req; see validateCompact.
func (h *compacter) Validate(req *CompactRequest) error {
	return validateCompact(h.cfg.Validate, req)
}

// Model returns the model req names.
func (h *compacter) Model(req *CompactRequest) string { return req.Model }

// Prepare refuses a backend that cannot compact, resolves the
// conversation of previous_response_id and makes the CompactParams; the
// estimate counts the conversation.
func (h *compacter) Prepare(ctx context.Context, req *CompactRequest, m *models.Model, body []byte) (*CompactParams, int64, int64, error) {
	if _, ok := h.backend.(Compactor); !ok {
		return nil, 0, 0, errNoCompaction(req.Model)
	}
	_, history, past, err := (*handler)(h).conversation(ctx, req.PreviousResponseID)
	if err != nil {
		return nil, 0, 0, err
	}
	prompt := pipeline.PromptTokens(len(body)) + past
	return &CompactParams{Request: req, Model: m, History: history}, prompt, pipeline.Estimate(prompt, 1, 0, m), nil
}

// Compact asks b to compact the conversation of p when b is a
// [Compactor], and otherwise returns the error the handler answers for a
// backend that cannot: a 400 invalid_request_error, param "model". Like
// [Deltas], it serves backends that wrap others.
func Compact(ctx context.Context, b Backend, p *CompactParams) (*CompactResult, error) {
	c, ok := b.(Compactor)
	if !ok {
		return nil, errNoCompaction(p.Request.Model)
	}
	return c.Compact(ctx, p)
}

func errNoCompaction(model string) error {
	return apierrors.InvalidRequestf("model", "model %s does not support compaction", apierrors.Quote(model))
}

func compactionOutput(items []Item, encrypted string) []CompactionItem {
	var out []CompactionItem
	for i := range items {
		it := &items[i]
		if it.Kind() != ItemMessage || it.Role != RoleUser {
			continue
		}
		id := it.ID
		if id == "" {
			id = ids.New(MessageIDPrefix)
		}
		var parts []ContentPart
		if it.Content.Text != nil {
			parts = []ContentPart{{Type: PartInputText, Text: *it.Content.Text}}
		} else {
			parts = it.Content.Parts
		}
		out = append(out, CompactionItem{Type: ItemMessage, ID: id, Status: StatusCompleted, Role: RoleUser, Content: parts})
	}
	return append(out, CompactionItem{Type: ItemCompaction, ID: ids.New(CompactionIDPrefix), EncryptedContent: encrypted})
}
