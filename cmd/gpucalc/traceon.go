package main

import (
	"fmt"
	"strings"

	"github.com/gpucalc/gpucalc/devices"
	"github.com/gpucalc/gpucalc/project"
	"github.com/gpucalc/gpucalc/reports"
	"github.com/gpucalc/gpucalc/trace"
	"github.com/spf13/cobra"
)

// traceSectionNeeds are the CSV sections only some 'trace' runs have: --on's
// projection, and the analysis of several ranks' traces.
var traceSectionNeeds = map[string]string{"projected_ops": "--on", "projected_bounds": "--on", "projected_summary": "--on",
	"ranks": "one trace per rank (several files or a folder)", "collectives": "one trace per rank (several files or a folder)",
	"slowest": "one trace per rank (several files or a folder)"}

// addOnFlag registers --on, the devices 'trace' projects the trace to.
func addOnFlag(f *factory, cmd *cobra.Command, opts *traceOptions) {
	cmd.Flags().StringSliceVar(&opts.on, "on", nil, "project every kernel to these GPUs: comma-separated `names` (the source is the trace's GPU, or --device)")
	_ = cmd.RegisterFlagCompletionFunc("on", f.completeDevices)
	opts.onFlag = cmd.Flags().Lookup("on")
}

// onGiven reports whether --on was given, names or none: --on ” is an
// error, never the single-GPU analysis.
func (opts *traceOptions) onGiven() bool {
	return len(opts.on) > 0 || opts.onFlag != nil && opts.onFlag.Changed
}

// projectTrace projects the analysed trace from its device (source) to
// the --on devices; nil without --on.
func projectTrace(opts *traceOptions, tr *trace.Trace, a *trace.Analysis, source devices.Device, arch devices.Arch) (*project.Result, error) {
	if !opts.onGiven() {
		return nil, nil
	}
	if len(opts.on) == 0 {
		return nil, usagef("--on '': give one or more comma-separated GPU names from 'gpucalc devices'")
	}
	var targets []devices.Device
	seen := map[string]string{}
	for _, n := range opts.on {
		if strings.TrimSpace(n) == "" {
			return nil, usagef("--on %s: an empty name; give comma-separated GPU names from 'gpucalc devices'", strings.Join(opts.on, ","))
		}
		d, err := opts.f.Lookup(n)
		if err != nil {
			return nil, usageError{fmt.Errorf("--on: %w", err)}
		}
		if prev, ok := seen[d.Name]; ok {
			return nil, usagef("--on names %s twice (%q and %q)", d.Name, prev, n)
		}
		seen[d.Name] = n
		targets = append(targets, d)
	}
	r, err := project.Project(tr, a, source, arch, targets)
	if err != nil {
		return nil, err
	}
	return &r, nil
}

// traceRecords are the trace's CSV sections, and the projection's.
func traceRecords(a trace.Analysis, p *project.Result) []reports.Table {
	ts := reports.TraceRecords(a)
	if p != nil {
		ts = append(ts, reports.ProjectionRecords(*p)...)
	}
	return ts
}
