// Package conversations holds no code: its tests run the official OpenAI
// Go SDK (github.com/openai/openai-go) against package conversations of
// gatewaykit, with package responses continuing its conversations. They
// live in module github.com/gatewaykit/gatewaykit/sdk so that the SDK and
// its dependencies stay out of the kit's go.mod.
package conversations
