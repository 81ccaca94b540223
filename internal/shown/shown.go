// Package shown makes text from input safe to print in diagnostics: a path or name read from a
// trace, a folder or a task file may hold characters that change how a terminal or a CI log
// shows what surrounds them (a U+202E turns the rest of the line around, an ESC starts a
// terminal command). Such characters are written as escapes instead: \u202e, \x1b.
package shown

import (
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"unicode"
	"unicode/utf8"
)

// unsafe reports whether r must not reach a terminal as it is: a control character (C0, DEL,
// C1) or a format character (category Cf: the bidirectional marks, embeddings, overrides and
// isolates, zero-width characters), or a line or paragraph separator.
func unsafe(r rune) bool {
	return unicode.IsControl(r) || unicode.Is(unicode.Cf, r) || r == '\u2028' || r == '\u2029'
}

// Name is a path or name as a diagnostic shows it: s itself when every character is safe to
// print, else s with each unsafe character (line breaks and tabs included) and each byte that
// is not UTF-8 escaped.
func Name(s string) string { return escape(s, false) }

// Text is a message as a diagnostic shows it: as Name, but line feeds and tabs are kept.
func Text(s string) string { return escape(s, true) }

func escape(s string, keepLines bool) string {
	clean := true
	for _, r := range s {
		if r == utf8.RuneError || unsafe(r) && !(keepLines && (r == '\n' || r == '\t')) {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, w := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && w == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case keepLines && (r == '\n' || r == '\t'):
			b.WriteRune(r)
		case r < 0x80 && unsafe(r):
			fmt.Fprintf(&b, `\x%02x`, r)
		case unsafe(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteString(s[i : i+w])
		}
		i += w
	}
	return b.String()
}

// Cause drops the operation and path of an *fs.PathError (an *os.PathError): for messages that
// name the file themselves ("cannot read t.star: no such file or directory").
func Cause(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
