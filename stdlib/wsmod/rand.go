package wsmod

import (
	"github.com/coworkenv/coworkenv/internal/starargs"
	"go.starlark.net/starlark"
)

// Every draw goes through the state's Rand (Int and IntN), so the results depend only on the
// seed and the sequence of draws.
var randMembers = []*member{
	{name: "int", params: []starargs.Param{starargs.Req("lo"), starargs.Req("hi")}, ret: "int", write: true,
		call: func(c *call) (starlark.Value, error) {
			lo, hi := c.int64(0), c.int64(1)
			if err := c.done(); err != nil {
				return nil, err
			}
			n, err := c.w.st.Rand().Int(lo, hi)
			if err != nil {
				return nil, c.wrap(err)
			}
			return starlark.MakeInt64(n), nil
		},
		doc: "Returns a random int between lo and hi, both included. lo greater than hi is an error."},
	{name: "choice", params: []starargs.Param{starargs.Req("seq")}, ret: "value", write: true,
		call: func(c *call) (starlark.Value, error) {
			seq := c.indexable(0)
			if err := c.done(); err != nil {
				return nil, err
			}
			if seq.Len() == 0 {
				return nil, c.wrap(errEmptyChoice)
			}
			i, err := c.w.st.Rand().IntN(seq.Len())
			if err != nil {
				return nil, c.wrap(err)
			}
			return seq.Index(i), nil
		},
		doc: "Returns a random element of seq (a list, tuple, string or range). An empty seq is an error."},
	{name: "shuffle", params: []starargs.Param{starargs.Req("list")}, ret: "None", write: true,
		call: func(c *call) (starlark.Value, error) {
			l, ok := c.args[0].(*starlark.List)
			if !ok {
				c.badType(0, c.args[0], "list")
				return nil, c.done()
			}
			// Refuse a frozen list (or one being iterated) before drawing anything.
			var err error
			if l.Len() == 0 {
				err = l.Clear()
			} else {
				err = l.SetIndex(0, l.Index(0))
			}
			if err != nil {
				return nil, c.wrap(err)
			}
			// Fisher-Yates, from the end, as Python's random.shuffle.
			for i := l.Len() - 1; i > 0; i-- {
				j, err := c.w.st.Rand().IntN(i + 1)
				if err != nil {
					return nil, c.wrap(err)
				}
				a, b := l.Index(i), l.Index(j)
				_ = l.SetIndex(i, b)
				_ = l.SetIndex(j, a)
			}
			return starlark.None, nil
		},
		doc: "Shuffles list in place and returns None. A frozen list is an error."},
	{name: "sample", params: []starargs.Param{starargs.Req("seq"), starargs.Req("k")}, ret: "list", write: true,
		call: func(c *call) (starlark.Value, error) {
			seq, k := c.indexable(0), c.int64(1)
			if err := c.done(); err != nil {
				return nil, err
			}
			n := seq.Len()
			if k < 0 || k > int64(n) {
				c.fail("k is %d, want between 0 and len(seq) = %d", k, n)
				return nil, c.done()
			}
			// A partial Fisher-Yates over the positions: k draws, k distinct elements.
			pos := make([]int, n)
			for i := range pos {
				pos[i] = i
			}
			out := make([]starlark.Value, k)
			for i := range out {
				j, err := c.w.st.Rand().IntN(n - i)
				if err != nil {
					return nil, c.wrap(err)
				}
				j += i
				pos[i], pos[j] = pos[j], pos[i]
				out[i] = seq.Index(pos[i])
			}
			return starlark.NewList(out), nil
		},
		doc: "Returns a new list of k elements of seq at distinct positions, in random order (like Python's random.sample). k greater than len(seq), or negative, is an error."},
}

type randError string

func (e randError) Error() string { return string(e) }

const errEmptyChoice = randError("cannot choose from an empty sequence")

// indexable returns argument i, a sequence with indexes (list, tuple, string, range).
func (c *call) indexable(i int) starlark.Indexable {
	seq, ok := c.args[i].(starlark.Indexable)
	if !ok {
		c.badType(i, c.args[i], "list, tuple, string or range")
		return starlark.Tuple(nil)
	}
	return seq
}
