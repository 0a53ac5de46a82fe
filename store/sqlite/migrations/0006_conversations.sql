-- 0006_conversations: the conversations of /v1/conversations (package
-- conversations) and their items, by owner.

-- conversations holds each conversation's object. last_seq is the seq of
-- the last item added to it (0 before any): items are numbered in the
-- order they were added, and never renumbered.
CREATE TABLE conversations (
	owner      TEXT    NOT NULL,
	id         TEXT    NOT NULL,
	created_at INTEGER NOT NULL, -- Unix seconds, as sent
	metadata   BLOB    NOT NULL, -- a JSON object
	last_seq   INTEGER NOT NULL,
	PRIMARY KEY (owner, id)
) STRICT, WITHOUT ROWID;

-- conversation_items holds each item of a conversation as JSON; an item
-- id is unique within its conversation.
CREATE TABLE conversation_items (
	owner           TEXT    NOT NULL,
	conversation_id TEXT    NOT NULL,
	seq             INTEGER NOT NULL,
	id              TEXT    NOT NULL,
	data            BLOB    NOT NULL,
	PRIMARY KEY (owner, conversation_id, seq),
	UNIQUE (owner, conversation_id, id)
) STRICT, WITHOUT ROWID;
