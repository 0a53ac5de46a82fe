// Package conversations serves OpenAI's Conversations API: conversations
// that keep the items of a dialogue on the gateway, which POST
// /v1/responses continues through its "conversation" member (package
// responses). The spec says nothing of them (its responses, §4.3,
// continue with previous_response_id); the wire is OpenAI's API
// reference, which the official SDKs parse.
//
//	store := conversations.NewMemoryStore(nil) // or store/sqlite, store/postgres
//	conversations.Register(mux, conversations.NewHandler(store))
//	responses.Register(mux, responses.NewHandler(catalog, backend, responses.WithConversations(store)))
//	server := auth.Middleware(keys)(mux)
//
// Package gateway mounts both, over gateway.Config.ConversationStore,
// whenever it serves responses. One handler serves the eight routes of
// [Patterns] ([Register] mounts them on a ServeMux; on any other router,
// mount the routes of [Routes], see package route), routing them with a
// ServeMux of its own; other methods on their paths are a JSON 405
// method_not_allowed naming those allowed, in Allow.
//
// # Routes
//
//	POST   /v1/conversations                            create: {items, metadata}, both optional
//	GET    /v1/conversations/{id}                       the conversation
//	POST   /v1/conversations/{id}                       {metadata}: replaces it, {} removes it
//	DELETE /v1/conversations/{id}                       {"id","object":"conversation.deleted","deleted":true}
//	GET    /v1/conversations/{id}/items                 a page of items: limit, order, after, include
//	POST   /v1/conversations/{id}/items                 {items}: adds them, answers them as a list
//	GET    /v1/conversations/{id}/items/{item_id}       the item
//	DELETE /v1/conversations/{id}/items/{item_id}       removes it, answers the conversation
//
// A conversation is {"id":"conv_…","object":"conversation","created_at",
// "metadata"} ([Conversation]; ids of 128 random bits, created_at from
// [WithClock], metadata {} when there is none). Its items are those of a
// response's input ([responses.Item]): messages, function calls and their
// outputs, reasoning items (their encrypted_content kept intact),
// compaction items, and items of other types with every member as sent.
// They are stored as [responses.StoredItems] makes them: each with an id
// (the one it came with, else a new "msg_…", "fc_…", "fco_…", "cmp_…" or
// "item_…"), a message as type "message" with its content as an array of
// parts and status completed. A list ([ItemList]) is {"object":"list",
// "data","first_id","last_id","has_more"}: newest first unless
// order=asc, limit items (1 to 100, 20 by default), after the item named
// by after. include is accepted and changes nothing: items are kept
// whole and answered whole.
//
// # Requests and errors
//
// Request bodies (at most 8 MiB, [WithMaxRequestBytes]) are JSON objects
// that name each member once (see package endpoint); members the request
// types do not model are ignored. Create and add take at most 20 items
// ([MaxItemsPerRequest]), add at least one; each item is checked as the
// input items of POST /v1/responses are (responses.CheckItems: a message
// has a role and content, a function call a call_id and a name, …), and
// no two may have one id, nor one that the conversation holds: "Duplicate
// item found with id …", as OpenAI answers. Metadata holds at most 16
// pairs, keys of at most 64 characters and values of at most 512. Every
// error is in the general shape:
//
//	400 invalid_request_error   a body, item, metadata or query that breaks these rules (param names it)
//	401 missing_authorization   the OwnerFunc refused the request
//	404 not_found               an unknown conversation, or another owner's; an unknown item
//	503 service_unavailable     the Store failed (Retry-After; its error is logged, not sent)
//
// # Owners
//
// A conversation belongs to the owner of the request that created it
// ([WithOwner], an auth.OwnerFunc: by default auth.AccountOwner, the API
// key's account, as for stored responses and video tasks); to every other
// owner it does not exist, and each route answers 404 for it. Give the
// responses handler the same OwnerFunc.
//
// # Continuing a conversation
//
// POST /v1/responses with "conversation" (its id, or {"id": …}) hands the
// backend the conversation's items (the newest
// responses.MaxConversationItems) before the request's input, in
// responses.Params History, and, once the reply has ended (completed or
// incomplete, not failed; a stream whose client stayed), adds the input
// items and the output items to the conversation, the output items with
// the ids of the response's output. The response carries
// "conversation": {"id"}. "store": false leaves the conversation as it
// was. An unknown or foreign conversation is a 404 not_found with param
// "conversation", as OpenAI answers; an input item whose id the
// conversation holds, a 400; previous_response_id with conversation, a
// 400 ("Mutually exclusive parameters: …"). A response whose items the
// store fails to add is answered as one that could not be stored: a 500
// that says it was generated and charged (X-Should-Retry: false), or a
// stream that ends with response.failed. See package responses.
//
// A relayed model is served the same way: the gateway keeps the
// conversation, and the relay sends the upstream its items as the input
// (package relay), as it does for previous_response_id, so conversations
// work over any upstream, one that keeps nothing included; an upstream's
// own conversations are not reached through the gateway.
//
// # Stores
//
// A [Store] keeps conversations and their items; it is a
// responses.ConversationStore. [MemoryStore] keeps them in memory,
// bounded to [DefaultMaxConversations] (10 000) conversations and
// [DefaultMaxBytes] (256 MiB) of estimated size, the least recently
// changed evicted first ([MemoryStoreOptions]); conversations do not
// expire, and items that would make one larger than MaxBytes alone are
// refused with a 400. Packages store/sqlite and store/postgres (module
// github.com/gatewaykit/gatewaykit/store) keep them in a SQLite file or in
// PostgreSQL, where every replica continues them. Each passes the
// conformance suite conversationstest.TestStore.
//
// # Options
//
// [NewHandler] takes [WithLogger], [WithMaxRequestBytes], [WithOwner] and
// [WithClock], which are this package's own.
package conversations
