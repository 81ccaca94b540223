// Package limits is the one place of the sizes the engine accepts: what a task may store (files,
// records, mail, chat), what a tool call may carry in (arguments) and out (results, errors),
// what a listing tool shows at once, and how long a trace line may be. Every size the engine
// accepts, it can write into a trace and read back: the constants are checked against each other
// below, at compile time.
//
// Where each is enforced: the workspace kernel refuses a file, record, mail body or attachment
// over its limit (for setup, scripts and tools alike), the chat service a message text, package
// workspace/tools the arguments of a call (Tool.CheckArgs, and the episode before it records the
// call) and the listings of the built-in tools (tools.Listing), the episode a tool result and
// a tool error (runtime/episode), and the trace writer and reader a line (runtime/trace).
package limits

import (
	"fmt"

	"github.com/coworkenv/coworkenv/internal/jsonv"
)

const (
	// FileSize is the largest content of one file, in bytes.
	FileSize = 8 << 20
	// RecordSize is the largest JSON encoding of one record of ws.db.
	RecordSize = 8 << 20

	// MailBody is the largest body of one mail message (a forward's quoted original included).
	MailBody = 1 << 20
	// Attachment is the largest content of one attachment: a file's, so that
	// mail_save_attachment can always save it.
	Attachment = FileSize
	// Attachments is the largest total content of the attachments of one message.
	Attachments = 32 << 20

	// ChatText is the largest text of one chat message.
	ChatText = 64 << 10

	// ToolArgs is the largest JSON encoding of the arguments of one tool call.
	ToolArgs = 16 << 20
	// ToolArgsDepth is the deepest nesting of the arguments of one tool call: each array or
	// object inside the arguments object is one level deeper ({"a": [1]} is 2 levels deep).
	ToolArgsDepth = 100
	// ToolResult is the largest JSON text of one tool result (what the agent is shown).
	ToolResult = 16 << 20
	// ToolError is the longest tool error message; a longer one is cut.
	ToolError = 64 << 10

	// ListItems and ListBytes bound what a listing or search tool shows at once: at most
	// ListItems items and ListBytes bytes of JSON (but always the first item). A listing that
	// leaves items out says so in its result.
	ListItems = 200
	ListBytes = 256 << 10
	// MatchText is the longest line text of an fs_search match; a longer line is cut around
	// the match.
	MatchText = 1 << 10

	// TraceLine is the longest line of a trace, newline included: the writer refuses to write a
	// longer one and the reader refuses to read it.
	TraceLine = 64 << 20
	// TraceFile is the largest trace that replay, export and report read: a trace is read whole,
	// and export holds about ten times its size while it converts it, so this bounds that to
	// about 1.3 GiB. It holds two of the longest lines.
	TraceFile = 128 << 20
	// JSONDepth is the deepest nesting the JSON reader accepts (a trace line, a model's answer,
	// json.decode): jsonv's own limit.
	JSONDepth = jsonv.MaxDepth
	// EventRoom is what a trace event needs besides its largest field (a call's arguments, a
	// result's content and error): its kind, ids, turn, state hash.
	EventRoom = 1 << 20
)

// The limits are consistent: a call event with the largest arguments, and a result event with
// the largest result and error, fit in a trace line. A result's content is written as a JSON
// string: its JSON text has no control characters, and each " and \ doubles, so it takes at most
// 2*ToolResult+2 bytes; an error message can hold control characters, each written as \u00XX,
// so at most 6*ToolError+2. Each line below fails to compile when that does not hold.
const (
	_ = uint(TraceLine - (ToolArgs + EventRoom))
	_ = uint(TraceFile - 2*TraceLine)
	_ = uint(TraceLine - (2*ToolResult + 2 + 6*ToolError + 2 + EventRoom))
	// a call event holds the arguments one level down
	_ = uint(JSONDepth - (ToolArgsDepth + 1))
	// a listing fits in a result, as do the largest file (read as a string of plain text) and
	// the largest mail body (quoted with every byte escaped)
	_ = uint(ToolResult - ListBytes - 1)
	_ = uint(ToolResult - FileSize - 1)
	_ = uint(ToolResult - 6*MailBody - 1)
	// an attachment can be saved as a file
	_ = uint(FileSize - Attachment)
)

// Bytes says a size for people: "8 MiB", "64 KiB", "300 bytes".
func Bytes(n int) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}
