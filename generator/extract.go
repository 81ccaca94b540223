package generator

import (
	"regexp"
	"strings"
)

var (
	thinkRE = regexp.MustCompile(`(?s)<think>.*?</think>`)
	fenceRE = regexp.MustCompile("(?m)^[ \t]*(```+|~~~+)[ \t]*([A-Za-z0-9_+.-]*)[^\n]*$")
	// codeLineRE matches a line that starts Starlark code at the top level.
	codeLineRE = regexp.MustCompile(`^(#|load\(|def |task\(|if |for |while |[A-Za-z_][A-Za-z0-9_]*\s*(=|\(|\[|\.|,|\+=))`)
)

// Extract finds the Starlark file in a model's answer: the fenced block that declares a task
// (the largest such when there are several; a block left open at the end counts), or else the
// code that follows the prose when the answer is not fenced. ok is false when there is none.
func Extract(answer string) (code string, ok bool) {
	answer = strings.ReplaceAll(answer, "\r\n", "\n")
	answer = thinkRE.ReplaceAllString(answer, "")
	if i := strings.Index(answer, "</think>"); i >= 0 { // a reasoning block whose start was cut
		answer = answer[i+len("</think>"):]
	}
	blocks := fencedBlocks(answer)
	best := ""
	for _, b := range blocks {
		if declaresTask(b) && len(b) > len(best) {
			best = b
		}
	}
	if best == "" && len(blocks) == 1 && strings.TrimSpace(blocks[0]) != "" && looksLikeCode(blocks[0]) {
		best = blocks[0]
	}
	if best != "" {
		return finish(best), true
	}
	if len(blocks) > 0 {
		return "", false
	}
	// Not fenced: the code runs from the first line that starts code to the last line that
	// belongs to it (indented, closing a bracket, or starting code again).
	lines := strings.Split(answer, "\n")
	start := -1
	for i, l := range lines {
		if codeLineRE.MatchString(l) {
			start = i
			break
		}
	}
	if start < 0 {
		return "", false
	}
	end := start
	for i := start; i < len(lines); i++ {
		l := lines[i]
		switch {
		case strings.TrimSpace(l) == "":
		case l[0] == ' ' || l[0] == '\t', l[0] == ')' || l[0] == ']' || l[0] == '}', strings.HasPrefix(l, `"""`), codeLineRE.MatchString(l):
			end = i
		default:
			// prose after the code ends it
			i = len(lines)
		}
	}
	code = strings.Join(lines[start:end+1], "\n")
	if !declaresTask(code) {
		return "", false
	}
	return finish(code), true
}

// fencedBlocks returns the contents of the fenced code blocks of s, in order.
func fencedBlocks(s string) []string {
	var out []string
	locs := fenceRE.FindAllStringSubmatchIndex(s, -1)
	for i := 0; i < len(locs); i++ {
		open := locs[i]
		fence := strings.TrimSpace(s[open[2]:open[3]])
		bodyStart := open[1] + 1
		if bodyStart > len(s) {
			bodyStart = len(s)
		}
		closed := false
		for j := i + 1; j < len(locs); j++ {
			cl := locs[j]
			// a closing fence has the same characters and no info string
			if strings.TrimSpace(s[cl[2]:cl[3]]) == fence && cl[4] == cl[5] {
				out = append(out, s[bodyStart:cl[0]])
				i = j
				closed = true
				break
			}
		}
		if !closed {
			out = append(out, s[bodyStart:])
			break
		}
	}
	return out
}

func declaresTask(code string) bool { return strings.Contains(code, "task(") }

func looksLikeCode(code string) bool {
	for _, l := range strings.Split(code, "\n") {
		if codeLineRE.MatchString(l) {
			return true
		}
	}
	return false
}

// finish trims blank lines around the code and ends it with one newline.
func finish(code string) string {
	return strings.Trim(code, "\n") + "\n"
}
