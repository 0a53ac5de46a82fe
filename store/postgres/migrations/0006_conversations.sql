-- 0006: the conversations of /v1/conversations (package conversations)
-- and their items, by owner.

-- A conversation's object. last_seq is the seq of the last item added to
-- it (0 before any): items are numbered in the order they were added, and
-- never renumbered. Adding items updates it first, which locks the row:
-- the additions to one conversation are serialised across the replicas.
CREATE TABLE gk_conversations (
	owner      text   NOT NULL,
	id         text   NOT NULL,
	created_at bigint NOT NULL, -- Unix seconds, as sent
	metadata   bytea  NOT NULL, -- the JSON object
	last_seq   bigint NOT NULL,
	PRIMARY KEY (owner, id)
);

-- Each item of a conversation as JSON; an item id is unique within its
-- conversation.
CREATE TABLE gk_conversation_items (
	owner           text   NOT NULL,
	conversation_id text   NOT NULL,
	seq             bigint NOT NULL,
	id              text   NOT NULL,
	data            bytea  NOT NULL,
	PRIMARY KEY (owner, conversation_id, seq),
	UNIQUE (owner, conversation_id, id),
	FOREIGN KEY (owner, conversation_id) REFERENCES gk_conversations (owner, id) ON DELETE CASCADE
);
