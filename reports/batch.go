package reports

import (
	"strconv"
	"strings"
)

// inputCells starts a batch row's table cells: its input cells under the
// header (a short row's missing cells empty), with room for the extra
// result columns.
func inputCells(header, cells []string, extra int) []string {
	out := make([]string, len(header), len(header)+extra)
	copy(out, cells)
	return out
}

// inputJSON starts a batch row's JSON object: its input cells under the
// header's keys (whole numbers as numbers, a short row's missing cells
// null) and its error (null when it has none).
func inputJSON(header, cells []string, err error) map[string]any {
	o := make(map[string]any, len(header)+1)
	for i, h := range header {
		if i >= len(cells) {
			o[h] = nil
			continue
		}
		if v, err := strconv.ParseInt(strings.TrimSpace(cells[i]), 10, 64); err == nil {
			o[h] = v
		} else {
			o[h] = cells[i]
		}
	}
	o["error"] = nil
	if err != nil {
		o["error"] = err.Error()
	}
	return o
}
