// Package modgraph holds no code: its test checks what a module that
// imports the kit's handlers sees of the kit's module graph. Since Go
// 1.17 an importer's graph holds every module the kit's go.mod requires,
// whether for the kit's library or only for its tests, so that go.mod
// must require nothing that only tests use beyond what the library
// itself brings: the official SDKs and the browser driver of the kit's
// tests live in the nested module github.com/gatewaykit/gatewaykit/sdk.
package modgraph
