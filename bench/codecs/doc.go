// Package codecs holds the json v2 (github.com/go-json-experiment/json)
// side of the kit's codec benchmarks (BENCHMARKS.md, JSON codecs): json
// v2 decoding and encoding the documents of internal/codecdocs, which the
// kit's own benchmarks measure by hand and with encoding/json. It lives in
// module bench so that the kit's go.mod does not require json v2 (issue
// 25: an importer of the kit sees no test-only module).
//
// Each benchmark runs encoding/json beside json v2 on the same document
// and type, so that one run gives both library columns:
//
//	go test ./bench/codecs -run '^$' -bench . -benchtime 20000x -count 5
//
// The decoders' targets are the relay's types (copied in
// internal/codecdocs/relaytypes, which relay's TestRelayTypesAreCopies
// holds to the originals), chat.Request through its own encoding/json
// path with json v2 as the unmarshaller (internal/chatdecode), and
// responses.Request with a ",unknown" field; the encoders' values are the
// kit's exported wire types, which must encode to the very document that
// the hand encoders write.
package codecs
