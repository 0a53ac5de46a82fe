// Package responses serves the responses endpoint of the gateway API: POST
// /v1/responses (spec §4.3), with its stored conversations
// (previous_response_id), GET and DELETE /v1/responses/{id}, and POST
// /v1/responses/compact.
package responses
