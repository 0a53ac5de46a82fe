// Package fromchat holds no code: its test runs the official OpenAI Go
// SDK against package responses/fromchat of gatewaykit. It lives in module
// github.com/gatewaykit/gatewaykit/sdk so that the SDK and its
// dependencies stay out of the kit's go.mod.
package fromchat
