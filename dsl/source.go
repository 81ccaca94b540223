package dsl

import (
	"bytes"
	"fmt"
	"unicode/utf8"

	"go.starlark.net/syntax"
)

// bom is the UTF-8 byte-order mark some editors put at the start of a file.
var bom = []byte("\xef\xbb\xbf")

// sourceText is the text of a script file as the interpreter reads it: without a leading
// byte-order mark (which editors do not show, so line 1 keeps the columns a person sees).
// A file that is not UTF-8 is refused: the error says where its first bad byte is.
func sourceText(src []byte) ([]byte, *NotUTF8Error) {
	src = bytes.TrimPrefix(src, bom)
	if utf8.Valid(src) {
		return src, nil
	}
	e := &NotUTF8Error{Line: 1, Col: 1}
	for i := 0; i < len(src); {
		r, n := utf8.DecodeRune(src[i:])
		if r == utf8.RuneError && n <= 1 {
			e.Byte = src[i]
			break
		}
		if r == '\n' {
			e.Line++
			e.Col = 1
		} else {
			e.Col++
		}
		i += n
	}
	return nil, e
}

// NotUTF8Error is a script file that is not UTF-8 text: the first byte that is not, at a 1-based
// line and column (in characters, as the interpreter counts them).
type NotUTF8Error struct {
	Byte      byte
	Line, Col int
}

func (e *NotUTF8Error) Error() string {
	return fmt.Sprintf("%d:%d: %s", e.Line, e.Col, e.message())
}

func (e *NotUTF8Error) message() string {
	return fmt.Sprintf("the file is not UTF-8 text: byte 0x%02X is not valid UTF-8 (save the file as UTF-8)", e.Byte)
}

// diag is the error as a syntax diagnostic of the file shown as path, at the bad byte.
func (e *NotUTF8Error) diag(path string) Diagnostic {
	d := NewDiag("syntax", e.message())
	d.File, d.Line, d.Col = path, e.Line, e.Col
	return d
}

// PointAtLoop moves a step-limit diagnostic that points at the `def` of a function to the first
// loop in that function's body. The interpreter knows no position for the jump of a loop whose
// body has none of its own (`while True: pass`), and then names the function; the loop is what
// ran too long. src is the source of d.File.
func PointAtLoop(d Diagnostic, src []byte) Diagnostic {
	if d.Code != "step-limit" || d.Line <= 0 || src == nil {
		return d
	}
	text, bad := sourceText(src)
	if bad != nil {
		return d
	}
	f, err := FileOptions.Parse(d.File, text, 0)
	if err != nil {
		return d
	}
	var loop syntax.Node
	syntax.Walk(f, func(n syntax.Node) bool {
		if loop != nil {
			return false
		}
		def, ok := n.(*syntax.DefStmt)
		if !ok {
			return true
		}
		if p := def.Def; int(p.Line) != d.Line || int(p.Col) != d.Col {
			return true // look inside: a def may be nested
		}
		for _, st := range def.Body {
			syntax.Walk(st, func(n syntax.Node) bool {
				switch n.(type) {
				case *syntax.WhileStmt, *syntax.ForStmt:
					if loop == nil {
						loop = n
					}
					return false
				case *syntax.DefStmt, *syntax.LambdaExpr:
					return false // another function's loops
				}
				return loop == nil
			})
		}
		return false
	})
	if loop != nil {
		start, _ := loop.Span()
		d.Line, d.Col = int(start.Line), int(start.Col)
	}
	return d
}

// Locate points a diagnostic where a reader looks: at a called name rather than its "("
// (PointAtCallee), at a loop rather than the function that ran out of steps (PointAtLoop). src
// is the source of d.File.
func Locate(d Diagnostic, src []byte) Diagnostic {
	return PointAtLoop(PointAtCallee(d, src), src)
}
