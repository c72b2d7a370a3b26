package web

import (
	"errors"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"strings"

	"github.com/gpucalc/gpucalc/chart"
	"github.com/gpucalc/gpucalc/devices"
	"github.com/gpucalc/gpucalc/occupancy"
	"github.com/gpucalc/gpucalc/reports"
	"github.com/gpucalc/gpucalc/units"
)

// occupancyDefaults are the occupancy form's defaults: the CLI's, on the
// CLI's default device.
var occupancyDefaults = map[string]string{
	"device": "h100", "threads": "256", "regs": "32", "static_smem": "0", "dynamic_smem": "0",
	"carveout": "default", "cluster": "0", "barriers": "1", "max_threads": "0",
}

// occupancyFlags are the CLI's flag names where the form's differ, so that
// a command line turns into a URL: ?smem=48K is --smem 48K.
var occupancyFlags = map[string]string{
	"smem": "dynamic_smem", "static-smem": "static_smem", "max-threads": "max_threads", "arch": "device",
}

// occupancyQuery reads the occupancy form from the URL, under the form's
// names or the CLI's flag names (the form's win when both are given).
func occupancyQuery(r *http.Request) map[string]string {
	q := query(r, occupancyDefaults)
	u := r.URL.Query()
	for flag, field := range occupancyFlags {
		if u.Has(flag) && !u.Has(field) {
			q[field] = u.Get(flag)
		}
		delete(q, flag)
	}
	return q
}

func (s *server) occupancyPage(w http.ResponseWriter, r *http.Request) {
	q := occupancyQuery(r)
	p := page{Title: "Occupancy", Nav: "occupancy", Q: q}
	chosen, _ := s.Catalog.Lookup(q["device"])
	for _, d := range s.Catalog.Devices() {
		if _, err := d.Limits(); err != nil {
			continue // not an NVIDIA GPU: no occupancy model
		}
		p.Devices = append(p.Devices, option{deviceKey(d), d.Name + " (" + d.CC.SM() + ")", d.Name == chosen.Name})
	}
	for _, a := range devices.Archs() {
		sel := false
		if cc, err := devices.ParseCC(q["device"]); err == nil {
			sel = cc == a.CC
		}
		p.Archs = append(p.Archs, option{a.CC.SM(), a.CC.SM() + " (" + a.Family + ")", sel})
	}
	s.render(w, "occupancy.html", p)
}

// occupancyInput is the parsed occupancy form.
type occupancyInput struct {
	target   occupancy.Target
	kernel   occupancy.Kernel
	launch   occupancy.Launch
	cluster  int
	defaults []string
}

// parseOccupancy reads the form; a field at its default is treated as not
// given (as a flag left out), so the command line leaves it out too.
func (s *server) parseOccupancy(q map[string]string) (occupancyInput, fieldErrors) {
	errs := fieldErrors{}
	var in occupancyInput
	dev := strings.TrimSpace(q["device"])
	var err error
	if cc, ccErr := devices.ParseCC(dev); ccErr == nil {
		var arch devices.Arch
		if arch, err = devices.ArchFor(cc); err == nil {
			in.target = occupancy.ArchTarget(arch)
		}
	} else {
		var d devices.Device
		if d, err = s.device(dev); err == nil {
			in.target, err = occupancy.DeviceTarget(d, "")
		}
	}
	if err != nil {
		errs.add("device", err)
	}
	// Ranges are checked by the calculation, which names the limits of
	// the architecture; here only what it cannot take.
	integer := func(name string) int {
		v, err := strconv.Atoi(strings.TrimSpace(q[name]))
		switch {
		case err != nil || v > math.MaxInt32:
			errs.add(name, fmt.Errorf("%q is not a whole number of a sensible size", q[name]))
		case v < 0:
			errs.add(name, errors.New("must not be negative"))
		}
		return v
	}
	sizeOf := func(name string) int {
		b, err := units.ParseSize(q[name])
		switch {
		case err != nil:
			errs.add(name, err)
		case b > math.MaxInt32:
			errs.add(name, errors.New("far larger than any GPU's shared memory"))
		}
		return int(b)
	}
	in.launch.Threads = integer("threads")
	in.kernel.Regs = integer("regs")
	in.kernel.StaticSmem = sizeOf("static_smem")
	in.launch.DynamicSmem = sizeOf("dynamic_smem")
	in.kernel.Barriers = integer("barriers")
	in.kernel.MaxThreads = integer("max_threads")
	in.cluster = integer("cluster")
	if in.launch.Carveout, err = occupancy.ParseCarveout(q["carveout"]); err != nil {
		errs.add("carveout", err)
	}
	for _, name := range []string{"threads", "regs"} {
		if strings.TrimSpace(q[name]) == occupancyDefaults[name] {
			in.defaults = append(in.defaults, "--"+name+" "+occupancyDefaults[name])
		}
	}
	return in, errs
}

// resultField names the field an invalid input of Calculate is about.
var resultField = []struct {
	err   error
	field string
}{
	{occupancy.ErrBlockSize, "threads"},
	{occupancy.ErrRegisters, "regs"},
	{occupancy.ErrNegative, "dynamic_smem"},
	{occupancy.ErrStaticSmem, "static_smem"},
	{occupancy.ErrCarveout, "carveout"},
	{occupancy.ErrBarriers, "barriers"},
	{occupancy.ErrMaxThreads, "max_threads"},
}

// occupancyCLI is the command line that prints the same answer.
func (s *server) occupancyCLI(q map[string]string, in occupancyInput) string {
	args := []string{"gpucalc", "occupancy"}
	flag := func(name, v string) { args = append(args, "--"+name, shellQuote(v)) }
	if in.target.Device != "" {
		d, _ := s.Catalog.Lookup(in.target.Device)
		flag("device", deviceKey(d))
	} else {
		flag("arch", in.target.CC.SM())
	}
	for _, f := range []struct{ field, flag string }{{"threads", "threads"}, {"regs", "regs"}} {
		if v := strings.TrimSpace(q[f.field]); v != occupancyDefaults[f.field] {
			flag(f.flag, v)
		}
	}
	if total := in.kernel.StaticSmem + in.launch.DynamicSmem; total != 0 {
		flag("smem", sizeFlag(total))
	}
	if in.kernel.StaticSmem != 0 {
		flag("static-smem", sizeFlag(in.kernel.StaticSmem))
	}
	if !in.launch.Carveout.IsDefault() {
		flag("carveout", strings.TrimSpace(q["carveout"]))
	}
	if in.kernel.Barriers != 1 {
		flag("barriers", strconv.Itoa(in.kernel.Barriers))
	}
	if in.kernel.MaxThreads != 0 {
		flag("max-threads", strconv.Itoa(in.kernel.MaxThreads))
	}
	if in.cluster != 0 {
		flag("cluster", strconv.Itoa(in.cluster))
	}
	if s.Datasheet {
		args = append(args, "--datasheet")
	}
	return strings.Join(args, " ")
}

// occupancy answers the occupancy form: the view of `gpucalc occupancy
// --format json`, its tables, and the three sweeps as charts.
func (s *server) occupancy(q map[string]string) (answer, error) {
	in, errs := s.parseOccupancy(q)
	if len(errs) > 0 {
		return answer{Errors: errs}, nil
	}
	t, k, l := in.target, in.kernel, in.launch
	res := occupancy.Calculate(t.Arch, k, l)
	for _, rf := range resultField {
		if errors.Is(res.Err, rf.err) {
			errs.add(rf.field, res.Err)
		}
	}
	if res.Err != nil && len(errs) == 0 {
		errs.add("", res.Err)
	}
	if errors.Is(res.Reason, occupancy.ErrSmemPerBlock) {
		errs.add("dynamic_smem", fmt.Errorf("%s in all: %w (%s on cc %s)", units.FormatSize(int64(k.StaticSmem+l.DynamicSmem)), res.Reason, units.FormatSize(int64(t.Arch.SmemPerBlockOptin)), t.CC))
	}
	var clusters *occupancy.Clusters
	if in.cluster != 0 && len(errs) == 0 {
		if t.SMs == 0 {
			errs.add("cluster", errors.New("clusters are counted on the whole GPU: pick a device, not an architecture"))
		} else if c, err := occupancy.ActiveClusters(t.Arch, res, in.cluster, t.SMs, t.GPCs); err != nil {
			errs.add("cluster", err)
		} else {
			clusters = &c
		}
	}
	cli := s.occupancyCLI(q, in)
	if len(errs) > 0 {
		return answer{Errors: errs, CLI: cli}, nil
	}
	cliffs, err := occupancy.FindCliffs(t.Arch, k, l)
	if err != nil {
		return answer{}, err
	}
	rep := reports.NewOccupancy(t, k, l, in.defaults, res, nil, &cliffs, clusters)
	a := answer{View: rep, Tables: tablesOf(rep.Tables()), CLI: cli}
	n, err := occupancy.SweepAround(t.Arch, k, l)
	if err != nil {
		return answer{}, err
	}
	c := reports.OccupancyChart(t, k, l, n)
	fig, err := newFigure("occupancy", c.Title, c, chart.Size{})
	if err != nil {
		return answer{}, err
	}
	a.Charts = []figure{fig}
	return a, nil
}

// sizeFlag writes a size as a flag value: 48K when a whole number of KiB,
// else bytes.
func sizeFlag(b int) string {
	if b%1024 == 0 {
		return strconv.Itoa(b/1024) + "K"
	}
	return strconv.Itoa(b)
}
