// Package chatchain gives the handlers that run over a chat.Backend in
// packages other than chat (messages, gemini) package chat's wrapper that
// runs a handler's interceptors around the backend's replies, without
// exporting it from package chat, where it would be of no use to anyone
// outside this module (only this module makes a pipeline.Chain).
//
// Package chat sets Wrap when it is initialised; a package that imports
// chat finds it set.
package chatchain

import (
	apierrors "github.com/gatewaykit/gatewaykit/errors"
	"github.com/gatewaykit/gatewaykit/internal/pipeline"
	"github.com/gatewaykit/gatewaykit/models"
)

// Wrap returns backend (a chat.Backend) with chain run around each of its
// replies, the calls named family; a nil chain returns backend itself.
// The result is a chat.Backend, which keeps the optional capabilities of
// backend that package chat looks for.
var Wrap func(backend any, family string, chain pipeline.Chain) any

// Handler is what the handlers over a chat backend B (chat.Backend) in
// another format share: the backend, with the handler's interceptors run
// around its replies (Wrap), the catalogue and the configuration.
type Handler[B any] struct {
	Backend B
	Catalog models.Catalog
	Cfg     pipeline.Config
}

// New returns the Handler of family over backend, with configuration
// cfg, whose errors are written in shape. It panics if catalog or
// backend is nil (pipeline.MustHave).
func New[B any](family string, catalog models.Catalog, backend B, cfg pipeline.Config, shape apierrors.Shape) Handler[B] {
	pipeline.MustHave(family, catalog, backend)
	h := Handler[B]{Catalog: catalog, Cfg: cfg}
	h.Backend = Wrap(backend, family, h.Cfg.Chain).(B)
	h.Cfg.Renderer.Shape = shape
	return h
}
