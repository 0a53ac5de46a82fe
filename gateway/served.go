package gateway

import (
	"log/slog"
	"net/http"

	"github.com/gatewaykit/gatewaykit/audio"
	"github.com/gatewaykit/gatewaykit/embeddings"
	"github.com/gatewaykit/gatewaykit/endpoint"
	"github.com/gatewaykit/gatewaykit/gemini"
	"github.com/gatewaykit/gatewaykit/images"
	"github.com/gatewaykit/gatewaykit/messages"
	"github.com/gatewaykit/gatewaykit/moderations"
	"github.com/gatewaykit/gatewaykit/relay"
	"github.com/gatewaykit/gatewaykit/rerank"
)

// mountServed adds to served the handlers of the access points of spec
// §4.4 that c has a backend for, keyed by their relay.Pattern*
// constants; routes of their own that no relay passes through (the
// image files) go on mux directly.
func mountServed(mux *http.ServeMux, c Config, logger *slog.Logger, served map[string]http.Handler) {
	log := endpoint.WithLogger(logger)
	icpt := endpoint.WithInterceptors(c.Interceptors...)
	if c.Embeddings != nil {
		served[relay.PatternEmbeddings] = embeddings.NewHandler(c.Catalog, c.Embeddings, log, icpt)
	}
	if c.Moderations != nil {
		served[relay.PatternModerations] = moderations.NewHandler(c.Catalog, c.Moderations, log, icpt)
	}
	if c.Rerank != nil {
		served[relay.PatternRerank] = rerank.NewHandler(c.Catalog, c.Rerank, log, icpt)
	}
	if c.Images != nil {
		iopts := []images.Option{log, icpt, images.WithURLKey(c.ImageURLKey)}
		if c.PublicBaseURL != "" {
			iopts = append(iopts, images.WithPublicURL(c.PublicBaseURL))
		}
		h := images.NewHandler(c.Catalog, c.Images, iopts...)
		served[relay.PatternImages] = h
		mux.Handle(images.PatternFile, h)
	}
	if c.Chat != nil {
		// The messages format and the Gemini-style generateContent,
		// translated over the chat backend.
		served[relay.PatternMessages] = messages.NewHandler(c.Catalog, c.Chat, log, icpt, endpoint.WithMaxRequestBytes(c.MaxRequestBytes))
		served[relay.PatternGemini] = gemini.NewHandler(c.Catalog, c.Chat, log, icpt, endpoint.WithMaxRequestBytes(c.MaxRequestBytes))
	}
	if c.Audio != nil {
		h := audio.NewHandler(c.Catalog, c.Audio, log, icpt)
		served[relay.PatternSpeech] = h
		served[relay.PatternTranscriptions] = h
		served[relay.PatternTranslations] = h
	}
}
