package roofline

import (
	"fmt"

	"github.com/gpucalc/gpucalc/ops"
)

// RunBatch prices every row of a batch (ops.ReadBatch) in order: pts[i] is
// row i's point, with its measured time; a row that fails gets its error
// (with its line) and a zero point, and the batch goes on. good are the
// points of the rows priced, for a chart.
func (m *Model) RunBatch(b *ops.Batch) (pts, good []Point) {
	pts = make([]Point, len(b.Rows))
	// A Point is large: growing good row by row would copy it over and
	// over (most of a 100,000-row batch's time).
	good = make([]Point, 0, len(b.Rows))
	for i := range b.Rows {
		row := &b.Rows[i]
		if row.Err != nil {
			continue
		}
		p, err := m.Analyze(row.Op)
		if err != nil {
			row.Err = fmt.Errorf("line %d: %w", row.Line, err)
			continue
		}
		p.Measured = row.Measured
		pts[i] = p
		good = append(good, p)
	}
	return pts, good
}
