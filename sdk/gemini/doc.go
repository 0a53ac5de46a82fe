// Package gemini holds no code: its tests run Google's Gen AI Go SDK
// (google.golang.org/genai) against package gemini of gatewaykit, through
// gateway.New and through a relay. They live in module
// github.com/gatewaykit/gatewaykit/sdk so that the SDK's dependencies
// (gRPC, protobuf, Google's cloud libraries) stay out of the kit's go.mod.
package gemini
