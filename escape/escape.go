// Package escape makes text from input safe to write in each output format.
// Names that gpucalc echoes (kernels, ops, files, models, devices from a
// workload, an Nsight Compute export, a trace or a config) are whatever
// their author wrote: an escape sequence can clear a terminal, retitle its
// window or set its clipboard (OSC 52), a "<" can make an SVG ill-formed, a
// leading "=" makes a spreadsheet run a formula, a "|" breaks a Markdown
// table. There is one function per format, applied where that format is
// written, to the whole text written (names cannot always be told from the
// words around them).
package escape

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// Terminal returns s with every character that a terminal acts on rather
// than prints written as a visible Go-style escape: C0 controls (ESC, BEL,
// CR, LF, TAB, ...), DEL, C1 controls (U+0080 to U+009F, which some
// terminals read as ESC [ and the like), bidirectional overrides and
// isolates (which reorder what follows), line and paragraph separators, and
// bytes that are not UTF-8. A name with ESC ] 52 becomes "\x1b]52;...",
// printed, not obeyed. Text without such characters is returned as is.
func Terminal(s string) string {
	if printableASCII(s) { // most text: every byte a character a terminal prints
		return s
	}
	i := strings.IndexFunc(s, unsafeRune)
	if i < 0 && utf8.ValidString(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	for j := 0; j < len(s); {
		r, n := utf8.DecodeRuneInString(s[j:])
		switch {
		case r == utf8.RuneError && n == 1:
			b.WriteString(`\x`)
			b.WriteString(hex2(s[j]))
		case unsafeRune(r):
			b.WriteString(quoteRune(r))
		default:
			b.WriteString(s[j : j+n])
		}
		j += n
	}
	return b.String()
}

// printableASCII reports whether every byte of s is printable ASCII.
func printableASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f {
			return false
		}
	}
	return true
}

// unsafeRune reports whether a terminal would act on r rather than print it.
func unsafeRune(r rune) bool {
	switch {
	case r < 0x20, r == 0x7f, r >= 0x80 && r <= 0x9f:
		return true
	case r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069, // embeddings, overrides, isolates
		r == 0x200e, r == 0x200f, r == 0x061c, // directional marks
		r == 0x2028, r == 0x2029: // line and paragraph separators
		return true
	}
	return false
}

// quoteRune spells r as Go would in a string literal: \n, \t, \x1b, \u202e.
func quoteRune(r rune) string {
	q := strconv.QuoteRuneToASCII(r)
	return q[1 : len(q)-1]
}

func hex2(c byte) string {
	const digits = "0123456789abcdef"
	return string([]byte{digits[c>>4], digits[c&0xf]})
}

// Markdown returns s safe for a Markdown table cell or list item: "|" and
// "\" escaped with a backslash (a "|" would end the cell), "<", ">" and "&"
// as HTML entities (no tag or entity of the input is rendered), a line
// break as <br> (a newline would end the row), and the remaining controls
// as Terminal writes them, since Markdown is read in terminals too.
func Markdown(s string) string {
	if plainMarkdown(s) { // most text: printed as it is, read by nothing
		return s
	}
	if !strings.ContainsAny(s, "\\|<>&\r\n") { // nothing Markdown or HTML reads
		return Terminal(s)
	}
	s = strings.ReplaceAll(strings.ReplaceAll(s, "\r\n", "\n"), "\r", "\n")
	s = markdownReplacer.Replace(s)
	return Terminal(s)
}

// plainMarkdown reports whether s is printable ASCII without a byte
// Markdown or HTML reads, in one pass over it: a million-row table asks
// this of every cell.
func plainMarkdown(s string) bool {
	for i := 0; i < len(s); i++ {
		if !markdownPlain[s[i]] {
			return false
		}
	}
	return true
}

// markdownPlain marks the bytes Markdown writes as they are: printable
// ASCII but "\", "|", "<", ">" and "&".
var markdownPlain = func() (t [256]bool) {
	for c := 0x20; c < 0x7f; c++ {
		t[c] = !strings.ContainsRune(`\|<>&`, rune(c))
	}
	return t
}()

var markdownReplacer = strings.NewReplacer(`\`, `\\`, "|", `\|`, "<", "&lt;", ">", "&gt;", "&", "&amp;", "\n", "<br>")

// CSV returns a cell safe to open in a spreadsheet and to print: its
// control characters as Terminal writes them (CSV is the batch commands'
// default output, often read on a terminal), then, by OWASP's rule for CSV
// injection, a leading "'" on a cell that starts with "=", "+", "-" or "@"
// and is not a number, so that it is read as text, never as a formula (a
// leading tab or carriage return, the rule's other two, are escaped by
// then). A number ("-1.5", "+3e9") is left as it is. Quoting is
// encoding/csv's job, not this function's.
func CSV(s string) string {
	s = Terminal(s)
	if s == "" || !strings.ContainsRune("=+-@\t\r", rune(s[0])) {
		return s
	}
	if _, err := strconv.ParseFloat(s, 64); err == nil {
		return s
	}
	return "'" + s
}

// XML returns s with what XML 1.0 cannot hold at all (C0 controls other
// than tab, line feed and carriage return; U+FFFE, U+FFFF; bytes that are
// not UTF-8) as U+FFFD, for text given to a writer that escapes markup
// itself: gonum's SVG backend (html.EscapeString), encoding/xml,
// html/template. Escaping "<" and "&" is theirs; these characters no
// escaping can carry, and one of them makes the whole chart ill-formed.
func XML(s string) string {
	if utf8.ValidString(s) && strings.IndexFunc(s, func(r rune) bool { return !xmlChar(r) }) < 0 {
		return s
	}
	return strings.Map(func(r rune) rune { // invalid bytes come as U+FFFD
		if !xmlChar(r) {
			return utf8.RuneError
		}
		return r
	}, s)
}

// xmlChar reports whether r is in XML 1.0's Char production.
func xmlChar(r rune) bool {
	return r == 0x09 || r == 0x0a || r == 0x0d ||
		r >= 0x20 && r <= 0xd7ff || r >= 0xe000 && r <= 0xfffd || r >= 0x10000 && r <= 0x10ffff
}
