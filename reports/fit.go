package reports

import (
	"slices"
	"strconv"
	"strings"

	"github.com/olekukonko/tablewriter/pkg/twwidth"
)

// A table fits a terminal of a given width in the first of these ways that
// works:
//  1. as it is;
//  2. with its text columns wrapped, widest first, down to a floor
//     (minText), numbers never wrapped;
//  3. transposed: a column per row and a row per field, in as many blocks
//     of rows as the width needs (a side-by-side device table becomes a
//     device per column, a list of kernels a few kernels per block).
// Titles, notes and details wrap at word boundaries. The width is the
// command line's to decide (the terminal's, or none for a pipe); --wide
// asks for none.

// minText is the narrowest a wrapped text column gets, in columns;
// minFigure the longest figure that is never wrapped.
const (
	minText   = 12
	minFigure = 16
)

// border is what a grid of n columns adds to its cells' widths: "│ " and
// " " around each cell, and the closing "│".
func border(n int) int { return 3*n + 1 }

// width is s's width in terminal columns: the widest of its lines.
func width(s string) int {
	n := 0
	for _, l := range strings.Split(s, "\n") {
		n = max(n, twwidth.Width(l))
	}
	return n
}

// longestWord is the width of s's widest word.
func longestWord(s string) int {
	n := 0
	for _, w := range strings.Fields(s) {
		n = max(n, twwidth.Width(w))
	}
	return n
}

// wrap breaks s into lines at most w columns wide: at spaces where it can,
// inside a word longer than w where it must.
func wrap(s string, w int) []string {
	w = max(w, 1)
	var lines []string
	for _, para := range strings.Split(s, "\n") {
		line := ""
		for _, word := range strings.Fields(para) {
			switch {
			case line == "":
				line = word
			case twwidth.Width(line)+1+twwidth.Width(word) <= w:
				line += " " + word
				continue
			default:
				lines = append(lines, line)
				line = word
			}
			for twwidth.Width(line) > w {
				head, tail := cut(line, w)
				lines = append(lines, head)
				line = tail
			}
		}
		lines = append(lines, line)
	}
	return lines
}

// cut splits s within its first w columns: after the last "_", ",",
// ":", "/", "." or "-" in the second half of them (a kernel's name reads
// better broken there), else after exactly w columns.
func cut(s string, w int) (string, string) {
	n, at := 0, 0
	for i, r := range s {
		rw := twwidth.Width(string(r))
		if n+rw > w && i > 0 {
			if at == 0 {
				at = i
			}
			return s[:at], s[at:]
		}
		n += rw
		if n*2 >= w && strings.ContainsRune("_,:/.-", r) {
			at = i + len(string(r))
		}
	}
	return s, ""
}

// wrapIndent wraps s to w columns, the first line after first and the
// others after as many spaces.
func wrapIndent(s, first string, w int) string {
	ind := twwidth.Width(first)
	lines := wrap(s, w-ind)
	pad := strings.Repeat(" ", ind)
	for i := range lines {
		if i == 0 {
			lines[i] = first + lines[i]
		} else {
			lines[i] = pad + lines[i]
		}
	}
	return strings.Join(lines, "\n")
}

// readable is the width a wrapped text column should keep: a list leaves
// out optional columns rather than wrap its text narrower.
const readable = 24

// fewRows is the most rows a table may have for transposing to be better
// than leaving columns out: a side-by-side table of a few devices reads
// well turned, a list of kernels does not.
const fewRows = 4

// fitted is a table as it fits a terminal.
type fitted struct {
	grids []grid
	// footnotes are the long cells of Table.Footnoted columns, "[1] ...",
	// whose cells now read "[1]".
	footnotes []string
	// left are the headers of the Table.Optional columns left out.
	left []string
	// turned says the table was transposed.
	turned bool
}

// fit returns t as it fits w columns. In turn: t as it is; the long cells
// of its Footnoted columns as footnotes and its text columns wrapped; for a
// list of more than fewRows rows, without its optional
// columns, one after another; transposed.
func (t Table) fit(w int, al []alignment) fitted {
	g := grid{header: t.Header, rows: t.Rows, align: al}
	if w <= 0 || g.natural() <= w {
		return fitted{grids: []grid{g}}
	}
	var out fitted
	if len(t.Footnoted) > 0 {
		g, out.footnotes = g.footnoted(t.Footnoted)
	}
	// The table, then for a list without one optional column more each
	// time: the first whose text columns keep a readable width, else the
	// one that keeps them widest.
	cands := []grid{g}
	if len(t.Rows) > fewRows {
		for _, name := range t.Optional {
			g = g.without(name)
			cands = append(cands, g)
		}
	}
	best := 0
	for i, c := range cands {
		f, ok, cp := c.fit(w)
		if ok && cp > best {
			best = cp
			out.grids, out.left = []grid{f}, t.Optional[:i]
		}
		if best >= readable {
			break
		}
	}
	if best > 0 {
		return out
	}
	return fitted{grids: t.transposed(w), turned: true}
}

// footnoted returns g with every cell of the named columns longer than
// minText replaced by a number, "[1]", and the footnotes that give their
// text, a cell repeated keeping its number.
func (g grid) footnoted(names []string) (grid, []string) {
	out := grid{header: g.header, align: g.align}
	var notes []string
	num := map[string]string{}
	for _, r := range g.rows {
		r = append([]string(nil), r...)
		for c := range r {
			if c >= len(g.header) || !slices.Contains(names, g.header[c]) || width(r[c]) <= minText {
				continue
			}
			k, ok := num[r[c]]
			if !ok {
				k = "[" + strconv.Itoa(len(notes)+1) + "]"
				num[r[c]] = k
				notes = append(notes, k+" "+r[c])
			}
			r[c] = k
		}
		out.rows = append(out.rows, r)
	}
	return out, notes
}

// natural is g's width unwrapped.
func (g grid) natural() int {
	n := border(len(g.header))
	for c := range g.header {
		n += max(width(g.header[c]), width(strings.Join(column(g.rows, c), "\n")))
	}
	return n
}

// fit returns g as it is when it fits w columns, else with its text
// columns wrapped (numbers never are) if that fits, and the width its
// widest columns were cut to (w when none was).
func (g grid) fit(w int) (grid, bool, int) {
	n := len(g.header)
	nat, low := make([]int, n), make([]int, n)
	for c := range n {
		head := longestWord(g.header[c])
		nat[c], low[c] = width(g.header[c]), head
		for _, r := range g.rows {
			if c < len(r) {
				nat[c] = max(nat[c], width(r[c]))
				// A figure breaks only between words, and only when
				// longer than minFigure ("989.4 TFLOP/s" stays whole).
				low[c] = max(low[c], min(width(r[c]), max(minFigure, longestWord(r[c]))))
			}
		}
		if g.align[c] == alignLeft { // text may break anywhere
			low[c] = min(nat[c], max(minText, head))
		}
	}
	avail := w - border(n)
	switch {
	case sum(nat) <= avail:
		return g, true, w
	case sum(low) <= avail:
		widths, cp := waterFill(nat, low, avail)
		return g.wrapped(widths), true, cp
	}
	return g, false, 0
}

// without returns g less the columns headed name.
func (g grid) without(name string) grid {
	keep := func(v []string) []string {
		var out []string
		for c, s := range v {
			if c >= len(g.header) || g.header[c] != name {
				out = append(out, s)
			}
		}
		return out
	}
	out := grid{header: keep(g.header)}
	for c, a := range g.align {
		if g.header[c] != name {
			out.align = append(out.align, a)
		}
	}
	for _, r := range g.rows {
		out.rows = append(out.rows, keep(r))
	}
	return out
}

// waterFill gives each column its natural width up to a common cap, the
// largest that fits avail, and never less than its floor; it returns the
// widths and the cap.
func waterFill(nat, low []int, avail int) ([]int, int) {
	out := make([]int, len(nat))
	capped := func(cp int) int {
		s := 0
		for i := range nat {
			out[i] = max(low[i], min(nat[i], cp))
			s += out[i]
		}
		return s
	}
	lo, hi := 0, 0
	for _, v := range nat {
		hi = max(hi, v)
	}
	for lo < hi { // the largest cap whose total fits
		mid := (lo + hi + 1) / 2
		if capped(mid) <= avail {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	capped(lo)
	return out, lo
}

func sum(v []int) int {
	s := 0
	for _, x := range v {
		s += x
	}
	return s
}

// transposed shows t with a column per row (headed by the row's first
// cell) and a row per field, in blocks of as many rows as fit w.
func (t Table) transposed(w int) []grid {
	n := len(t.Header)
	label := 0
	for _, h := range t.Header {
		label = max(label, width(h))
	}
	label = min(label, max(minText, w/4))
	var out []grid
	for start := 0; start < len(t.Rows) || start == 0; {
		// As many rows as fit at their natural width, up to a third of
		// the line each (a longer cell wraps).
		k, widths := 0, []int{label}
		for k < len(t.Rows)-start {
			nat := 0
			for _, c := range t.Rows[start+k] {
				nat = max(nat, width(c))
			}
			want := min(nat, max(minText, w/3))
			if k > 0 && sum(widths)+want > w-border(k+2) {
				break
			}
			widths = append(widths, want)
			k++
		}
		if k == 0 {
			break
		}
		// Share out what is left, widest wants first.
		free := w - border(k+1) - sum(widths)
		nats := make([]int, k+1)
		nats[0] = label
		for i := 1; i <= k; i++ {
			for _, c := range t.Rows[start+i-1] {
				nats[i] = max(nats[i], width(c))
			}
		}
		widths, _ = waterFill(nats, widths, sum(widths)+max(free, 0))
		g := grid{header: append([]string{t.Header[0]}, column(t.Rows[start:start+k], 0)...)}
		for c := 1; c < n; c++ {
			g.rows = append(g.rows, append([]string{t.Header[c]}, column(t.Rows[start:start+k], c)...))
		}
		g.align = make([]alignment, k+1)
		out = append(out, g.wrapped(widths))
		start += k
	}
	return out
}

// column returns cell c of each row ("" where a row is short).
func column(rows [][]string, c int) []string {
	out := make([]string, len(rows))
	for i, r := range rows {
		if c < len(r) {
			out[i] = r[c]
		}
	}
	return out
}

// alignment is a column's: text left, numbers right.
type alignment int

const (
	alignLeft alignment = iota
	alignRight
)

// grid is what tablewriter draws: a header, rows, and each column's
// alignment.
type grid struct {
	header []string
	rows   [][]string
	align  []alignment
}

// wrapped returns g with each cell wrapped to its column's width.
func (g grid) wrapped(widths []int) grid {
	wr := func(cells []string) []string {
		out := make([]string, len(cells))
		for c, s := range cells {
			if c < len(widths) && width(s) > widths[c] {
				s = strings.Join(wrap(s, widths[c]), "\n")
			}
			out[c] = s
		}
		return out
	}
	out := grid{header: wr(g.header), align: g.align}
	for _, r := range g.rows {
		out.rows = append(out.rows, wr(r))
	}
	return out
}
