// Package gemini serves the Gemini-style content generation of spec §4.4,
// POST /v1beta/models/{model}:generateContent and
// :streamGenerateContent, over any chat backend (chat.Backend): the demo,
// the relay to an OpenAI-compatible upstream, or an embedder's own.
package gemini
