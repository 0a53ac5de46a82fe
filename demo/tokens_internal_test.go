package demo

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestCountReplyIsCountTokens(t *testing.T) {
	t.Parallel()
	for _, s := range []string{"", replyTail, "x" + replyTail, `You said: "hi".` + replyTail, "ends with space " + replyTail, "word" + replyTail, "é" + replyTail, "truncated" + replyTail[:10]} {
		require.Equal(t, CountTokens(s), countReply(s), "%q", s)
	}
}

func FuzzCountReply(f *testing.F) {
	f.Add("You said: \"x\".")
	f.Fuzz(func(t *testing.T, head string) {
		s := head + replyTail
		require.Equal(t, CountTokens(s), countReply(s))
		cut, _ := cutTokens(s, CountTokens(head))
		require.LessOrEqual(t, len(cut), len(s))
	})
}
