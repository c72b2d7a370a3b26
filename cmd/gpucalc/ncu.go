package main

import (
	"fmt"
	"io"

	"github.com/gpucalc/gpucalc/chart"
	"github.com/gpucalc/gpucalc/devices"
	"github.com/gpucalc/gpucalc/ncu"
	"github.com/gpucalc/gpucalc/reports"
	"github.com/spf13/cobra"
)

type ncuOptions struct {
	f       *factory
	devices deviceFlags
	file    string
	chart   chartFlags
	section sectionFlag
}

func newCmdNCU(f *factory, runF func(*ncuOptions) error) *cobra.Command {
	opts := &ncuOptions{f: f}
	cmd := &cobra.Command{
		Use:   "ncu FILE|-",
		Short: "Put kernels profiled by Nsight Compute against the device's ceilings",
		Long: `Read an Nsight Compute export and show, per profiled kernel: its short name,
block and grid, duration, achieved FLOP/s by precision (FMA = 2 FLOPs; tensor
cores from the tensor-operation counters), DRAM, L2 and L1 bytes with the
arithmetic intensity at each level, the share of the device's ceilings
reached, and occupancy: Nsight Compute's theoretical and achieved figures
beside the one gpucalc computes from the launch statistics.

The export is what 'ncu --csv --page raw' prints; redirect it to a file or pipe
it in with '-'. Lines before the CSV header (==PROF==, the program's output)
are skipped. The full set (--set full) has every metric used; with fewer
sections, what is missing is listed. The device comes from the export's
device name; --device overrides it. Shares are of the catalog's dense
datasheet peaks and bandwidths (decimal: 1 TB/s = 1e12 B/s).`,
		Example: `  ncu --set full --csv --page raw python train.py > profile.csv
  gpucalc ncu profile.csv
  ncu --import report.ncu-rep --csv --page raw | gpucalc ncu - --format json
  gpucalc ncu profile.csv --device h100 --format markdown
  gpucalc ncu profile.csv --format csv --section memory
  gpucalc ncu profile.csv --plot kernels.png`,
		Args: args(cobra.ExactArgs(1)),
		RunE: func(_ *cobra.Command, argv []string) error {
			opts.file = argv[0]
			return execute(opts, runF, ncuRun)
		},
	}
	f.addMeasuredDeviceFlag(cmd, &opts.devices, "export")
	f.addChartFlags(cmd, &opts.chart, "a roofline chart", chart.DefaultSize)
	f.addSectionFlag(cmd, &opts.section, nil, "kernels", "compute", "memory", "occupancy")
	return cmd
}

func ncuRun(opts *ncuOptions) error {
	f := opts.f
	form, err := f.OutFormat(nil, &opts.chart)
	if err != nil {
		return err
	}
	ks, _, err := parseInput(f, opts.file, func(r io.Reader) (*ncu.Launches, error) { return ncu.ReadLaunches(r, ncu.MaxKernels) })
	if err != nil {
		return err
	}
	d, origin, err := ncuDevice(opts, ks)
	if err != nil {
		return err
	}
	as := ks.Analyze(d)
	var skipped []string // the points the chart leaves out, and why
	notes, err := opts.chart.draw(func() (chart.Chart, error) {
		c, s := reports.NCUChart(as, d)
		skipped = s
		return c, nil
	})
	if err != nil {
		return err
	}
	return f.Output(form, &opts.section, append(notes, skipped...), reports.NCUView{Device: d.Name, DeviceOrigin: origin, Kernels: as},
		func() []reports.Table { return reports.NCU(as, d.Name, origin) },
		func() []reports.Table { return reports.NCURecords(as, d.Name) })
}

// ncuDevice picks the device: --device, else the one the export names. A
// --device that contradicts the export is used, with a warning.
func ncuDevice(opts *ncuOptions, ks *ncu.Launches) (devices.Device, string, error) {
	f := opts.f
	if opts.devices.deviceSet() {
		return f.deviceOver(opts.devices, ks.DeviceNames(), "--device %s, but the export was profiled on %s: shares are of %s's ceilings")
	}
	c, err := f.Catalog()
	if err != nil {
		return devices.Device{}, "", err
	}
	d, err := ks.Device(c)
	if err != nil {
		return devices.Device{}, "", fmt.Errorf("%w; pass --device NAME (or add the GPU with --device-file)", err)
	}
	if f.datasheet {
		d = d.Datasheet()
	}
	return d, "from the export", nil
}
