package reports

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/gpucalc/gpucalc/escape"
	"github.com/gpucalc/gpucalc/occupancy"
)

// OccupancyBatch writes batch results row by row: CSV streams (written by
// hand: a million rows must take well under two seconds); JSON streams an
// array of objects (numbers as numbers, empty cells as null); table and
// Markdown collect the rows and render them at Flush.
type OccupancyBatch struct {
	w      io.Writer
	f      Format
	width  int
	header []string
	rec    []string
	buf    []byte
	table  Table
	rows   int
}

// NewOccupancyBatch starts the output: the input's columns, then
// BatchColumns. width is the table's (see Render).
func NewOccupancyBatch(w io.Writer, f Format, width int, inputHeader []string) (*OccupancyBatch, error) {
	b := &OccupancyBatch{w: w, f: f, width: width, header: append(append([]string(nil), inputHeader...), BatchColumns...)}
	switch f {
	case FormatCSV:
		for i, h := range b.header {
			if i > 0 {
				b.buf = append(b.buf, ',')
			}
			b.buf = appendCSV(b.buf, h)
		}
		_, err := w.Write(append(b.buf, '\n'))
		return b, err
	case FormatJSON:
		_, err := io.WriteString(w, "[")
		return b, err
	case FormatTable, FormatMarkdown:
		b.table.Header = b.header
		b.table.Optional = []string{"blocks_by_warps", "blocks_by_regs", "blocks_by_smem", "blocks_by_blocks", "regs_per_block", "smem_per_block"}
		return b, nil
	}
	return nil, fmt.Errorf("reports: format %q is not a batch format", f)
}

func limitCell(n int) string {
	if n == occupancy.Unlimited {
		return ""
	}
	return strconv.Itoa(n)
}

// Write writes one row: the input fields (padded or cut to the header's n
// columns), then the result, or only err in the error column. A result with a
// reason for 0 blocks has the reason there.
func (b *OccupancyBatch) Write(fields []string, n int, r occupancy.Result, err error) error {
	if err == nil {
		err = r.Err
	}
	b.rows++
	if b.f == FormatCSV {
		return b.csvRow(fields, n, r, err)
	}
	b.rec = append(b.rec[:0], fields...)
	for len(b.rec) < n {
		b.rec = append(b.rec, "")
	}
	b.rec = b.rec[:n]
	if err != nil {
		for range BatchColumns[:len(BatchColumns)-1] {
			b.rec = append(b.rec, "")
		}
		b.rec = append(b.rec, err.Error())
	} else {
		b.rec = append(b.rec, strconv.Itoa(r.Blocks), strconv.Itoa(r.Warps), strconv.FormatFloat(r.Occupancy(), 'f', 4, 64), r.Limiters.String(),
			limitCell(r.ByWarps), limitCell(r.ByRegisters), limitCell(r.BySharedMemory), limitCell(r.ByBlocks),
			strconv.Itoa(r.RegsPerBlock), strconv.Itoa(r.SmemPerBlock), reasonText(r))
	}
	if b.f == FormatJSON {
		return b.jsonRow()
	}
	b.table.Rows = append(b.table.Rows, append([]string(nil), b.rec...))
	return nil
}

func reasonText(r occupancy.Result) string {
	if r.Reason != nil {
		return r.Reason.Error()
	}
	return ""
}

// csvRow writes one CSV record straight into a buffer, quoting as
// encoding/csv does: a million rows must take well under two seconds.
func (b *OccupancyBatch) csvRow(fields []string, n int, r occupancy.Result, err error) error {
	b.buf = b.buf[:0]
	for i := range n {
		if i > 0 {
			b.buf = append(b.buf, ',')
		}
		if i < len(fields) {
			b.buf = appendCSV(b.buf, fields[i])
		}
	}
	if err != nil {
		b.buf = append(b.buf, ",,,,,,,,,,,"...)
		b.buf = appendCSV(b.buf, err.Error())
	} else {
		num := func(v int) {
			b.buf = append(b.buf, ',')
			if v != occupancy.Unlimited {
				b.buf = strconv.AppendInt(b.buf, int64(v), 10)
			}
		}
		num(r.Blocks)
		num(r.Warps)
		b.buf = append(b.buf, ',')
		b.buf = strconv.AppendFloat(b.buf, r.Occupancy(), 'f', 4, 64)
		b.buf = append(b.buf, ',')
		b.buf = append(b.buf, r.Limiters.String()...)
		num(r.ByWarps)
		num(r.ByRegisters)
		num(r.BySharedMemory)
		num(r.ByBlocks)
		num(r.RegsPerBlock)
		num(r.SmemPerBlock)
		b.buf = append(b.buf, ',')
		b.buf = appendCSV(b.buf, reasonText(r))
	}
	b.buf = append(b.buf, '\n')
	_, err = b.w.Write(b.buf)
	return err
}

// appendCSV appends one field, neutralised as Table's CSV is
// (escape.CSV) and quoted where encoding/csv would quote it.
func appendCSV(buf []byte, f string) []byte {
	f = escape.CSV(f)
	quote := f != "" && (f[0] == ' ' || f[0] == '\t' || f == `\.`)
	for i := 0; i < len(f) && !quote; i++ {
		c := f[i]
		quote = c == ',' || c == '"' || c == '\r' || c == '\n'
	}
	if !quote {
		return append(buf, f...)
	}
	buf = append(buf, '"')
	buf = append(buf, strings.ReplaceAll(f, `"`, `""`)...)
	return append(buf, '"')
}

func (b *OccupancyBatch) jsonRow() error {
	var s strings.Builder
	if b.rows > 1 {
		s.WriteByte(',')
	}
	s.WriteString("\n  {")
	for i, h := range b.header {
		if i > 0 {
			s.WriteString(", ")
		}
		s.WriteString(strconv.Quote(h))
		s.WriteString(": ")
		v := b.rec[i]
		if v != "" && (v[0] == '-' || v[0] >= '0' && v[0] <= '9') && json.Valid([]byte(v)) {
			s.WriteString(v)
		} else if v == "" {
			s.WriteString("null")
		} else {
			q, _ := json.Marshal(v)
			s.Write(q)
		}
	}
	s.WriteByte('}')
	_, err := io.WriteString(b.w, s.String())
	return err
}

// Flush ends the output.
func (b *OccupancyBatch) Flush() error {
	switch b.f {
	case FormatCSV:
		return nil
	case FormatJSON:
		end := "\n]\n"
		if b.rows == 0 {
			end = "]\n"
		}
		_, err := io.WriteString(b.w, end)
		return err
	}
	return Render(b.w, b.f, b.width, b.table)
}
