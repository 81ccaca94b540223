package report

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"html"
	"html/template"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/coworkenv/coworkenv/internal/jsonv"
	"github.com/coworkenv/coworkenv/runtime/trace"
)

//go:embed assets
var assets embed.FS

var (
	style  = mustAsset("assets/style.css")
	script = mustAsset("assets/app.js")
	// csp allows the page's own style and script (by their hashes) and nothing else: no
	// request leaves the page, and markup that got in could run no script.
	csp = fmt.Sprintf("default-src 'none'; style-src '%s'; script-src '%s'; img-src data:; base-uri 'none'; form-action 'none'",
		hashOf(style), hashOf(script))
	views = map[string]*template.Template{}
)

func mustAsset(name string) string {
	b, err := assets.ReadFile(name)
	if err != nil {
		panic(err)
	}
	return string(b)
}

func hashOf(s string) string {
	h := sha256.Sum256([]byte(s))
	return "sha256-" + base64.StdEncoding.EncodeToString(h[:])
}

func init() {
	base := template.Must(template.New("page").Funcs(funcs).ParseFS(assets, "assets/page.tmpl", "assets/parts.tmpl"))
	for _, v := range []string{"episode", "rollout", "validation", "generation", "compare"} {
		views[v] = template.Must(template.Must(base.Clone()).ParseFS(assets, "assets/"+v+".tmpl"))
	}
}

var funcs = template.FuncMap{
	"num":     fmtNum,
	"pct":     fmtPct,
	"add":     func(a, b int) int { return a + b },
	"plural":  plural,
	"passed":  func(b bool) string { return map[bool]string{true: "pass", false: "fail"}[b] },
	"chart":   func(c *barChart) template.HTML { return c.svg() },
	"nonzero": func(f float64) bool { return f != 0 },
	"h":       heading,
	"keys":    keyList,
	// flipTable is the argument of the comparison's flip-table template
	"flipTable": func(title, id string, rows []flipRow) flipTableArgs { return flipTableArgs{title, id, rows} },
}

// heading is a heading of level 1 to 6 with an id (none when ""), its text escaped.
func heading(level int, id, text string) template.HTML {
	level = min(max(level, 1), 6)
	attr := ""
	if id != "" {
		attr = ` id="` + html.EscapeString(id) + `"`
	}
	return template.HTML(fmt.Sprintf("<h%d%s>%s</h%d>", level, attr, html.EscapeString(text), level))
}

// maxKeys bounds the keys a list of changes names; the rest are counted.
const maxKeys = 100

// keyList names changed entries: "a, b and 3 more".
func keyList(keys []string) string {
	if len(keys) <= maxKeys {
		return strings.Join(keys, ", ")
	}
	return strings.Join(keys[:maxKeys], ", ") + fmt.Sprintf(" and %d more", len(keys)-maxKeys)
}

// page is one HTML file: its title, its kind, the view's content and the data of its lists.
type page struct {
	Title string
	Kind  string // episode, rollout, validation, generation
	// Back links to the page this one belongs to (an episode view to its rollout).
	Back, BackText string
	Nav            []navLink
	Body           any
	Data           any // embedded as JSON (nil: none)
}

type navLink struct{ ID, Text string }

// pageData is what the page template is given.
type pageData struct {
	page
	CSP      string
	Style    template.CSS
	Script   template.JS
	DataJSON template.JS
	Engine   string
}

// render renders a page with the view template of its kind.
func render(p page) ([]byte, error) {
	d := pageData{page: p, CSP: csp, Style: template.CSS(style), Script: template.JS(script), Engine: trace.Engine}
	if p.Data != nil {
		j, err := dataJSON(p.Data)
		if err != nil {
			return nil, err
		}
		d.DataJSON = template.JS(j)
	}
	var b bytes.Buffer
	if err := views[p.Kind].ExecuteTemplate(&b, "page", d); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// dataJSON encodes the data block of a page. encoding/json escapes <, > and & (and the line
// separators U+2028 and U+2029), so no text in it can close the script element it stands in or
// open a comment; struct fields keep their order and map keys are sorted, so the output is
// deterministic.
func dataJSON(v any) (string, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(true)
	if err := enc.Encode(v); err != nil {
		return "", err
	}
	return strings.TrimSuffix(b.String(), "\n"), nil
}

// cut shortens a text to MaxShown bytes (at a character boundary) and says how much is left out;
// invalid UTF-8 is shown with replacement characters.
func cut(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	if len(s) <= MaxShown {
		return s
	}
	n := MaxShown
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + fmt.Sprintf("\n… (%d more bytes not shown)", len(s)-n)
}

// prettyValue is a JSON value indented, cut to MaxShown.
func prettyValue(v jsonv.Value) string {
	b, err := jsonv.Indent(v)
	if err != nil {
		return cut(jsonv.MustEncode(v))
	}
	return cut(string(b))
}

// prettyText is JSON text indented (keys in their order), or the text as it is when it is not
// JSON; cut to MaxShown.
func prettyText(s string) string {
	if len(s) > 4*MaxShown { // indenting would only be cut
		return cut(s)
	}
	v, err := jsonv.DecodeString(s)
	if err != nil {
		return cut(s)
	}
	return prettyValue(v)
}

// fmtNum is a score or rate: up to three decimals, at least one ("1.0", "0.667"); "–" for NaN.
func fmtNum(f float64) string {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return "–"
	}
	s := strconv.FormatFloat(f, 'f', 3, 64)
	s = strings.TrimRight(s, "0")
	if strings.HasSuffix(s, ".") {
		s += "0"
	}
	return s
}

// fmtPct is a rate as a percentage ("66.7%"); "–" for NaN.
func fmtPct(f float64) string {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return "–"
	}
	return strconv.FormatFloat(f*100, 'f', 1, 64) + "%"
}

func plural(n int, one, many string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, one)
	}
	return fmt.Sprintf("%d %s", n, many)
}

// jsonNum is a number for the data block: NaN and infinities (which JSON cannot hold) as null.
type jsonNum float64

func (f jsonNum) MarshalJSON() ([]byte, error) {
	if math.IsNaN(float64(f)) || math.IsInf(float64(f), 0) {
		return []byte("null"), nil
	}
	return []byte(strconv.FormatFloat(math.Round(float64(f)*1e6)/1e6, 'f', -1, 64)), nil
}
