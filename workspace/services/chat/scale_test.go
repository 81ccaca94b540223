package chat_test

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/coworkenv/coworkenv/internal/jsonv"
	"github.com/coworkenv/coworkenv/internal/limits"
	"github.com/coworkenv/coworkenv/internal/servicetest"
	"github.com/coworkenv/coworkenv/workspace"
	"github.com/coworkenv/coworkenv/workspace/services/chat"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The chat's listings walk its indexes and stop at their limit: checked here against the same
// listings computed from every message read in full, over a chat of 3,000 messages with times
// out of the order of ids, threads, broadcasts and direct messages, and again in a fork after
// posts, edits (which change mentions), reactions and deletions.

var convs = []string{"#alpha", "#beta", "#gamma", "@dana.berg", "@dana.berg,@lars.olsen"}

// bigChat seeds n messages, drawn from seed.
func bigChat(t *testing.T, n int, seed uint64) *workspace.State {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 1))
	st := workspace.New(start, 1)
	var msgs []*chat.Message
	tops := map[string][]int{} // the indexes in msgs of each conversation's own messages
	for i := range n {
		conv := convs[rng.IntN(len(convs))]
		m := &chat.Message{Conv: conv, Sender: []string{"me", "dana.berg", "lars.olsen"}[rng.IntN(3)],
			Text: fmt.Sprintf("%s %d %s", []string{"truck", "dock", "Truck dock"}[rng.IntN(3)], i%7, []string{"", "@me", "@here", "@dana.berg", "@channel"}[rng.IntN(5)]),
			TS:   start.Add(time.Duration(rng.IntN(n/3)) * time.Minute).Format(time.RFC3339)}
		if ts := tops[conv]; len(ts) > 0 && rng.IntN(3) == 0 {
			m.Thread = "cm" + strconv.Itoa(1+ts[rng.IntN(len(ts))])
		} else {
			tops[conv] = append(tops[conv], i)
		}
		msgs = append(msgs, m)
	}
	_, err := chat.Seed(st, []*chat.Channel{{Name: "#alpha", Members: []string{"me", "dana.berg"}}, {Name: "beta", Members: []string{"lars.olsen"}},
		{Name: "#gamma", Topic: "g", Members: []string{"me"}}}, msgs)
	require.NoError(t, err)
	return st
}

// everything is every message of st, in the order people read them.
func everything(st *workspace.State) []*chat.Message {
	var out []*chat.Message
	for _, e := range st.PartEntries(chat.Part, "") {
		if m, ok := e.(*chat.Message); ok {
			out = append(out, m)
		}
	}
	num := func(m *chat.Message) int { n, _ := strconv.Atoi(m.ID[2:]); return n }
	slices.SortFunc(out, func(a, b *chat.Message) int {
		ta, _ := time.Parse(time.RFC3339, a.TS)
		tb, _ := time.Parse(time.RFC3339, b.TS)
		return cmp.Or(ta.Compare(tb), cmp.Compare(num(a), num(b)))
	})
	return out
}

func keep(ms []*chat.Message, f func(m *chat.Message) bool) []*chat.Message {
	return slices.DeleteFunc(slices.Clone(ms), func(m *chat.Message) bool { return !f(m) })
}

// newest is what a listing of limit of ms shows: the ids of the newest it keeps, oldest first,
// and how many it keeps.
func newest(ms []*chat.Message, limit int) ([]string, int) {
	total := min(limit, len(ms))
	var ids []string
	for _, m := range ms[len(ms)-min(total, limits.ListItems):] {
		ids = append(ids, m.ID)
	}
	return ids, total
}

// listed reads a listing: its ids and its total, and the replies of each message by id.
func listed(t *testing.T, out string, replies map[string]int64) ([]string, int) {
	t.Helper()
	v, err := jsonv.DecodeString(out)
	require.NoError(t, err)
	items, total := v, -1
	if o, ok := v.(*jsonv.Object); ok {
		items, _ = o.Get("items")
		n, _ := o.Get("total")
		total = int(n.(int64))
	}
	var ids []string
	for _, it := range items.([]jsonv.Value) {
		id, _ := it.(*jsonv.Object).Get("id")
		ids = append(ids, id.(string))
		n, _ := it.(*jsonv.Object).Get("replies")
		replies[id.(string)] = n.(int64)
	}
	if total < 0 {
		total = len(ids)
	}
	return ids, total
}

// checkListings compares every listing tool's result on st with the same listing computed
// from every message.
func checkListings(t *testing.T, st *workspace.State) {
	t.Helper()
	all := everything(st)
	replies := map[string][]*chat.Message{}
	for _, m := range all {
		if m.Thread != "" {
			replies[m.Thread] = append(replies[m.Thread], m)
		}
	}
	call := func(name string, args string, want []*chat.Message, limit int, head ...string) {
		t.Helper()
		counts := map[string]int64{}
		ids, total := listed(t, servicetest.OK(t, st, name, args), counts)
		for id, n := range counts {
			assert.Equal(t, int64(len(replies[id])), n, "the replies of %s", id)
		}
		wantIDs, wantTotal := newest(want, limit)
		wantIDs, wantTotal = append(head, wantIDs...), wantTotal+len(head)
		assert.Equal(t, wantIDs, ids, "%s %s", name, args)
		assert.Equal(t, wantTotal, total, "%s %s", name, args)
	}
	mentionsMe := func(m *chat.Message) bool {
		if m.Sender == "me" {
			return false
		}
		if slices.Contains(m.Mentions, "me") {
			return true
		}
		return (m.Conv == "#alpha" || m.Conv == "#gamma") && (slices.Contains(m.Mentions, "here") || slices.Contains(m.Mentions, "channel"))
	}
	for _, limit := range []int{1, 7, 200, 250, 100000} {
		for _, conv := range convs {
			call("chat_read", fmt.Sprintf(`{"channel": %q, "limit": %d}`, conv, limit),
				keep(all, func(m *chat.Message) bool { return m.Conv == conv && m.Thread == "" }), limit)
			call("chat_search", fmt.Sprintf(`{"query": "truck 3", "channel": %q, "limit": %d}`, conv, limit),
				keep(all, func(m *chat.Message) bool {
					return m.Conv == conv && strings.Contains(strings.ToLower(m.Text), "truck") && strings.Contains(m.Text, "3")
				}), limit)
		}
		call("chat_search", fmt.Sprintf(`{"query": "DOCK", "limit": %d}`, limit),
			keep(all, func(m *chat.Message) bool { return strings.Contains(m.Text, "dock") }), limit)
		call("chat_mentions", fmt.Sprintf(`{"limit": %d}`, limit), keep(all, mentionsMe), limit)
	}
	// threads
	for _, m := range all[:50] {
		if m.Thread == "" {
			rs := replies[m.ID]
			call("chat_read", fmt.Sprintf(`{"channel": %q, "thread": %q, "limit": 2}`, m.Conv, m.ID), rs, 2, m.ID)
			if len(rs) > 0 {
				call("chat_read", fmt.Sprintf(`{"channel": %q, "thread": %q}`, m.Conv, rs[0].ID), rs, 20, m.ID)
			}
		}
	}
	// the conversations, with their counts and newest messages
	l := servicetest.Object(t, servicetest.OK(t, st, "chat_list_channels", `{}`))
	cs, _ := l.Get("conversations")
	var got []string
	for _, c := range cs.([]jsonv.Value) {
		got = append(got, jsonv.MustEncode(c))
	}
	var want []string
	for _, conv := range []string{"#alpha", "#beta", "#gamma", "@dana.berg", "@dana.berg,@lars.olsen"} {
		in := keep(all, func(m *chat.Message) bool { return m.Conv == conv })
		if len(in) == 0 && conv[0] == '@' {
			continue
		}
		last := "null"
		if len(in) > 0 {
			last = strconv.Quote(in[len(in)-1].TS)
		}
		want = append(want, fmt.Sprintf(`"messages":%d,"last":%s}`, len(in), last))
	}
	require.Len(t, got, len(want))
	for i := range want {
		assert.True(t, strings.HasSuffix(got[i], want[i]), "%s: want %s", got[i], want[i])
	}
}

func TestListingsWalkTheirIndexes(t *testing.T) {
	t.Parallel()
	base := bigChat(t, 3000, 1)
	checkListings(t, base)
	base.Freeze()
	h := base.Hash()

	st := base.Fork()
	rng := rand.New(rand.NewPCG(2, 2))
	for i := range 300 {
		id := fmt.Sprintf(`"cm%d"`, 1+rng.IntN(3000+i/3))
		switch i % 3 {
		case 0:
			_, _ = servicetest.Call(t, st, "chat_post", fmt.Sprintf(`{"channel": %q, "text": "truck 3 @here %d"}`, convs[rng.IntN(len(convs))], i))
		case 1:
			_, _ = servicetest.Call(t, st, "chat_edit", `{"message_id": `+id+`, "text": "dock @me"}`)
			_, _ = servicetest.Call(t, st, "chat_react", `{"message_id": `+id+`, "emoji": "eyes"}`)
		default:
			_, _ = servicetest.Call(t, st, "chat_delete", `{"message_id": `+id+`}`)
		}
	}
	require.NotEqual(t, h, st.Hash())
	checkListings(t, st)
	assert.Equal(t, h, base.Hash(), "the fork's writes leave its base as it was")
	checkListings(t, base)
}

// The same chat built twice shows the same listings, byte for byte, and hashes the same.
func TestListingsAreTheSameTwice(t *testing.T) {
	t.Parallel()
	run := func() string {
		st := bigChat(t, 1500, 3)
		var b strings.Builder
		for _, call := range [][2]string{{"chat_list_channels", `{}`}, {"chat_mentions", `{"limit": 300}`}, {"chat_search", `{"query": "dock", "limit": 40}`},
			{"chat_read", `{"channel": "@dana.berg,@lars.olsen", "limit": 300}`}, {"chat_search", `{"query": "truck", "channel": "#alpha"}`}} {
			b.WriteString(servicetest.OK(t, st, call[0], call[1]) + "\n")
		}
		b.WriteString(chat.Service.Setup(st))
		b.WriteString(st.Hash())
		return b.String()
	}
	assert.Equal(t, run(), run())
}
