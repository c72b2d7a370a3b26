package reports

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/gpucalc/gpucalc/chart"
	"github.com/gpucalc/gpucalc/devices"
	"github.com/gpucalc/gpucalc/model"
	"github.com/gpucalc/gpucalc/roofline"
)

// ModelTables renders the tables of 'gpucalc model' for the model named name:
// the devices side by side when there are several, else the summary on the
// one device (origin says where it came from when not named) and, with
// ops, every op of the prefill and decode steps.
func ModelTables(name string, q model.Request, rs []model.Report, origin string, ops bool) []Table {
	cache := "sliding-window layers cache their window"
	if q.FullCache {
		cache = "every layer caches the whole context"
	}
	shape := fmt.Sprintf("batch %d, prompt %d, decode at %d tokens of context, tp %d; weights %s, activations %s, KV %s; %s (flags: --batch --prompt --ctx --gen --tp --weights --dtype --kv --full-cache)",
		q.Batch, q.Prompt, q.Ctx, q.TP, q.Weights, q.Activations, q.KV, cache)
	notes := []string{"Shape: " + shape + ".", q.Engine.Assumes()}
	if len(rs) > 1 {
		t := ModelCompare(rs)
		t.Title = name + " side by side"
		t.Notes = notes
		return []Table{t}
	}
	r := rs[0]
	title := name + " on " + r.Device
	if origin != "" {
		title += " (" + origin + ")"
	}
	tables := []Table{ModelSummary(title, r, notes)}
	if ops && r.Fits() {
		tables = append(tables, ModelOps("Prefill ops ("+strconv.FormatInt(q.Batch, 10)+" × "+strconv.FormatInt(q.Prompt, 10)+" tokens)", *r.Prefill),
			ModelOps("Decode ops (batch "+strconv.FormatInt(q.Batch, 10)+", "+strconv.FormatInt(q.Ctx, 10)+" tokens of context)", *r.Decode))
	}
	return tables
}

// ModelDecodeChart is 'gpucalc model --plot': the decode step's ops on each
// device's roofline (devs[i] is rs[i]'s device), of the devices it fits
// on; it is an error when it fits on none.
func ModelDecodeChart(name string, q model.Request, devs []devices.Device, rs []model.Report) (chart.Roofline, error) {
	var pts [][]roofline.Point
	var fit []devices.Device
	for i, r := range rs {
		if r.Fits() {
			pts, fit = append(pts, r.Decode.Points), append(fit, devs[i])
		}
	}
	if len(fit) == 0 {
		return chart.Roofline{}, fmt.Errorf("no chart: %s does not fit on %s at tp %d, so its decode step has no times (raise --tp)", name, deviceNames(devs), q.TP)
	}
	return RooflineChartOf(fmt.Sprintf("%s decode step: batch %d, %d tokens of context", name, q.Batch, q.Ctx), fit, pts), nil
}

// deviceNames lists devices' names: "L4" or "L4, T4".
func deviceNames(devs []devices.Device) string {
	var names []string
	for _, d := range devs {
		names = append(names, d.Name)
	}
	return strings.Join(names, ", ")
}
