package modelagent

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/coworkenv/coworkenv/internal/jsonv"
	"github.com/coworkenv/coworkenv/runtime/conversation"
)

// Tool calls written as text. A model served without a tool parser for it (or one the parser
// missed) writes its calls into content, or into its reasoning, in the format its chat
// template taught it. The agent reads them back when the answer has no tool_calls (and no
// function_call), by the rules of Config.ToolCallFormat:
//   - only a call that names one of the episode's tools is taken: text that merely looks like
//     JSON stays text;
//   - a format takes all of a message's calls or none: when one of them cannot be read (JSON
//     that does not parse, a tool the task does not have), the text stays as it is, and the
//     answer's note says why;
//   - the calls' markup is taken out of the text, which is then trimmed;
//   - at most maxTextCalls calls are read from one message, and text over maxCallText bytes is
//     not read at all.

const (
	maxTextCalls = 128      // calls read from one message
	maxCallText  = 16 << 20 // bytes of text the agent reads calls from
)

// textFormats are the text formats, in the order FormatAuto tries them.
var textFormats = []string{FormatHermes, FormatQwenXML, FormatMistral, FormatLlama}

// textCall is a tool call read from text: the tool, and its arguments as the text of a JSON
// object (or, when the model wrote them as a string that is not one, that string: the agent
// then tells the model so, as for native calls).
type textCall struct{ name, args string }

// span is a part of a text, taken out of it.
type span struct{ from, to int }

// textRead is what one format read from a text.
type textRead struct {
	calls []textCall
	cut   []span // in order, disjoint
	// problem says why text that looks like a call in this format gave none: a predicate, as in
	// "the text looks like a hermes tool call but " + problem.
	problem string
}

// fail gives up the format's calls for the reason problem.
func (r textRead) fail(problem string) textRead { return textRead{problem: problem} }

// toolset is what the text formats need to know of the episode's tools: their names and the
// JSON schema of their parameters.
type toolset map[string]*jsonv.Object // tool name -> the parameters' "properties", nil if none

func (ts toolset) has(name string) bool {
	_, ok := ts[name]
	return ok
}

// types are the JSON types a tool's schema allows for one parameter: its "type" (a string or a
// list), and the types of the branches of an anyOf or oneOf. None when the schema says nothing.
func (ts toolset) types(tool, param string) []string {
	prop, _ := ts[tool].Get(param)
	po, _ := prop.(*jsonv.Object)
	var out []string
	var add func(o *jsonv.Object)
	add = func(o *jsonv.Object) {
		switch t, _ := o.Get("type"); x := t.(type) {
		case string:
			out = append(out, x)
		case []jsonv.Value:
			for _, e := range x {
				if s, ok := e.(string); ok {
					out = append(out, s)
				}
			}
		}
		for _, k := range []string{"anyOf", "oneOf"} {
			branches, _ := o.Get(k)
			list, _ := branches.([]jsonv.Value)
			for _, b := range list {
				if bo, ok := b.(*jsonv.Object); ok {
					add(bo)
				}
			}
		}
	}
	if po != nil {
		add(po)
	}
	return out
}

// toolsetOf reads the tool schemas TurnContext.Tools gives.
func toolsetOf(schemas []*jsonv.Object) toolset {
	ts := toolset{}
	for _, s := range schemas {
		fn, _ := s.Get("function")
		fo, _ := fn.(*jsonv.Object)
		name, _ := fo.Get("name")
		n, ok := name.(string)
		if !ok || n == "" {
			continue
		}
		params, _ := fo.Get("parameters")
		po, _ := params.(*jsonv.Object)
		props, _ := po.Get("properties")
		pp, _ := props.(*jsonv.Object)
		ts[n] = pp
	}
	return ts
}

// callMarkers are the strings that show a text means to hold a tool call.
var callMarkers = []string{"<tool_call>", "<function=", "[TOOL_CALLS]", "<|python_tag|>"}

// readTextCalls reads the tool calls text holds in format (FormatAuto: the first text format
// that gives any). It returns the calls, the text without them (trimmed; text itself when there
// are none), the format they were read in, and when there are none but the text looks like a
// call, why it gave none (a predicate, with the format named: "looks like a hermes tool call
// but is not valid JSON: ...").
func readTextCalls(format, text string, ts toolset) (calls []textCall, rest, from, problem string) {
	if format == FormatNative || strings.TrimSpace(text) == "" {
		return nil, text, "", ""
	}
	if len(text) > maxCallText {
		for _, m := range callMarkers {
			if strings.Contains(text, m) {
				return nil, text, "", fmt.Sprintf("looks like a tool call but is %d bytes, over the %d MiB the agent reads tool calls from", len(text), maxCallText>>20)
			}
		}
		return nil, text, "", ""
	}
	formats := textFormats
	if format != FormatAuto {
		formats = []string{format}
	}
	for _, f := range formats {
		var r textRead
		switch f {
		case FormatHermes:
			r = hermesCalls(text, ts)
		case FormatQwenXML:
			r = qwenCalls(text, ts)
		case FormatMistral:
			r = mistralCalls(text, ts)
		case FormatLlama:
			r = llamaCalls(text, ts)
		}
		if len(r.calls) > 0 {
			return r.calls, cutOut(text, r.cut), f, ""
		}
		if problem == "" && r.problem != "" {
			problem = "looks like a " + f + " tool call but " + r.problem
		}
	}
	return nil, text, "", problem
}

// cutOut is text without the spans, trimmed.
func cutOut(text string, cut []span) string {
	var b strings.Builder
	at := 0
	for _, s := range cut {
		b.WriteString(text[at:s.from])
		at = s.to
	}
	b.WriteString(text[at:])
	return strings.TrimSpace(b.String())
}

const space = " \t\r\n"

// finder finds markers in a text from positions that never go back, so that each part of the
// text is searched once per marker however many calls and parameters it holds.
type finder struct {
	text string
	next map[string]int // marker -> its first position at or after the last search, len(text) for none
}

func newFinder(text string) *finder { return &finder{text: text, next: map[string]int{}} }

// find is the position of the first marker at or after from, -1 for none.
func (f *finder) find(marker string, from int) int {
	p, ok := f.next[marker]
	if !ok || p < from {
		p = len(f.text)
		if k := strings.Index(f.text[from:], marker); k >= 0 {
			p = from + k
		}
		f.next[marker] = p
	}
	if p == len(f.text) {
		return -1
	}
	return p
}

// callFromObject reads a call written as a JSON object {"name": ..., "arguments": {...}}, the
// arguments also under "parameters"; they may be left out ({}), null ({}), or a string.
func callFromObject(o *jsonv.Object, ts toolset) (textCall, string) {
	nv, _ := o.Get("name")
	name, ok := nv.(string)
	if !ok || name == "" {
		return textCall{}, "has no tool name"
	}
	if !ts.has(name) {
		return textCall{}, fmt.Sprintf("names %q, which is not one of the task's tools", conversation.Clip(name, 100))
	}
	v, ok := o.Get("arguments")
	if !ok {
		v, _ = o.Get("parameters")
	}
	args := "{}"
	switch x := v.(type) {
	case nil:
	case string:
		args = x
	default:
		args = jsonv.MustEncode(x)
	}
	return textCall{name: name, args: args}, ""
}

// callKeys are the keys a JSON object written as a call may have (Llama, Mistral).
var callKeys = map[string]bool{"name": true, "arguments": true, "parameters": true, "type": true, "id": true}

// callShaped reports whether o has only the keys of a call, a name among them, and (when
// needArgs) its arguments too.
func callShaped(o *jsonv.Object, needArgs bool) bool {
	if _, ok := o.Get("name"); !ok {
		return false
	}
	for _, m := range o.Members {
		if !callKeys[m.Key] {
			return false
		}
	}
	if !needArgs {
		return true
	}
	_, a := o.Get("arguments")
	_, p := o.Get("parameters")
	return a || p
}

// jsonProblem is the problem of a JSON text that does not parse.
func jsonProblem(err error) string { return "is not valid JSON: " + err.Error() }

// Hermes (Hermes 2 Pro, Qwen2.5, Qwen3): each call is a JSON object between <tool_call> and
// </tool_call>; the last one may be left open (a stop sequence ate its end).

const (
	hermesOpen  = "<tool_call>"
	hermesClose = "</tool_call>"
)

func hermesCalls(text string, ts toolset) textRead {
	var r textRead
	f := newFinder(text)
	for at := 0; ; {
		start := f.find(hermesOpen, at)
		if start < 0 {
			break
		}
		if len(r.calls) == maxTextCalls {
			return r.fail(fmt.Sprintf("has more than %d calls", maxTextCalls))
		}
		body0 := start + len(hermesOpen)
		end, next := len(text), len(text)
		if k := f.find(hermesClose, body0); k >= 0 {
			end, next = k, k+len(hermesClose)
		}
		body := strings.TrimSpace(text[body0:end])
		if !strings.HasPrefix(body, "{") {
			return r.fail("is not a JSON object")
		}
		v, err := jsonv.DecodeString(body)
		if err != nil {
			return r.fail(jsonProblem(err))
		}
		o, ok := v.(*jsonv.Object)
		if !ok {
			return r.fail("is not a JSON object")
		}
		c, problem := callFromObject(o, ts)
		if problem != "" {
			return r.fail(problem)
		}
		r.calls = append(r.calls, c)
		r.cut = append(r.cut, span{start, next})
		at = next
	}
	return r
}

// Qwen3-Coder XML: <function=NAME> with one <parameter=KEY>VALUE</parameter> per argument and
// </function>, each usually inside <tool_call>…</tool_call>. Values are text; the tool's schema
// says which to read as JSON (see qwenValue).

const (
	qwenFunction   = "<function="
	qwenFunctionE  = "</function>"
	qwenParameter  = "<parameter="
	qwenParameterE = "</parameter>"
)

func qwenCalls(text string, ts toolset) textRead {
	var r textRead
	f := newFinder(text)
	for at := 0; ; {
		start := f.find(qwenFunction, at)
		if start < 0 {
			break
		}
		if len(r.calls) == maxTextCalls {
			return r.fail(fmt.Sprintf("has more than %d calls", maxTextCalls))
		}
		c, end, problem := qwenCall(f, start, ts)
		if problem != "" {
			return r.fail(problem)
		}
		// the <tool_call> tags around it go too
		from, to := start, end
		if before := strings.TrimRight(text[at:start], space); strings.HasSuffix(before, hermesOpen) {
			from = at + len(before) - len(hermesOpen)
		}
		if after := strings.TrimLeft(text[end:], space); strings.HasPrefix(after, hermesClose) {
			to = len(text) - len(after) + len(hermesClose)
		}
		r.calls = append(r.calls, c)
		r.cut = append(r.cut, span{from, to})
		at = to
	}
	return r
}

// qwenCall reads the function that starts at start; end is where it ends (after </function>,
// or where its block or the text ends when the model left it open).
func qwenCall(f *finder, start int, ts toolset) (c textCall, end int, problem string) {
	text := f.text
	p := start + len(qwenFunction)
	k := strings.IndexByte(text[p:], '>')
	if k < 0 {
		return c, 0, "has no > after the function name"
	}
	name := strings.TrimSpace(text[p : p+k])
	if !ts.has(name) {
		return c, 0, fmt.Sprintf("names %q, which is not one of the task's tools", conversation.Clip(name, 100))
	}
	p += k + 1
	args := &jsonv.Object{}
	for {
		rest := strings.TrimLeft(text[p:], space)
		p = len(text) - len(rest)
		switch {
		case strings.HasPrefix(rest, qwenParameter):
			q := p + len(qwenParameter)
			k := strings.IndexByte(text[q:], '>')
			if k < 0 {
				return c, 0, "has no > after a parameter name"
			}
			key := strings.TrimSpace(text[q : q+k])
			q += k + 1
			// the value ends at </parameter>, or where the next parameter or the function
			// begins or ends when the model left it open
			vend, next := len(text), len(text)
			for _, m := range []string{qwenParameterE, qwenParameter, qwenFunctionE} {
				if e := f.find(m, q); e >= 0 && e < vend {
					vend, next = e, e
					if m == qwenParameterE {
						next += len(m)
					}
				}
			}
			value := text[q:vend]
			value = strings.TrimPrefix(value, "\n")
			value = strings.TrimSuffix(value, "\n")
			args.Set(key, qwenValue(ts, name, key, value))
			p = next
		case strings.HasPrefix(rest, qwenFunctionE):
			return textCall{name: name, args: jsonv.MustEncode(args)}, p + len(qwenFunctionE), ""
		case rest == "" || strings.HasPrefix(rest, hermesClose):
			return textCall{name: name, args: jsonv.MustEncode(args)}, p, ""
		default:
			return c, 0, fmt.Sprintf("has text that is not a parameter in the function %s: %q", name, conversation.Clip(rest, 40))
		}
	}
}

// qwenValue is the argument a parameter's text stands for: JSON when the tool's schema gives
// the parameter a type other than string (integer, number, boolean, object, array, null) and the
// text is a value of that type; the text as it is otherwise.
func qwenValue(ts toolset, tool, key, value string) jsonv.Value {
	types := ts.types(tool, key)
	for _, t := range types {
		if t == "string" {
			return value
		}
	}
	s := strings.TrimSpace(value)
	for _, t := range types {
		switch t {
		case "boolean":
			switch strings.ToLower(s) {
			case "true":
				return true
			case "false":
				return false
			}
		case "null":
			if s == "null" || s == "None" {
				return nil
			}
		case "integer", "number", "object", "array":
			v, err := jsonv.DecodeString(s)
			if err != nil {
				continue
			}
			switch v.(type) {
			case int64:
				if t == "integer" || t == "number" {
					return v
				}
			case float64:
				if t == "number" {
					return v
				}
			case *jsonv.Object:
				if t == "object" {
					return v
				}
			case []jsonv.Value:
				if t == "array" {
					return v
				}
			}
		}
	}
	return value
}

// Mistral: [TOOL_CALLS] and a JSON list of calls (v3 tokenizers), or [TOOL_CALLS]NAME[ARGS]{...}
// once per call (v11 and later; [CALL_ID]ID may come before [ARGS]).

const (
	mistralCalls0 = "[TOOL_CALLS]"
	mistralArgs   = "[ARGS]"
	mistralCallID = "[CALL_ID]"
)

func mistralCalls(text string, ts toolset) textRead {
	start := strings.Index(text, mistralCalls0)
	if start < 0 {
		return textRead{}
	}
	var r textRead
	f := newFinder(text)
	p := start
	for strings.HasPrefix(text[p:], mistralCalls0) {
		p = skip(text, p+len(mistralCalls0))
		if p < len(text) && text[p] == '[' {
			end := jsonEnd(text, p)
			if end < 0 {
				return r.fail("is not valid JSON: the list is not closed")
			}
			v, err := jsonv.DecodeString(text[p:end])
			if err != nil {
				return r.fail(jsonProblem(err))
			}
			for _, e := range v.([]jsonv.Value) {
				o, ok := e.(*jsonv.Object)
				if !ok || !callShaped(o, false) {
					return r.fail("is not a list of calls with a name and arguments")
				}
				c, problem := callFromObject(o, ts)
				if problem != "" {
					return r.fail(problem)
				}
				r.calls = append(r.calls, c)
			}
			p = end
		} else {
			a := f.find(mistralArgs, p)
			if a < 0 {
				return r.fail("has no [ARGS] after the tool name")
			}
			name := text[p:a]
			if k := strings.Index(name, mistralCallID); k >= 0 {
				name = name[:k]
			}
			name = strings.TrimSpace(name)
			if !ts.has(name) {
				return r.fail(fmt.Sprintf("names %q, which is not one of the task's tools", conversation.Clip(name, 100)))
			}
			q := skip(text, a+len(mistralArgs))
			end := jsonEnd(text, q)
			if q >= len(text) || text[q] != '{' || end < 0 {
				return r.fail("has arguments that are not a JSON object")
			}
			v, err := jsonv.DecodeString(text[q:end])
			if err != nil {
				return r.fail(jsonProblem(err))
			}
			r.calls = append(r.calls, textCall{name: name, args: jsonv.MustEncode(v)})
			p = end
		}
		if len(r.calls) > maxTextCalls {
			return r.fail(fmt.Sprintf("has more than %d calls", maxTextCalls))
		}
		p = skip(text, p)
	}
	r.cut = []span{{start, p}}
	return r
}

// Llama 3.x: the whole text is the call, {"name": ..., "parameters": {...}} ("arguments" too), or
// a list of them, or several separated by ";"; or such text follows <|python_tag|>, with the
// text before it kept.

const pythonTag = "<|python_tag|>"

// llamaStart matches the start of text that is meant as a JSON call.
var llamaStart = regexp.MustCompile(`^\[?\s*\{\s*"name"\s*:`)

func llamaCalls(text string, ts toolset) textRead {
	var r textRead
	from, tagged := 0, false
	body := text
	if k := strings.Index(text, pythonTag); k >= 0 {
		from, tagged, body = k, true, text[k+len(pythonTag):]
	}
	body = strings.TrimSpace(body)
	if body == "" || (body[0] != '{' && body[0] != '[') {
		if tagged {
			return r.fail("is not JSON")
		}
		return r
	}
	var objs []*jsonv.Object
	for p := 0; ; {
		p = skip(body, p)
		for p < len(body) && body[p] == ';' {
			p = skip(body, p+1)
		}
		if p == len(body) {
			break
		}
		end := jsonEnd(body, p)
		if end < 0 {
			if tagged || llamaStart.MatchString(body) {
				return r.fail("is not valid JSON")
			}
			return r
		}
		v, err := jsonv.DecodeString(body[p:end])
		if err != nil {
			if tagged || llamaStart.MatchString(body) {
				return r.fail(jsonProblem(err))
			}
			return r
		}
		switch x := v.(type) {
		case *jsonv.Object:
			objs = append(objs, x)
		case []jsonv.Value:
			for _, e := range x {
				o, ok := e.(*jsonv.Object)
				if !ok {
					return r // a list of something else: plain JSON
				}
				objs = append(objs, o)
			}
		}
		if len(objs) > maxTextCalls {
			return r.fail(fmt.Sprintf("has more than %d calls", maxTextCalls))
		}
		p = end
	}
	if len(objs) == 0 {
		return r
	}
	for _, o := range objs {
		if !callShaped(o, !tagged) {
			if tagged {
				return r.fail("is not a call with a name and parameters")
			}
			return r // JSON that is not a call: a reply
		}
	}
	for _, o := range objs {
		c, problem := callFromObject(o, ts)
		if problem != "" {
			return r.fail(problem)
		}
		r.calls = append(r.calls, c)
	}
	r.cut = []span{{from, len(text)}}
	return r
}

// skip is the first position from p that is not white space.
func skip(s string, p int) int {
	for p < len(s) && strings.IndexByte(space, s[p]) >= 0 {
		p++
	}
	return p
}

// jsonEnd is the end of the JSON object or array that starts at s[p], found by its brackets
// (strings and their escapes skipped; whether it is valid JSON is for the decoder to say); -1
// when s[p] is neither { nor [, or the value is not closed.
func jsonEnd(s string, p int) int {
	if p >= len(s) || (s[p] != '{' && s[p] != '[') {
		return -1
	}
	depth := 0
	for i := p; i < len(s); i++ {
		switch s[i] {
		case '"':
			for i++; i < len(s) && s[i] != '"'; i++ {
				if s[i] == '\\' {
					i++
				}
			}
			if i >= len(s) {
				return -1
			}
		case '{', '[':
			depth++
		case '}', ']':
			depth--
			if depth == 0 {
				return i + 1
			}
		}
	}
	return -1
}
