package reports

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/gpucalc/gpucalc/escape"
	"github.com/olekukonko/tablewriter"
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
			err = t.grid(&buf, true, 0, &tab)
		case FormatTable:
			err = t.grid(&buf, false, width, &tab)
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
	for _, row := range append([][]string{t.Header}, t.Rows...) {
		rec = rec[:0]
		for _, c := range row {
			rec = append(rec, escape.CSV(asciiGlyphs.Replace(c)))
		}
		if err := cw.Write(rec); err != nil {
			return err
		}
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

// grid writes t as a Markdown table, or as a table drawn in box characters
// fitted to width columns (fit; 0 for no limit).
func (t Table) grid(b *bytes.Buffer, markdown bool, width int, reuse **tablewriter.Table) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("reports: rendering table %q: %v", t.Title, r)
		}
	}()
	al := t.alignments() // of the cells as written: "&lt;0.1%" is a number
	if markdown {
		t = t.escaped(escape.Markdown)
	} else {
		t = t.escaped(escape.Terminal)
	}
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
	fit := t.fit(width, al)
	for i, g := range fit.grids {
		if i > 0 {
			b.WriteString("\n")
		}
		if err := g.render(b, markdown, reuse); err != nil {
			return err
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
// not escaped, so "<" stays readable.
func JSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}
