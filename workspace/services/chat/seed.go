package chat

import (
	"strconv"

	"github.com/coworkenv/coworkenv/workspace"
	"github.com/coworkenv/coworkenv/workspace/timefmt"
)

// Seed stores channels, then messages, for Go tests and benchmarks that seed a large chat: it
// does not read the chat to check them (their conversations, senders and threads are stored as
// given), so that seeding n messages costs O(n log n) however large the chat is. A channel's
// name and members are normalized as ws.chat.channel does; each message gets the next id
// ("cm<n>") from the part's counter, its mentions from its text unless it has some, and no
// reactions; its TS is a time in RFC 3339. It returns the ids of the messages.
func Seed(st *workspace.State, channels []*Channel, msgs []*Message) ([]string, error) {
	for _, c := range channels {
		topic := c.Topic
		if err := setChannel(st, c.Name, &topic, c.Members); err != nil {
			return nil, err
		}
	}
	ids := make([]string, len(msgs))
	for i, m := range msgs {
		ts, _, err := timefmt.Normalize(m.TS)
		if err != nil {
			return nil, err
		}
		t, _ := timefmt.Parse(ts) // as post reads it
		n, err := st.NextNumber(Part)
		if err != nil {
			return nil, err
		}
		c := m.clone()
		c.ID, c.TS, c.at, c.Reactions = idPrefix+strconv.FormatInt(n, 10), ts, t.Unix(), []Reaction{}
		if c.Mentions == nil {
			c.Mentions = mentionsIn(c.Text)
		}
		if err := st.PartPut(Part, c.ID, opPost, c); err != nil {
			return nil, err
		}
		ids[i] = c.ID
	}
	return ids, nil
}
