package report

import (
	"fmt"
	"html"
	"html/template"
	"math"
	"strings"
	"unicode/utf8"
)

// barChart is a horizontal bar chart drawn as inline SVG, with its figures as a table beside it
// for screen readers and for copying (the SVG is an image with a title and a description; the
// table holds every figure it draws).
type barChart struct {
	ID, Title string
	// Desc says what the bars are, for the image's description.
	Desc string
	// Head names the table's columns: the label's and the value's.
	Head [2]string
	Bars []bar
	// Max is the value of a full bar (1 for rates); 0: the largest value.
	Max float64
}

type bar struct {
	Label string
	// Suffix follows the label, and is drawn whole when a long label is cut short: a count,
	// such as " (12)".
	Suffix string
	Value  float64 // NaN draws no bar
	Text   string  // the value as shown
	Class  string  // pass, fail, warn or plain: the bar's colour (the text says the same)
}

const (
	chartWidth  = 600
	labelWidth  = 240
	valueWidth  = 110
	barHeight   = 24
	barGap      = 8
	chartMargin = 6
	maxLabel    = 27 // characters of a label drawn; the table has it whole
	// the narrow layout: the label above its bar
	narrowWidth = 360
	narrowRow   = 54
	narrowLabel = 40
)

// svg is the chart as a figure: the SVG and a table of its figures.
func (c *barChart) svg() template.HTML {
	max := c.Max
	if max <= 0 {
		for _, b := range c.Bars {
			if !math.IsNaN(b.Value) && b.Value > max {
				max = b.Value
			}
		}
	}
	if max <= 0 {
		max = 1
	}
	esc := html.EscapeString
	var b strings.Builder
	fmt.Fprintf(&b, "<figure class=\"chart\" id=\"%s\">\n", esc(c.ID))
	fmt.Fprintf(&b, "<figcaption>%s</figcaption>\n", esc(c.Title))
	c.draw(&b, max, false)
	c.draw(&b, max, true)
	fmt.Fprintf(&b, `<details class="chart-table"><summary>The figures as a table</summary><div class="table-wrap"><table><caption>%s</caption>`, esc(c.Title))
	fmt.Fprintf(&b, `<thead><tr><th scope="col">%s</th><th scope="col" class="n">%s</th></tr></thead><tbody>`, esc(c.Head[0]), esc(c.Head[1]))
	for _, br := range c.Bars {
		fmt.Fprintf(&b, "<tr><th scope=\"row\">%s</th><td class=\"n\">%s</td></tr>\n", esc(br.Label+br.Suffix), esc(br.Text))
	}
	b.WriteString(`</tbody></table></div></details></figure>`)
	return template.HTML(b.String())
}

// draw writes the chart as one SVG: wide, a bar per row with its label on its left (for a
// screen of a laptop's width), or narrow, the label above the bar (for a phone); the page's style
// shows one of the two. full is the value of a full bar.
func (c *barChart) draw(b *strings.Builder, full float64, narrow bool) {
	esc := html.EscapeString
	width, row, barX, label := chartWidth, barHeight+barGap, labelWidth, maxLabel
	class, id := "wide", c.ID
	if narrow {
		width, row, barX, label = narrowWidth, narrowRow, 0, narrowLabel
		class, id = "narrow", c.ID+"-n"
	}
	h := chartMargin*2 + len(c.Bars)*row
	if len(c.Bars) == 0 {
		h = chartMargin*2 + row
	}
	fmt.Fprintf(b, `<svg class="%s" viewBox="0 0 %d %d" width="%d" height="%d" role="img" aria-labelledby="%s-t %s-d" focusable="false">`,
		class, width, h, width, h, esc(id), esc(id))
	fmt.Fprintf(b, "\n<title id=\"%s-t\">%s</title><desc id=\"%s-d\">%s</desc>\n", esc(id), esc(c.Title), esc(id), esc(c.Desc))
	area := float64(width - barX - valueWidth)
	for i, br := range c.Bars {
		y := chartMargin + i*row
		text := fitLabel(br.Label, br.Suffix, label)
		barY, textY := y, y+barHeight/2+6
		fmt.Fprintf(b, `<g class="bar %s">`, esc(br.Class))
		if narrow {
			barY = y + 22
			fmt.Fprintf(b, `<text class="label" x="0" y="%d">%s</text>`, y+15, esc(text))
			textY = barY + barHeight/2 + 6
		} else {
			fmt.Fprintf(b, `<text class="label" x="%d" y="%d">%s</text>`, barX-8, textY, esc(text))
		}
		fmt.Fprintf(b, `<rect class="track" x="%d" y="%d" width="%.1f" height="%d" rx="3"></rect>`, barX, barY, area, barHeight)
		if !math.IsNaN(br.Value) && br.Value > 0 {
			w := area * math.Min(br.Value/full, 1)
			fmt.Fprintf(b, `<rect class="fill" x="%d" y="%d" width="%.1f" height="%d" rx="3"></rect>`, barX, barY, w, barHeight)
		}
		fmt.Fprintf(b, `<text class="value" x="%d" y="%d">%s</text>`, width-valueWidth+8, textY, esc(br.Text))
		b.WriteString("</g>\n")
	}
	if len(c.Bars) == 0 {
		fmt.Fprintf(b, `<text class="label empty" x="%d" y="%d">nothing to draw</text>`, width/2, chartMargin+barHeight/2+6)
	}
	b.WriteString("</svg>\n")
}

// fitLabel is a bar's label and suffix in at most n characters: the label cut short, with "…",
// when they do not fit, the suffix (a count) kept whole.
func fitLabel(label, suffix string, n int) string {
	if utf8.RuneCountInString(label)+utf8.RuneCountInString(suffix) <= n {
		return label + suffix
	}
	keep := max(n-utf8.RuneCountInString(suffix)-1, 1)
	if r := []rune(label); len(r) > keep {
		label = string(r[:keep])
	}
	return label + "…" + suffix
}

// rateClass is the colour of a pass rate's bar.
func rateClass(f float64) string {
	switch {
	case math.IsNaN(f):
		return "plain"
	case f >= 0.8:
		return "pass"
	case f >= 0.4:
		return "warn"
	}
	return "fail"
}
