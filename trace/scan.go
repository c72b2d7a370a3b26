package trace

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// scanner reads the trace's JSON from a buffer of its own, without
// reflection: an event's fields are matched by name as they come and the
// rest skipped, which reads 1.6 times as fast as encoding/json's decoder,
// in memory bounded by the longest value kept (lim.event bytes). It counts
// lines for messages and fails once lim.event bytes have gone by since the
// end of the last complete event (mark), so that no event, string or run of
// blank space, however long, is held or scanned without end.
type scanner struct {
	next  func() ([]byte, error) // the bytes after buf's, and the error after the last
	buf   []byte                 // read ahead: buf[pos:end] is not yet consumed
	pos   int
	end   int
	eof   error
	lim   bounds
	off   int64  // bytes consumed
	line  int    // the line of the next byte
	mark  int64  // off after the last complete value
	field []byte // the key of the field being read
	// names holds one copy of each string value read.
	names interner
	str   []byte // the last string read, unescaped
	own   []byte // str's own array, when it does not lie in buf
	esc   []byte // the same as written, escapes and all
	lit   []byte // the last number or literal read
	raw   []byte // a value kept whole by skip
	// shapes holds each distinct "Input Dims" read, parsed, up to
	// maxShapes of them: a step repeats a few hundred shapes over
	// millions of ops.
	shapes map[string]inputDims
	// lists holds each distinct list of strings read ("Input type",
	// "Concrete Inputs"), up to maxShapes of them.
	lists map[string][]string
	// estimates holds each distinct "est. achieved occupancy %" (by its
	// bits), up to maxShapes of them.
	estimates map[uint64]*float64
	// feed, when the trace is read on several cores, hands out the
	// trace's bytes in parts, read ahead where they begin an event; cur is
	// the part in buf.
	feed    *feed
	cur     *part
	adopted int // parts taken whole
}

// maxShapes is the most distinct "Input Dims" the scanner keeps parsed.
const maxShapes = 1 << 14

func newScanner(r io.Reader, lim bounds) *scanner {
	s := newScannerOf(nil, lim)
	s.eof = nil
	buf := make([]byte, 64<<10)
	s.next = func() ([]byte, error) {
		n, err := r.Read(buf)
		return buf[:n], err
	}
	return s
}

// newScannerOf is a scanner of b alone.
func newScannerOf(b []byte, lim bounds) *scanner {
	return &scanner{buf: b, end: len(b), eof: io.EOF, lim: lim, line: 1, names: interner{}, shapes: map[string]inputDims{}, lists: map[string][]string{},
		estimates: map[uint64]*float64{}}
}

// discard consumes n buffered bytes.
func (s *scanner) discard(n int) {
	s.pos += n
	s.off += int64(n)
}

// maxDepth is how deeply values may nest, as encoding/json allows.
const maxDepth = 10000

// errSyntax is JSON that is not.
type errSyntax struct {
	off int64
	msg string
}

func (e *errSyntax) Error() string {
	return fmt.Sprintf("not valid JSON at byte %d: %s", e.off+1, e.msg)
}

func (s *scanner) syntax(format string, a ...any) error {
	return &errSyntax{s.off, fmt.Sprintf(format, a...)}
}

// done marks the end of a complete value.
func (s *scanner) done() { s.mark = s.off }

// over reports the event window exceeded.
func (s *scanner) over() error {
	if s.off-s.mark > s.lim.event {
		return errEventSize
	}
	return nil
}

// fail maps a read error: the end of input inside a value is a truncated
// trace.
func fail(err error) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return errTruncated
	}
	return err
}

// buffered returns the bytes read ahead, reading more when there are
// none.
func (s *scanner) buffered() ([]byte, error) {
	for s.pos == s.end {
		if s.eof != nil {
			return nil, s.eof
		}
		s.buf, s.eof = s.next()
		s.pos, s.end = 0, len(s.buf)
	}
	return s.buf[s.pos:s.end], nil
}

// space skips blank space and returns the next byte without consuming it.
func (s *scanner) space() (byte, error) {
	if s.pos < s.end && s.buf[s.pos] > ' ' { // most tokens follow another at once
		return s.buf[s.pos], nil
	}
	if s.pos+1 < s.end && s.buf[s.pos] == ' ' && s.buf[s.pos+1] > ' ' { // or one space (", ", ": ")
		s.discard(1)
		return s.buf[s.pos], nil
	}
	for {
		b, err := s.buffered()
		if err != nil {
			return 0, err
		}
		i := 0
	scan:
		for ; i < len(b); i++ {
			switch b[i] {
			case ' ', '\t', '\r':
			case '\n':
				s.line++
			default:
				break scan
			}
		}
		s.discard(i)
		if i < len(b) {
			return b[i], nil
		}
		if err := s.over(); err != nil {
			return 0, err
		}
	}
}

// expect consumes c, after blank space.
func (s *scanner) expect(c byte) error {
	b, err := s.space()
	if err != nil {
		return fail(err)
	}
	if b != c {
		return s.syntax("invalid character %q, expected %q", b, c)
	}
	s.discard(1)
	return nil
}

// more reports whether a list or object goes on after an item: it
// consumes the "," and returns false at the closing byte (consumed too).
func (s *scanner) more(end byte) (bool, error) {
	b, err := s.space()
	if err != nil {
		return false, fail(err)
	}
	s.discard(1)
	switch b {
	case ',':
		return true, nil
	case end:
		return false, nil
	}
	return false, s.syntax("invalid character %q after a value", b)
}

// first reports whether a list or object that was just opened has an item
// (false: it was empty, and its end is consumed).
func (s *scanner) first(end byte) (bool, error) {
	b, err := s.space()
	if err != nil {
		return false, fail(err)
	}
	if b == end {
		s.discard(1)
		return false, nil
	}
	return true, nil
}

// string reads a JSON string into s.str (valid until the next call).
func (s *scanner) string() ([]byte, error) {
	if err := s.expect('"'); err != nil {
		return nil, err
	}
	// Most strings lie whole in the buffer, plain ASCII: returned where
	// they lie (the buffer is not refilled before the next read).
	if b := s.buf[s.pos:s.end]; int64(len(b)) <= s.lim.event {
		i := 0
		for i+8 <= len(b) && !special(binary.LittleEndian.Uint64(b[i:])) { // eight plain bytes at a time
			i += 8
		}
		for ; i < len(b); i++ {
			c := b[i]
			if c == '"' {
				s.discard(i + 1)
				s.str, s.esc = b[:i:i], b[:i:i]
				return s.str, s.over()
			}
			if c == '\\' || c < ' ' || c >= utf8.RuneSelf {
				break
			}
		}
	}
	s.str = s.own[:0]
	defer func() { s.own = s.str[:0] }()
	for {
		b, err := s.buffered()
		if err != nil {
			return nil, fail(err)
		}
		chunk, quote := b, false
		if i := bytes.IndexByte(b, '"'); i >= 0 {
			chunk, quote = b[:i+1], true
		}
		s.discard(len(chunk))
		if err := s.over(); err != nil {
			return nil, err
		}
		s.str = append(s.str, chunk...)
		if quote {
			// A quote after an odd run of backslashes is escaped.
			n := 0
			for i := len(s.str) - 2; i >= 0 && s.str[i] == '\\'; i-- {
				n++
			}
			if n%2 == 0 {
				s.str = s.str[:len(s.str)-1]
				break
			}
		}
	}
	s.esc = s.str
	if bytes.IndexByte(s.str, '\\') < 0 && utf8.Valid(s.str) && !control(s.str) {
		return s.str, nil
	}
	return s.unescape()
}

// special reports whether any of the eight bytes in x may be a quote, a
// backslash, a control character or not ASCII (a byte above one that is
// may be reported too).
func special(x uint64) bool {
	const ones, high = 0x0101010101010101, 0x8080808080808080
	quote, backslash := x^(ones*'"'), x^(ones*'\\')
	return ((quote-ones)&^quote|(backslash-ones)&^backslash|(x-ones*' ')&^x|x)&high != 0
}

// control reports whether b holds a control character, which a JSON
// string may not.
func control(b []byte) bool {
	for _, c := range b {
		if c < ' ' {
			return true
		}
	}
	return false
}

// unescape decodes s.str's escapes in place; control characters and bad
// escapes are errors, invalid UTF-8 becomes U+FFFD (as encoding/json does).
func (s *scanner) unescape() ([]byte, error) {
	in := s.str
	out := make([]byte, 0, len(in))
	for i := 0; i < len(in); {
		c := in[i]
		switch {
		case c < ' ':
			return nil, s.syntax("invalid character %q in string literal", c)
		case c != '\\':
			r, n := utf8.DecodeRune(in[i:])
			out = utf8.AppendRune(out, r)
			i += n
			continue
		}
		if i+1 >= len(in) {
			return nil, s.syntax("invalid escape in string literal")
		}
		switch e := in[i+1]; e {
		case '"', '\\', '/':
			out = append(out, e)
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'u':
			r, ok := hex4(in[i+2:])
			if !ok {
				return nil, s.syntax("invalid escape in string literal")
			}
			i += 6
			if utf16.IsSurrogate(r) {
				if r2, ok := hex4(in[min(i+2, len(in)):]); ok && i+1 < len(in) && in[i] == '\\' && in[i+1] == 'u' {
					if d := utf16.DecodeRune(r, r2); d != utf8.RuneError {
						out = utf8.AppendRune(out, d)
						i += 6
						continue
					}
				}
				r = utf8.RuneError
			}
			out = utf8.AppendRune(out, r)
			continue
		default:
			return nil, s.syntax("invalid escape in string literal")
		}
		i += 2
	}
	s.str = out
	return out, nil
}

func hex4(b []byte) (rune, bool) {
	if len(b) < 4 {
		return 0, false
	}
	v, err := strconv.ParseUint(string(b[:4]), 16, 16)
	return rune(v), err == nil
}

// literal reads a number, true, false or null: the bytes up to the next
// delimiter.
func (s *scanner) literal() ([]byte, error) {
	if _, err := s.space(); err != nil {
		return nil, fail(err)
	}
	start := s.off
	s.lit = s.lit[:0]
	for {
		b, err := s.buffered()
		if err != nil {
			if errors.Is(err, io.EOF) && len(s.lit) > 0 {
				break
			}
			return nil, fail(err)
		}
		i := 0
		for ; i < len(b) && len(s.lit)+i <= maxLiteral; i++ {
			if c := b[i]; !(c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c == '-' || c == '+' || c == '.' || c == 'E') {
				break // a delimiter, or a character no literal has
			}
		}
		s.lit = append(s.lit, b[:i]...)
		s.discard(i)
		if len(s.lit) > maxLiteral {
			return nil, &errSyntax{start, "a number or literal longer than 64 bytes"}
		}
		if i < len(b) {
			break
		}
	}
	if !validLiteral(s.lit) {
		c := s.peekByte()
		if len(s.lit) > 0 {
			c = s.lit[0]
		}
		return nil, &errSyntax{start, fmt.Sprintf("invalid character %q looking for beginning of value", c)}
	}
	return s.lit, nil
}

// plain reads the number the scanner stands at where it is plain (up to
// 17 digits, with no leading zero, perhaps a "." among them: most of a
// trace's numbers) and lies whole in the buffer, followed by a byte no literal
// has: its digits as a whole number m, and how many of them follow the
// "." (frac). m is below 2^53, so m / 10^frac, both exact, rounds as
// strconv.ParseFloat does. ok false leaves the scanner as it was, for
// literal to read the number.
func (s *scanner) plain() (m uint64, frac int, ok bool) {
	b := s.buf[s.pos:s.end]
	i := 0
	for ; i < len(b) && i < 17 && b[i] >= '0' && b[i] <= '9'; i++ {
		m = m*10 + uint64(b[i]-'0')
	}
	if i == 0 || i > 1 && b[0] == '0' {
		return 0, 0, false
	}
	if i < len(b) && b[i] == '.' {
		j := i + 1
		for ; j < len(b) && j < 18 && b[j] >= '0' && b[j] <= '9'; j++ {
			m = m*10 + uint64(b[j]-'0')
		}
		if frac = j - i - 1; frac == 0 {
			return 0, 0, false
		}
		i = j
	}
	if i == len(b) || m > 1<<53 {
		return 0, 0, false
	}
	if c := b[i]; c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c == '-' || c == '+' || c == '.' || c == 'E' {
		return 0, 0, false // more of the literal than plain reads
	}
	s.discard(i)
	return m, frac, true
}

// pow10 are the powers of ten a plain number's fraction divides by.
var pow10 = [...]float64{1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17}

// maxLiteral is the longest number or literal read: float64's longest
// exact form is 24 bytes.
const maxLiteral = 64

func (s *scanner) peekByte() byte {
	b, _ := s.buffered()
	if len(b) == 0 {
		return 0
	}
	return b[0]
}

// validLiteral reports whether b is a JSON number, true, false or null.
func validLiteral(b []byte) bool {
	switch string(b) {
	case "true", "false", "null":
		return true
	case "":
		return false
	}
	i := 0
	if b[0] == '-' {
		i++
	}
	digits := func() int {
		n := 0
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
			n++
		}
		return n
	}
	start := i
	if n := digits(); n == 0 || n > 1 && b[start] == '0' {
		return false
	}
	if i < len(b) && b[i] == '.' {
		i++
		if digits() == 0 {
			return false
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if digits() == 0 {
			return false
		}
	}
	return i == len(b)
}

// skip reads past one value; with keep, its bytes are appended to s.raw
// (from empty), strings re-quoted.
func (s *scanner) skip(keep bool) error {
	if c, err := s.space(); err == nil && (c == '[' || c == '-' || c >= '0' && c <= '9') && s.skipNumbers(keep) {
		return nil
	}
	if keep {
		s.raw = s.raw[:0]
	}
	var ends []byte // the open containers' closing bytes
	for {
		c, err := s.space()
		if err != nil {
			return fail(err)
		}
		opened := false
		switch c {
		case '{', '[':
			if len(ends) >= maxDepth {
				return s.syntax("exceeded max depth")
			}
			s.discard(1)
			s.keep(keep, c)
			end := byte(']')
			if c == '{' {
				end = '}'
			}
			ok, err := s.first(end)
			if err != nil {
				return err
			}
			if ok {
				ends, opened = append(ends, end), true
				if end == '}' {
					if err := s.key(keep); err != nil {
						return err
					}
				}
			} else {
				s.keep(keep, end)
			}
		case '"':
			if _, err := s.string(); err != nil {
				return err
			}
			if keep {
				s.raw = append(append(append(s.raw, '"'), s.esc...), '"')
			}
		default:
			lit, err := s.literal()
			if err != nil {
				return err
			}
			if keep {
				s.raw = append(s.raw, lit...)
			}
		}
		if opened {
			continue
		}
		// After a value: close what ends here, then the next item.
		for len(ends) > 0 {
			end := ends[len(ends)-1]
			ok, err := s.more(end)
			if err != nil {
				return err
			}
			if !ok {
				s.keep(keep, end)
				ends = ends[:len(ends)-1]
				continue
			}
			s.keep(keep, ',')
			if end == '}' {
				if err := s.key(keep); err != nil {
					return err
				}
			}
			break
		}
		if len(ends) == 0 {
			return nil
		}
	}
}

// skipNumbers skips, as skip does, a number or a list of numbers and
// lists ("Input Strides", "Input Dims") that lies whole in the buffer,
// with single spaces at most between its tokens, in one pass over its
// bytes; it reports false, having consumed nothing, for anything else
// (which skip reads token by token, and words any error of).
func (s *scanner) skipNumbers(keep bool) bool {
	b := s.buf[s.pos:s.end]
	raw := s.raw[:0]
	space := func(i int) int {
		if i < len(b) && b[i] == ' ' {
			i++
		}
		return i
	}
	depth, i := 0, 0
	for {
		// A value at i: a list, or a number.
		if i >= len(b) {
			return false
		}
		if b[i] == '[' {
			if depth++; depth > 8 {
				return false
			}
			i = space(i + 1)
			if i < len(b) && b[i] == ']' {
				i++
				depth--
				if keep {
					raw = append(raw, '[', ']')
				}
			} else {
				if keep {
					raw = append(raw, '[')
				}
				continue
			}
		} else {
			j := i
			for j < len(b) && (b[j] >= '0' && b[j] <= '9' || b[j] == '-' || b[j] == '+' || b[j] == '.' || b[j] == 'e' || b[j] == 'E') {
				j++
			}
			if j == len(b) || j-i > maxLiteral || !validLiteral(b[i:j]) {
				return false
			}
			if keep {
				raw = append(raw, b[i:j]...)
			}
			i = j
		}
		// After a value: close the lists that end here, then the next item.
		for {
			if depth == 0 {
				s.discard(i)
				if keep {
					s.raw = raw
				}
				return true
			}
			i = space(i)
			if i >= len(b) {
				return false
			}
			if b[i] == ']' {
				i++
				depth--
				if keep {
					raw = append(raw, ']')
				}
				continue
			}
			if b[i] != ',' {
				return false
			}
			i = space(i + 1)
			if keep {
				raw = append(raw, ',')
			}
			break
		}
	}
}

func (s *scanner) keep(keep bool, c byte) {
	if keep {
		s.raw = append(s.raw, c)
	}
}

// key reads an object's key and its ":"; with keep, appends both to s.raw.
func (s *scanner) key(keep bool) error {
	if _, err := s.string(); err != nil {
		return err
	}
	if keep {
		s.raw = append(append(append(s.raw, '"'), s.esc...), '"', ':')
	}
	return s.expect(':')
}
