// Package reports renders gpucalc's results: tables (tablewriter), Markdown,
// CSV, JSON and charts (gonum/plot). It is the only package that imports those
// libraries, and it turns their panics into errors.
package reports

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"strings"

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

func (t Table) alignments() []tw.Align {
	al := make([]tw.Align, len(t.Header))
	for c := range t.Header {
		al[c] = tw.AlignRight
		any := false
		for _, r := range t.Rows {
			if c < len(r) && r[c] != "" && r[c] != "-" {
				any = true
				if !numeric(r[c]) {
					al[c] = tw.AlignLeft
					break
				}
			}
		}
		if !any {
			al[c] = tw.AlignLeft
		}
	}
	return al
}

// Render writes tables in format f (table, markdown or csv). Tables follow
// one another, separated by a blank line; CSV writes only header and rows.
func Render(w io.Writer, f Format, tables ...Table) error {
	// One tablewriter table serves every grid: each new one allocates a
	// 10,240-entry cache, most of what a short command touches.
	var tab *tablewriter.Table
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
			err = t.grid(w, true, &tab)
		case FormatTable:
			err = t.grid(w, false, &tab)
		default:
			err = fmt.Errorf("reports: format %q is not a table format", f)
		}
		if err != nil {
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
			rec = append(rec, asciiGlyphs.Replace(c))
		}
		if err := cw.Write(rec); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

func (t Table) grid(w io.Writer, markdown bool, reuse **tablewriter.Table) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("reports: rendering table %q: %v", t.Title, r)
		}
	}()
	if t.Title != "" {
		title := t.Title
		if markdown {
			title = "### " + title
		}
		if _, err := fmt.Fprintf(w, "%s\n", title); err != nil {
			return err
		}
		if markdown {
			fmt.Fprintln(w)
		}
	}
	var r tw.Renderer
	if markdown {
		r = renderer.NewMarkdown()
	} else {
		r = renderer.NewBlueprint(tw.Rendition{Symbols: tw.NewSymbols(tw.StyleLight)})
	}
	opts := []tablewriter.Option{
		tablewriter.WithRenderer(r),
		tablewriter.WithHeaderAutoFormat(tw.Off),
		tablewriter.WithHeaderAlignment(tw.AlignLeft),
		tablewriter.WithRowAlignmentConfig(tw.CellAlignment{PerColumn: t.alignments()}),
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
	tab.Header(t.Header)
	for _, row := range t.Rows {
		if err := tab.Append(row); err != nil {
			return err
		}
	}
	if err := tab.Render(); err != nil {
		return err
	}
	if len(t.Details)+len(t.Notes) > 0 && markdown {
		fmt.Fprintln(w)
	}
	for i, d := range t.Details {
		item := fmt.Sprintf("  (%d) %s\n", i+1, d)
		if markdown {
			item = fmt.Sprintf("%d. %s\n", i+1, d)
		}
		if _, err := io.WriteString(w, item); err != nil {
			return err
		}
	}
	if len(t.Details) > 0 && len(t.Notes) > 0 && markdown {
		fmt.Fprintln(w)
	}
	if len(t.Notes) > 0 {
		for _, n := range t.Notes {
			prefix := "  "
			if markdown {
				prefix = "- "
			}
			if _, err := fmt.Fprintf(w, "%s%s\n", prefix, n); err != nil {
				return err
			}
		}
	}
	return nil
}

// JSON writes v as indented JSON with a trailing newline. HTML characters are
// not escaped, so "<" stays readable.
func JSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}
