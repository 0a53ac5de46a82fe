// Package demo is gatewaykit's deterministic demo backend.
//
// # Video
//
// (The video generator is documented here by its author.)
package demo
