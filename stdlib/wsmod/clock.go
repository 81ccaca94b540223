package wsmod

import (
	"github.com/coworkenv/coworkenv/internal/starargs"
	"go.starlark.net/starlark"
)

var clockMembers = []*member{
	{name: "now", ret: "string",
		call: func(c *call) (starlark.Value, error) {
			return str(c.w.st.Clock().NowString()), nil
		},
		doc: "Returns the virtual time as an RFC 3339 string in UTC with seconds, e.g. \"2026-01-05T09:00:00Z\"."},
	{name: "set", params: []starargs.Param{starargs.Req("ts")}, ret: "None", write: true,
		call: func(c *call) (starlark.Value, error) {
			ts := c.str(0)
			if err := c.done(); err != nil {
				return nil, err
			}
			return nil, c.wrap(c.w.st.Clock().Set(ts))
		},
		doc: "Moves the clock to ts, an RFC 3339 time (\"2026-02-06T11:00:00Z\"; the offset, the seconds or the whole time of day may be left out, and then mean UTC and zero), forwards or backwards."},
	{name: "advance", params: []starargs.Param{starargs.Req("duration")}, ret: "None", write: true,
		call: func(c *call) (starlark.Value, error) {
			d := c.str(0)
			if err := c.done(); err != nil {
				return nil, err
			}
			return nil, c.wrap(c.w.st.Clock().Advance(d))
		},
		doc: "Moves the clock forward by duration: Go's syntax plus d for days (\"1d\", \"2h30m\", \"90m\", \"1d12h\"). A negative duration is an error."},
}
