// Package endpoint holds what the endpoint packages chat, completions and
// responses share: the wire types that more than one of them sends or
// reads ([Usage], [FinishReason], [Stop], [StreamOptions]) and the checks
// that go with them ([ValidImageURL]).
//
// Package chat names the same types ([chat.Usage] is [Usage], and so
// on), so that code written against chat alone needs no import of this
// package.
package endpoint
