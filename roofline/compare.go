package roofline

import (
	"errors"
	"fmt"
	"strings"

	"github.com/gpucalc/gpucalc/ops"
)

// Priced is a workload priced on one device: its points in the workload's
// order and their totals; or, side by side with devices that can run it,
// why this one cannot (Unsupported, with the whole message in Err), and no
// points.
type Priced struct {
	Model       *Model
	Points      []Point
	Summary     Summary
	Unsupported *UnsupportedError
	Err         error
}

// Compare prices w on each model. Side by side, a device that cannot run
// one of the ops (an UnsupportedError) gets a Priced that says why and the
// others answer; any other error, an unsupported op on a single device, or
// no device able to run w at all, is an error.
func Compare(ms []*Model, w ops.Workload) ([]Priced, error) {
	out := make([]Priced, len(ms))
	var gaps []string
	for i, m := range ms {
		pts, err := m.AnalyzeWorkload(w)
		var ue *UnsupportedError
		if err != nil && (len(ms) == 1 || !errors.As(err, &ue)) {
			return nil, err
		}
		if err != nil {
			out[i] = Priced{Model: m, Points: []Point{}, Unsupported: ue, Err: err}
			gaps = append(gaps, err.Error())
			continue
		}
		out[i] = Priced{Model: m, Points: pts, Summary: Summarize(pts)}
	}
	if len(gaps) == len(ms) {
		return nil, fmt.Errorf("no device can run the workload: %s", strings.Join(gaps, "; "))
	}
	return out, nil
}
