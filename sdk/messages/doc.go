// Package messages holds no code: its tests run Anthropic's official Go
// SDK (github.com/anthropics/anthropic-sdk-go) against package messages
// of gatewaykit, through gateway.New and through a relay. They live in
// module github.com/gatewaykit/gatewaykit/sdk so that the SDK's
// dependencies (Google's and Amazon's cloud libraries, OpenTelemetry) stay
// out of the kit's go.mod.
package messages
