package reports

import (
	"bytes"
	"encoding/binary"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"iter"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/gpucalc/gpucalc/escape"
	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/pkg/twwidth"
	"github.com/olekukonko/tablewriter/renderer"
	"github.com/olekukonko/tablewriter/tw"
)

// Format is an output format.
type Format string

// Output formats. Every command that prints results takes table, markdown,
// json and csv; html is for reports that have a page form.
const (
	FormatTable    Format = "table"
	FormatMarkdown Format = "markdown"
	FormatJSON     Format = "json"
	FormatCSV      Format = "csv"
	FormatHTML     Format = "html"
)

// Formats lists the formats every command accepts.
var Formats = []Format{FormatTable, FormatMarkdown, FormatJSON, FormatCSV}

// ParseFormat parses a --format value; allowed lists what the command takes
// (Formats when nil).
func ParseFormat(s string, allowed []Format) (Format, error) {
	if allowed == nil {
		allowed = Formats
	}
	for _, f := range allowed {
		if string(f) == strings.ToLower(s) || (f == FormatMarkdown && strings.EqualFold(s, "md")) {
			return f, nil
		}
	}
	var names []string
	for _, f := range allowed {
		names = append(names, string(f))
	}
	return "", fmt.Errorf("unknown format %q; expected one of %s", s, strings.Join(names, ", "))
}

// Table is a titled grid of cells with optional notes under it. Key names
// a machine-readable table (a record set): the section that --section
// picks in CSV, snake_case.
type Table struct {
	Key    string
	Title  string
	Header []string
	Rows   [][]string
	// Details are the full text of numbered rows (a finding's message and
	// fix), listed under the table as (1), (2), ...: content, unlike Notes.
	Details []string
	// Notes comment on the table, at most two lines.
	Notes []string
	// Footnoted are the headers of columns whose long cells (a source, a
	// URL) become numbered footnotes under the table when it is too wide
	// for the terminal.
	Footnoted []string
	// Optional are the headers of columns that a terminal too narrow for
	// the table may leave out, the first first (the width and --wide are
	// the command line's; see fit).
	Optional []string
	// Stream, when set, yields the rows after Rows, made as they are
	// written: a table of a row per input row (an export's kernels) is
	// never held whole. A row's slice is the reader's only until the next
	// (a stream may make every row in one array): clone it to keep it.
	// Render calls it up to twice (see longRows).
	Stream iter.Seq[[]string]
}

// all yields t's rows: Rows, then Stream's.
func (t Table) all(yield func([]string) bool) {
	for _, r := range t.Rows {
		if !yield(r) {
			return
		}
	}
	if t.Stream != nil {
		t.Stream(yield)
	}
}

// Collected returns t with its Stream's rows in Rows, for a reader that
// wants them all (a web answer, whose rows are bounded).
func (t Table) Collected() Table {
	if t.Stream != nil {
		t.Rows = slices.Clip(t.Rows)
		for r := range t.Stream {
			t.Rows = append(t.Rows, slices.Clone(r))
		}
		t.Stream = nil
	}
	return t
}

// Section returns the table of tables whose Key is name, or the first for
// "". ok is false when none has that key.
func Section(tables []Table, name string) (Table, bool) {
	for _, t := range tables {
		if name == "" || t.Key == name {
			return t, true
		}
	}
	return Table{}, false
}

// numeric reports whether a cell reads as a number, so that its column is
// right-aligned.
func numeric(s string) bool {
	if s != "" && (s[0] >= '0' && s[0] <= '9' || s[0] == '.') { // most numbers: no sign to trim
		return true
	}
	s = strings.TrimLeft(s, "-+~≈<>≤≥ ")
	return s != "" && (s[0] >= '0' && s[0] <= '9' || s[0] == '.')
}

func (t Table) alignments() []alignment {
	al := make([]alignment, len(t.Header))
	for c := range t.Header {
		al[c] = alignRight
		any := false
		for _, r := range t.Rows {
			if c < len(r) && r[c] != "" && r[c] != "-" {
				any = true
				if !numeric(r[c]) {
					al[c] = alignLeft
					break
				}
			}
		}
		if !any {
			al[c] = alignLeft
		}
	}
	return al
}

// Render writes tables in format f (table, markdown or csv). Tables follow
// one another, separated by a blank line; CSV writes only header and rows.
// width is the number of columns a table must fit (see fit), 0 for no
// limit; only the table format has one.
func Render(w io.Writer, f Format, width int, tables ...Table) error {
	// One tablewriter table serves every grid: each new one allocates a
	// 10,240-entry cache, most of what a short command touches.
	var tab *tablewriter.Table
	var buf bytes.Buffer // tab's writer: one for every table
	for i, t := range tables {
		if i > 0 {
			if _, err := fmt.Fprintln(w); err != nil {
				return err
			}
		}
		var err error
		switch f {
		case FormatCSV:
			err = t.csv(w)
		case FormatMarkdown:
			err = t.grid(&buf, w, true, 0, &tab)
		case FormatTable:
			err = t.grid(&buf, w, false, width, &tab)
		default:
			err = fmt.Errorf("reports: format %q is not a table format", f)
		}
		if err != nil {
			return err
		}
		if _, err := buf.WriteTo(w); err != nil {
			return err
		}
	}
	return nil
}

// asciiGlyphs spells the typographic glyphs of gpucalc's prose (finding
// messages, notes) in ASCII, so that CSV holds no glyph.
var asciiGlyphs = strings.NewReplacer("µ", "u", "×", "x", "–", "-", "—", "-", "≈", "~", "≤", "<=", "≥", ">=",
	"→", "->", "◀", "<", "·", "*", "²", "^2", "³", "^3", "…", "...", "±", "+/-", "’", "'", "§", "section ")

func (t Table) csv(w io.Writer) error {
	cw := csv.NewWriter(w)
	rec := make([]string, 0, len(t.Header))
	write := func(row []string) error {
		rec = rec[:0]
		for _, c := range row {
			rec = append(rec, escape.CSV(asciiGlyphs.Replace(c)))
		}
		return cw.Write(rec)
	}
	err := write(t.Header)
	for row := range t.all {
		if err != nil {
			break
		}
		err = write(row)
	}
	if err != nil {
		return err
	}
	cw.Flush()
	return cw.Error()
}

// escaped returns t with every text escaped by esc: cells, title, details
// and notes all may hold names from the input.
func (t Table) escaped(esc func(string) string) Table {
	each := func(v []string) []string {
		out := make([]string, len(v))
		for i, s := range v {
			out[i] = esc(s)
		}
		return out
	}
	out := t
	out.Title, out.Header, out.Details, out.Notes = esc(t.Title), each(t.Header), each(t.Details), each(t.Notes)
	out.Rows = make([][]string, len(t.Rows))
	for i, r := range t.Rows {
		out.Rows[i] = each(r)
	}
	return out
}

// longRows is the most rows a table is drawn with fitted to the terminal
// (fit) by tablewriter, which holds every cell several times over. A
// longer table (an export's kernels, a long batch) is written as it is
// made, at the width of its widest cells (as with --wide): a first pass
// over its rows takes each column's width and alignment, a second draws
// them, in the same characters tablewriter would.
var longRows = 1000

// grid writes t as a Markdown table, or as a table drawn in box characters
// fitted to width columns (fit; 0 for no limit). A table of more than
// longRows rows is streamed: drawn into b and written to w as it goes.
func (t Table) grid(b *bytes.Buffer, w io.Writer, markdown bool, width int, reuse **tablewriter.Table) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("reports: rendering table %q: %v", t.Title, r)
		}
	}()
	long := len(t.Rows) > longRows
	if t.Stream != nil && !long {
		// The first longRows+1 rows tell a short table from a long one.
		var head [][]string
		for r := range t.all {
			if len(head) == longRows {
				long = true
				break
			}
			head = append(head, slices.Clone(r))
		}
		if !long {
			t.Rows, t.Stream = head, nil
		}
	}
	esc := escape.Terminal
	if markdown {
		esc = escape.Markdown
	}
	var al []alignment
	var rows iter.Seq[[]string]
	if long {
		rows = t.all // the cells as written: escaped as they are drawn
	} else {
		al = t.alignments() // of the cells as written: "&lt;0.1%" is a number
	}
	t = t.escaped(esc)
	if t.Title != "" {
		switch {
		case markdown:
			fmt.Fprintf(b, "### %s\n\n", t.Title)
		case width > 0:
			fmt.Fprintf(b, "%s\n", wrapIndent(t.Title, "", width))
		default:
			fmt.Fprintf(b, "%s\n", t.Title)
		}
	}
	var fit fitted
	if long {
		if err := drawLong(b, w, t.Header, rows, esc, markdown); err != nil {
			return err
		}
		if width > 0 {
			t.Notes = append(t.Notes, fmt.Sprintf("Not fitted to the terminal: more than %d rows.", longRows))
		}
	} else {
		fit = t.fit(width, al)
		for i, g := range fit.grids {
			if i > 0 {
				b.WriteString("\n")
			}
			if err := g.render(b, markdown, reuse); err != nil {
				return err
			}
		}
	}
	if len(t.Details)+len(t.Notes) > 0 && markdown {
		b.WriteString("\n")
	}
	for _, n := range fit.footnotes {
		key, text, _ := strings.Cut(n, " ")
		b.WriteString(lineOf(text, "  "+key+" ", width))
	}
	switch {
	case len(fit.left) > 0:
		t.Notes = append(t.Notes, fmt.Sprintf("Left out to fit the terminal: %s; --wide shows them.", strings.Join(fit.left, ", ")))
	case fit.turned:
		t.Notes = append(t.Notes, "Turned to fit the terminal (a column per row); --wide shows the table as it is.")
	}
	for i, d := range t.Details {
		first := fmt.Sprintf("  (%d) ", i+1)
		if markdown {
			first = fmt.Sprintf("%d. ", i+1)
		}
		b.WriteString(lineOf(d, first, width))
	}
	if len(t.Details) > 0 && len(t.Notes) > 0 && markdown {
		b.WriteString("\n")
	}
	for _, n := range t.Notes {
		first := "  "
		if markdown {
			first = "- "
		}
		b.WriteString(lineOf(n, first, width))
	}
	return nil
}

// drawLong draws a table too long to fit (longRows) as tablewriter draws
// one unfitted: each cell trimmed of space, a space either side, the
// header and text left-aligned, numbers right-aligned. One pass over rows
// escapes and trims each cell into an arena (one array of bytes and the
// cells' ends: a string per cell held three times the memory) and takes
// the columns' widths and alignment (as alignments does, from the cells as
// written); a second draws the arena into b, which goes to w as it fills.
// header is escaped already; rows' cells are escaped with esc.
func drawLong(b *bytes.Buffer, w io.Writer, header []string, rows iter.Seq[[]string], esc func(string) string, markdown bool) error {
	n := len(header)
	widths, seen, text := make([]int, n), make([]bool, n), make([]bool, n)
	for c, h := range header {
		widths[c] = cellWidth(strings.TrimSpace(h))
	}
	a := arenas.Get().(*cellArena)
	defer arenas.Put(a)
	a.reset()
	// A long cell (a kernel's name) repeats over many rows: escaped and
	// measured once (up to memoCells of them).
	type escaped struct {
		s  string
		wd int
	}
	memo := map[string]escaped{}
	for r := range rows {
		for c := range n {
			s := ""
			if c < len(r) {
				s = r[c]
				if s != "" && s != "-" {
					seen[c] = true
					text[c] = text[c] || !numeric(s)
				}
			}
			long := len(s) >= memoMin && len(s) <= memoMax
			e, ok := escaped{}, false
			if long {
				e, ok = memo[s]
			}
			if !ok {
				e.s = strings.TrimSpace(esc(s))
				e.wd = cellWidth(e.s)
				if long && len(memo) < memoCells {
					memo[s] = e
				}
			}
			widths[c] = max(widths[c], e.wd)
			a.add(e.s, e.wd)
		}
	}
	bar, rule := "│", "─"
	if markdown {
		bar = "|"
	}
	border := func(left, mid, right string) {
		b.WriteString(left)
		for c, wd := range widths {
			if c > 0 {
				b.WriteString(mid)
			}
			b.WriteString(strings.Repeat(rule, wd+2))
		}
		b.WriteString(right + "\n")
	}
	// cell draws cell c, s as escaped and trimmed, wd columns wide.
	cell := func(c int, s []byte, wd int, right bool) {
		pad := widths[c] - wd
		b.WriteByte(' ')
		if right {
			spaces(b, pad)
			b.Write(s)
		} else {
			b.Write(s)
			spaces(b, pad)
		}
		b.WriteByte(' ')
		b.WriteString(bar)
	}
	if !markdown {
		border("┌", "┬", "┐")
	}
	b.WriteString(bar)
	for c := range n {
		h := strings.TrimSpace(header[c])
		cell(c, []byte(h), cellWidth(h), false)
	}
	b.WriteByte('\n')
	if markdown {
		b.WriteString("|")
		for c, wd := range widths {
			if seen[c] && !text[c] {
				b.WriteString(strings.Repeat("-", wd+1) + ":|")
			} else {
				b.WriteString(":" + strings.Repeat("-", wd+1) + "|")
			}
		}
		b.WriteByte('\n')
	} else {
		border("├", "┼", "┤")
	}
	for cells := a.cells(); ; {
		s, wd, ok := cells()
		if !ok {
			break
		}
		b.WriteString(bar)
		cell(0, s, wd, seen[0] && !text[0])
		for c := 1; c < n; c++ {
			s, wd, _ = cells()
			cell(c, s, wd, seen[c] && !text[c])
		}
		b.WriteByte('\n')
		if b.Len() >= 64<<10 {
			if _, err := b.WriteTo(w); err != nil {
				return err
			}
		}
	}
	if !markdown {
		border("└", "┴", "┘")
	}
	return nil
}

// memoMin and memoMax are the lengths of the cells drawLong escapes once
// (shorter ones, numbers, rarely repeat; a longer one could hold much
// memory), and memoCells how many it keeps.
const (
	memoMin, memoMax = 32, 1024
	memoCells        = 4096
)

// cellArena holds a long table's cells, escaped and trimmed, in order:
// each its length and width (a uvarint of the length doubled, plus one
// where a uvarint of the width follows: it differs from the length) and
// its bytes, in blocks of arenaBlock bytes
// (a cell longer has one of its own), filled one after the other. A string
// per cell held three times the memory, and one array grown by doubling
// twice.
type cellArena struct {
	blocks [][]byte
	last   int // the block being filled
}

const arenaBlock = 4 << 20

// reset empties a, keeping its blocks.
func (a *cellArena) reset() {
	for i := range a.blocks {
		a.blocks[i] = a.blocks[i][:0]
	}
	a.last = 0
}

// add appends s, wd columns wide.
func (a *cellArena) add(s string, wd int) {
	need := 2*binary.MaxVarintLen64 + len(s)
	for a.last < len(a.blocks) && cap(a.blocks[a.last])-len(a.blocks[a.last]) < need {
		if len(a.blocks[a.last]) == 0 { // too small even empty: one of its own
			a.blocks[a.last] = make([]byte, 0, need)
			break
		}
		a.last++
	}
	if a.last == len(a.blocks) {
		a.blocks = append(a.blocks, make([]byte, 0, max(arenaBlock, need)))
	}
	b := a.blocks[a.last]
	if wd == len(s) {
		b = binary.AppendUvarint(b, uint64(len(s))<<1)
	} else {
		b = binary.AppendUvarint(binary.AppendUvarint(b, uint64(len(s))<<1|1), uint64(wd))
	}
	a.blocks[a.last] = append(b, s...)
}

// cells returns a function that yields the cells in order with their
// widths, false after the last.
func (a *cellArena) cells() func() ([]byte, int, bool) {
	block, at := 0, 0
	return func() ([]byte, int, bool) {
		for block < len(a.blocks) && at == len(a.blocks[block]) {
			block, at = block+1, 0
		}
		if block == len(a.blocks) {
			return nil, 0, false
		}
		b := a.blocks[block]
		n, k := binary.Uvarint(b[at:])
		at += k
		wd := int(n >> 1)
		if n&1 != 0 {
			w, k := binary.Uvarint(b[at:])
			at += k
			wd = int(w)
		}
		s := b[at : at+int(n>>1)]
		at += int(n >> 1)
		return s, wd, true
	}
}

// arenas keeps the blocks of one long table for the next.
var arenas = sync.Pool{New: func() any { return new(cellArena) }}

// cellWidth is s's width in terminal columns, as tablewriter counts it:
// its length for ASCII.
func cellWidth(s string) int {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return twwidth.Width(s)
		}
	}
	return len(s)
}

// spaces writes n spaces to b.
func spaces(b *bytes.Buffer, n int) {
	const blank = "                                                                "
	for ; n > len(blank); n -= len(blank) {
		b.WriteString(blank)
	}
	if n > 0 {
		b.WriteString(blank[:n])
	}
}

// lineOf is one note or detail after first, wrapped to width (0: not
// wrapped), with a newline.
func lineOf(s, first string, width int) string {
	if width <= 0 {
		return first + s + "\n"
	}
	return wrapIndent(s, first, width) + "\n"
}

// render draws g with tablewriter, one table reused for every grid: each
// new one allocates a 10,240-entry cache, most of what a short command
// touches.
func (g grid) render(w io.Writer, markdown bool, reuse **tablewriter.Table) error {
	var r tw.Renderer
	if markdown {
		r = renderer.NewMarkdown()
	} else {
		r = renderer.NewBlueprint(tw.Rendition{Symbols: tw.NewSymbols(tw.StyleLight)})
	}
	al := make([]tw.Align, len(g.align))
	for i, a := range g.align {
		al[i] = tw.AlignLeft
		if a == alignRight {
			al[i] = tw.AlignRight
		}
	}
	opts := []tablewriter.Option{
		tablewriter.WithRenderer(r),
		tablewriter.WithHeaderAutoFormat(tw.Off),
		tablewriter.WithHeaderAlignment(tw.AlignLeft),
		tablewriter.WithRowAlignmentConfig(tw.CellAlignment{PerColumn: al}),
		tablewriter.WithRowAutoWrap(tw.WrapNone),
		tablewriter.WithHeaderAutoWrap(tw.WrapNone),
	}
	tab := *reuse
	if tab == nil {
		tab = tablewriter.NewTable(w, opts...)
		*reuse = tab
	} else {
		tab.Reset()
		tab.Options(opts...)
	}
	tab.Header(g.header)
	for _, row := range g.rows {
		if err := tab.Append(row); err != nil {
			return err
		}
	}
	return tab.Render()
}

// JSON writes v as indented JSON with a trailing newline. HTML characters are
// not escaped, so "<" stays readable. A view with a list as long as its
// input (listView) is written as the list's entries are encoded, never
// held whole.
func JSON(w io.Writer, v any) error {
	if lv, ok := v.(listView); ok {
		return jsonList(w, lv)
	}
	return newJSONEncoder(w, "").Encode(v)
}

func newJSONEncoder(w io.Writer, prefix string) *json.Encoder {
	enc := json.NewEncoder(w)
	enc.SetIndent(prefix, "  ")
	enc.SetEscapeHTML(false)
	return enc
}

// listView is a view with a list of an entry per input row, which may be
// a million long (an export's kernels).
type listView interface {
	// jsonList returns the view with the list empty (not nil), the list's
	// key in the view's JSON object, its length, and a maker of functions
	// that give its entries: each function is used by one goroutine, and
	// the value it returns is encoded before its next call.
	jsonList() (rest any, key string, n int, entries func() func(int) any)
}

// jsonList writes a listView as JSON writes any view, byte for byte: the
// view without its list, then each entry, encoded one at a time, in the
// empty list's place, written to w as they fill 64 KiB. Runs of entries
// are encoded on up to listWorkers goroutines at once and written in order.
func jsonList(w io.Writer, lv listView) error {
	rest, key, n, entries := lv.jsonList()
	var b bytes.Buffer
	if err := newJSONEncoder(&b, "").Encode(rest); err != nil {
		return err
	}
	head := b.String()
	mark := "\n  " + strconv.Quote(key) + ": []"
	at := strings.Index(head, mark)
	if at < 0 {
		return fmt.Errorf("reports: the view has no list %q", key)
	}
	if n == 0 {
		_, err := io.WriteString(w, head)
		return err
	}
	if _, err := io.WriteString(w, head[:at+len(mark)-1]); err != nil {
		return err
	}
	if err := listEntries(w, n, entries); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n  ]"+head[at+len(mark):])
	return err
}

// listRun is a run of a list's entries, encoded by one goroutine.
type listRun struct {
	from, to int
	b        []byte
	err      error
	done     chan struct{}
}

// listRunLen is the entries in a run; listWorkers the most goroutines
// that encode runs.
const (
	listRunLen  = 256
	listWorkers = 4
)

// encode writes entries from to to of a list, each after its comma and
// indent, as jsonList places them.
func (r *listRun) encode(entry func(int) any) {
	var compact bytes.Buffer
	enc := json.NewEncoder(&compact)
	enc.SetEscapeHTML(false)
	for i := r.from; i < r.to; i++ {
		if i > 0 {
			r.b = append(r.b, ',')
		}
		r.b = append(r.b, "\n    "...)
		v := entry(i)
		if b, ok := appendEntry(r.b, v); ok {
			r.b = b
			continue
		}
		compact.Reset()
		if r.err = enc.Encode(v); r.err != nil {
			return
		}
		r.b = indent(r.b, compact.Bytes()[:compact.Len()-1], "    ") // less the encoder's newline
	}
}

// indent appends compact JSON (as encoding/json writes it: no space
// outside strings) to b as an encoder with SetIndent(prefix, "  ") writes
// it, in one pass over the bytes (the encoder's own indenting runs its
// scanner over each byte, a third of a long list's time), copying the
// runs between the bytes it indents after whole.
func indent(b, js []byte, prefix string) []byte {
	depth := 0
	line := func() {
		b = append(b, '\n')
		b = append(b, prefix...)
		for range depth {
			b = append(b, "  "...)
		}
	}
	from := 0 // js[from:i] is still to be copied
	for i := 0; i < len(js); i++ {
		switch c := js[i]; c {
		case '"':
			i++
			for i < len(js) && js[i] != '"' {
				if js[i] == '\\' {
					i++
				}
				i++
			}
		case '{', '[':
			if i+1 < len(js) && (js[i+1] == '}' || js[i+1] == ']') {
				i++
				continue
			}
			b = append(b, js[from:i+1]...)
			from = i + 1
			depth++
			line()
		case '}', ']':
			b = append(b, js[from:i]...)
			from = i
			depth--
			line()
		case ',':
			b = append(b, js[from:i+1]...)
			from = i + 1
			line()
		case ':':
			b = append(b, js[from:i]...)
			b = append(b, ": "...)
			from = i + 1
		}
	}
	return append(b, js[from:]...)
}

// listEntries writes a list's n entries to w, encoded in runs on up to
// listWorkers goroutines (as many as the processors allow) and written in
// order as each run is done.
func listEntries(w io.Writer, n int, entries func() func(int) any) error {
	workers := min(runtime.GOMAXPROCS(0), listWorkers)
	if workers < 2 || n <= listRunLen {
		r := listRun{from: 0, to: n}
		r.encode(entries())
		if r.err != nil {
			return r.err
		}
		_, err := w.Write(r.b)
		return err
	}
	stop := make(chan struct{})
	defer close(stop)
	todo := make(chan *listRun)
	inOrder := make(chan *listRun, 2*workers) // runs handed out, in order: at most this many in flight
	free := make(chan []byte, 2*workers+2)    // the arrays of runs written, for runs to come
	for range workers {
		entry := entries()
		go func() {
			for r := range todo {
				r.encode(entry)
				close(r.done)
			}
		}()
	}
	go func() {
		defer close(todo)
		defer close(inOrder)
		for from := 0; from < n; from += listRunLen {
			r := &listRun{from: from, to: min(from+listRunLen, n), done: make(chan struct{})}
			select {
			case r.b = <-free:
			default:
			}
			select {
			case inOrder <- r:
			case <-stop:
				return
			}
			select {
			case todo <- r:
			case <-stop:
				return
			}
		}
	}()
	for r := range inOrder {
		<-r.done
		if r.err != nil {
			return r.err
		}
		if _, err := w.Write(r.b); err != nil {
			return err
		}
		select {
		case free <- r.b[:0]:
		default:
		}
	}
	return nil
}
