// Package chatdecode gives module bench (bench/codecs) package chat's
// encoding/json path of chat.Request with another unmarshaller, json v2,
// which the kit's go.mod does not require (BENCHMARKS.md, JSON codecs:
// ReflectV2), without exporting it from package chat.
//
// Package chat sets WithUnmarshal when it is initialised; a package that
// imports chat finds it set.
package chatdecode

// WithUnmarshal decodes data into r, a zero *chat.Request, as
// chat.Request's encoding/json path does (its shadow types, then the walk
// that collects the members the types do not model, into Extra), with
// unmarshal in place of json.Unmarshal.
var WithUnmarshal func(data []byte, r any, unmarshal func([]byte, any) error) error
