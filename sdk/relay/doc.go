// Package relay holds no code: its tests run the official OpenAI Go SDK
// (github.com/openai/openai-go) against package relay of gatewaykit: a
// gateway in front of OpenAI-compatible, Anthropic and Gemini upstreams,
// and a relay to another gatewaykit server. They live in module
// github.com/gatewaykit/gatewaykit/sdk so that the SDK and its
// dependencies stay out of the kit's go.mod.
package relay
