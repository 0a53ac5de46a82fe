// Package chatchain gives the handlers that run over a chat.Backend in
// packages other than chat (messages, gemini) package chat's wrapper that
// runs a handler's interceptors around the backend's replies, without
// exporting it from package chat, where it would be of no use to anyone
// outside this module (only this module makes a pipeline.Chain).
//
// Package chat sets Wrap when it is initialised; a package that imports
// chat finds it set.
package chatchain

import "github.com/gatewaykit/gatewaykit/internal/pipeline"

// Wrap returns backend (a chat.Backend) with chain run around each of its
// replies, the calls named family; a nil chain returns backend itself.
// The result is a chat.Backend, which keeps the optional capabilities of
// backend that package chat looks for.
var Wrap func(backend any, family string, chain pipeline.Chain) any
