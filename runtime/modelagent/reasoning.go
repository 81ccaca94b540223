package modelagent

import "strings"

const (
	thinkOpen  = "<think>"
	thinkClose = "</think>"
)

// SplitThink takes a leading <think>…</think> block out of a message's content: it returns the
// rest (trimmed) and the block's text (trimmed). A content that starts inside the thinking, with
// only a closing </think> (the template opened the block in the prompt), gives the text before
// it; a block that is never closed (an answer cut off while thinking) is all thinking. ok is
// false, and content is s as it is, when there is no such block.
func SplitThink(s string) (content, thought string, ok bool) {
	t := strings.TrimLeft(s, space)
	if body, found := strings.CutPrefix(t, thinkOpen); found {
		if k := strings.Index(body, thinkClose); k >= 0 {
			return strings.TrimSpace(body[k+len(thinkClose):]), strings.TrimSpace(body[:k]), true
		}
		return "", strings.TrimSpace(body), true
	}
	if k := strings.Index(s, thinkClose); k >= 0 && !strings.Contains(s[:k], thinkOpen) {
		return strings.TrimSpace(s[k+len(thinkClose):]), strings.TrimSpace(s[:k]), true
	}
	return s, "", false
}

// joinReasoning is the reasoning of a message from its reasoning field and from a <think>
// block in its content (both are rare together: a server with a reasoning parser takes the
// block out).
func joinReasoning(field, thought string) string {
	switch {
	case thought == "":
		return field
	case strings.TrimSpace(field) == "":
		return thought
	}
	return field + "\n\n" + thought
}
