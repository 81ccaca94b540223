package workspace

import (
	"github.com/coworkenv/coworkenv/internal/jsonv"
)

// Kinds of entry an Action concerns.
const (
	KindFile    = "file"
	KindFolder  = "folder"
	KindMessage = "message"
	KindEvent   = "event"
	KindRecord  = "record"
)

// ActorAgent marks actions made inside one of the agent's tool calls (SetActor).
const ActorAgent = "agent"

// Action is one change made to the workspace, as the episode history keeps it: every mail sent
// even if later moved, every version a file had, every removed entry, every record write.
//
// Ops by kind: file "write", "remove", "move" (Key the old path, To the new one); folder "mkdir",
// "remove", "move"; message "deliver", "send", "read" (only the read flag changed), "mark"
// (labels, maybe with the read flag), "move"; event "add", "update", "remove"; record "insert",
// "update", "remove". Removing or moving a folder records one action per file it holds, then
// one for the folder.
type Action struct {
	Seq   int    // 1, 2, … in the order the actions happened, over the state's whole life
	Kind  string // one of the Kind constants, or the Entry of a Part
	Op    string
	Key   string // path, message id, event id, "collection/id"
	To    string // the new path of a move
	Actor string // ActorAgent, or "" for a script (setup, before)
	Turn  int    // the turn (0-based) given to SetActor; -1 before the first turn
	// before and after are the immutable entries (*fileEntry, *msgEntry, *eventEntry, *record,
	// or a part's Entry), nil where there is none.
	before, after any
}

// Before returns the entry as it was before the action: a file's content (string), a Message,
// an Event, a record (*jsonv.Object, a copy) or a part's Entry; nil when there was none.
func (a Action) Before() any { return entryValue(a.before) }

// After returns the entry as the action left it (see Before); nil when it is gone.
func (a Action) After() any { return entryValue(a.after) }

func entryValue(e any) any {
	switch x := e.(type) {
	case *fileEntry:
		return x.content
	case *msgEntry:
		return x.m.clone()
	case *eventEntry:
		return x.e.clone()
	case *record:
		return jsonv.Clone(x.obj).(*jsonv.Object)
	case Entry:
		return x // a part's entries are immutable
	}
	return nil
}

// histNode is one action in a persistent list: nodes never change, so forks share the history
// they had when forked and each appends its own. It holds an Action in fewer bytes (a workspace
// of 100,000 entries keeps 100,000 of them from its setup): the actor as a flag, the turn in 32
// bits, the rare target of a move out of line.
type histNode struct {
	prev          *histNode
	seq           int
	kind, op, key string
	to            *string
	before, after any
	turn          int32
	agent         bool
}

func (h *histNode) action() Action {
	a := Action{Seq: h.seq, Kind: h.kind, Op: h.op, Key: h.key, Turn: int(h.turn), before: h.before, after: h.after}
	if h.to != nil {
		a.To = *h.to
	}
	if h.agent {
		a.Actor = ActorAgent
	}
	return a
}

// SetActor says who makes the next changes: ActorAgent inside a tool call, "" for scripts (any
// other actor is recorded as ""), and the turn they belong to. It is not part of the state's
// content or hash.
func (s *State) SetActor(actor string, turn int) { s.actor, s.turn = actor, turn }

// record appends a to the history, stamped with the actor and the turn.
func (s *State) record(a Action) {
	h := &histNode{prev: s.hist, seq: 1, kind: a.Kind, op: a.Op, key: a.Key, before: a.before, after: a.after,
		turn: int32(s.turn), agent: s.actor == ActorAgent}
	if a.To != "" {
		to := a.To
		h.to = &to
	}
	if s.hist != nil {
		h.seq = s.hist.seq + 1
	}
	s.hist = h
}

// History returns the actions made since the state since (an earlier state this one was
// forked from, such as the state right after setup), oldest first. A nil since gives the
// whole history.
func (s *State) History(since *State) []Action {
	stop := 0
	if since != nil && since.hist != nil {
		stop = since.hist.seq
	}
	n := 0
	for h := s.hist; h != nil && h.seq > stop; h = h.prev {
		n++
	}
	out := make([]Action, n)
	for h := s.hist; h != nil && h.seq > stop; h = h.prev {
		n--
		out[n] = h.action()
	}
	return out
}
